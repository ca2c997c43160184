/**
 * The gate for previews (docs/previews.md "Trust"): with `previews.gate: true` and the app's `gate`, a preview's head
 * is built only once the forge's required checks on it are success (gate/: the same reads and verdict as a
 * deploy's), waiting up to the gate's `waitMs` while they are pending; a failed check, or no answer in time, fails
 * the build with why.
 */
import type { ResolvedApp } from "../config/apps.ts";
import type { StatusTarget } from "../config/forge.ts";
import { gateVerdict, shutText, waitingText } from "../gate/checks.ts";
import { readChecks } from "../gate/forges.ts";
import { gateEntries } from "../gate/stage.ts";

/** How often the checks are read again while they are pending. */
export const GATE_LOOK_MS = 5_000;
const READ_TIMEOUT_MS = 30_000;

/** Undefined when the head may be built; else why not. */
export async function previewGate(
  app: Pick<ResolvedApp, "gate">,
  target: StatusTarget | undefined,
  head: string,
  stopped: () => boolean,
  lookMs = GATE_LOOK_MS,
): Promise<string | undefined> {
  const gate = app.gate;
  if (!gate) return undefined;
  if (!target) return "previews.gate: the gate reads the forge of status: set status (provider, token)";
  const deadline = Date.now() + gate.waitMs;
  for (;;) {
    const read = await readChecks(target, head, { timeoutMs: READ_TIMEOUT_MS });
    if (!read.ok && read.fatal) return `the gate could not read the checks: ${read.error}`;
    if (read.ok) {
      const verdict = gateVerdict(gateEntries(gate), read.checks, target.context);
      if (verdict.state === "open") return undefined;
      if (verdict.state === "shut") return `the gate is shut: ${shutText(verdict)}`;
      if (Date.now() >= deadline) return `the gate did not open in time: ${waitingText(verdict)}`;
    } else if (Date.now() >= deadline) return `the gate could not read the checks: ${read.error}`;
    if (stopped()) return "the service stopped while the preview waited at the gate";
    await new Promise((resolve) => setTimeout(resolve, lookMs));
  }
}
