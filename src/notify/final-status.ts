/**
 * The state and the description (under 140 characters) of a deploy's final commit status, by how it ended: a
 * watched deploy's (docs/watch.md) says whether its watch passed, breached (with the value), or did not finish.
 */
import type { NotifyEvent } from "../config/schema-notify.ts";
import type { DeployResult } from "../types.ts";
import type { StatusState } from "./commit-status.ts";

/** The final status of a deploy that ended as `outcome`. */
export function finalStatus(result: DeployResult, outcome: NotifyEvent): [StatusState, string] {
  const seconds = `${(result.durationMs / 1000).toFixed(1)} s`;
  const why = result.error ?? `exit code ${result.run.exitCode}`;
  const { watch } = result;
  switch (outcome) {
    case "succeeded":
      // A breach not rolled back (onBreach: notify) is a failure to whoever reads the status (a gate of a next stage).
      if (watch?.breach) return ["failure", `Watch breached: ${watchValue(watch)}; not rolled back`];
      if (watch?.interrupted) return ["success", `Deployed in ${seconds}; watch not finished`];
      if (watch?.cancelled) return ["success", `Deployed in ${seconds}; watch ended by a cancel`];
      return ["success", `Deployed in ${seconds}${watch ? "; watch passed" : ""}`];
    case "cancelled":
      return ["error", "Deploy cancelled"];
    case "refused":
      // As a gate that shut always said it: the commit is not deployed here (a canary's peers read it so).
      return ["failure", `Not deployed: ${why}`];
    case "superseded":
      return ["error", `Not deployed: ${why}`];
    case "rolled_back":
      if (watch?.breach)
        return [
          "failure",
          `Watch breached: ${watchValue(watch)}; rolled back to ${result.rollback!.to.slice(0, 7)}${result.rollback!.ok ? "" : ", and the rollback failed too"}`,
        ];
      return [
        "failure",
        `Deploy failed (${why}); rolled back to ${result.rollback!.to.slice(0, 7)}${result.rollback!.ok ? "" : ", and the rollback failed too"}`,
      ];
    default:
      return ["failure", `Deploy failed after ${seconds}: ${why}`];
  }
}

/** A breach's value against its threshold (`0.12 > 0.05`), or why there was none. */
function watchValue(watch: NonNullable<DeployResult["watch"]>): string {
  if (watch.value === null) return watch.reason ?? "no value";
  if (watch.command !== undefined) return `exit code ${watch.value}`;
  return `${watch.value} ${watch.threshold !== null && watch.value < watch.threshold ? "<" : ">"} ${watch.threshold}`;
}
