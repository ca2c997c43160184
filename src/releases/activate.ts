import type { HealthCheckResult, Step } from "../types.ts";
import type { Captures } from "../steps/capture.ts";
import { healthStep } from "../steps/health.ts";
import type { ReleaseLayout } from "./files.ts";
import { markActivating, unmarkActivating } from "./recovery.ts";
import { describeFailure, type StepRun } from "../steps/script.ts";
import { scriptStep } from "../steps/script.ts";
import type { DeployContext } from "../steps/context.ts";

/** How a release went live: its activate script (when there is one) and its health check (when configured). */
export interface WentLive {
  activate?: StepRun;
  healthCheck?: HealthCheckResult;
  /** What failed, or null. */
  error: string | null;
}

/** The environment a release's scripts get: the deploy's, with where the release and `current` are. */
export function releaseEnv(
  ctx: DeployContext,
  layout: ReleaseLayout,
  release: { id: string; dir: string; commit: string },
): Record<string, string | undefined> {
  return {
    ...ctx.env,
    SERVICE_RELEASE_ID: release.id,
    SERVICE_RELEASE_PATH: release.dir,
    SERVICE_CURRENT_PATH: layout.current,
    SERVICE_COMMIT: release.commit,
  };
}

/**
 * After a switch: `activateScript` in `<path>/current`, with the run script's timeout and process-group rules,
 * then the health check there. `name` is the step its lines go under (`release`, or `rollback` when switching back).
 */
export async function goLive(
  ctx: DeployContext,
  layout: ReleaseLayout,
  release: { id: string; dir: string; commit: string },
  name: Step,
  into: Captures,
): Promise<WentLive> {
  const { config, run } = ctx;
  const env = releaseEnv(ctx, layout, release);
  let activate: StepRun | undefined;
  if (config.activateScript?.trim()) {
    run.step(name, `activating release ${release.id} in ${layout.current}`);
    markActivating(layout, release.id, run.id);
    try {
      activate = await scriptStep(ctx, name, run.output(name, into), {
        cwd: layout.current,
        script: config.activateScript,
        env,
      });
    } finally {
      unmarkActivating(layout);
    }
    if (activate.exitCode !== 0)
      return {
        activate,
        error: `activate script failed: ${describeFailure(activate) ?? `exit code ${activate.exitCode}`}`,
      };
  }
  if (ctx.cancelled()) return { activate, error: null };
  const healthCheck = await healthStep({ ...ctx, env }, layout.current);
  return { activate, healthCheck, error: healthCheck && !healthCheck.ok ? healthCheck.error : null };
}
