/**
 * The build slot of a deploy (docs/deploy-control.md "Build slots"): taken after the queue, the checkout's check, the
 * gate and the freeze check, before anything heavy (the pull, the build, activate, health, rollback), and given back
 * when the deploy ends, after its pruning. A wait is said, kept in the running record (`waiting: "slot"`), and ended by a cancel.
 */
import { defaultSlots } from "../config/schema-resolved.ts";
import { slotText, takeSlot } from "../queue/slots.ts";
import type { DeployContext } from "../steps/context.ts";
import { deployGroups, type GroupRecorder } from "../system/groups.ts";

/** Two recorders hearing the same commands. */
const both = (a: GroupRecorder, b: GroupRecorder): GroupRecorder => ({
  started: (group) => {
    a.started(group);
    b.started(group);
  },
  ended: (pgid) => {
    a.ended(pgid);
    b.ended(pgid);
  },
});

/** A waiting line is said when it changes, and not more often than this. */
const SAY_EVERY_MS = 10_000;

/** The slots a deploy's settings name: the service's, or the default for settings built by hand. */
export function slotLimit(config: DeployContext["config"]): number {
  return config.maxConcurrentDeploys ?? defaultSlots();
}

/**
 * Runs `work` inside a build slot, `waited` saying whether it had to wait for one, and answers the slot's release:
 * the caller keeps the slot until what follows the work (the `[done]` line, the pruning) is over, and releases it
 * in a `finally`. If `work` throws, the slot is released at once. A deploy cancelled while it waits runs nothing.
 * When no slot can be asked for (the service's directory cannot be written, as when its logs cannot be), it runs
 * without one and says so: a broken `.service/` must not stop every deploy, and the queue still keeps one per
 * repository.
 */
export async function inSlot(
  ctx: DeployContext,
  id: string,
  work: (waited: boolean) => Promise<void>,
): Promise<() => void> {
  const { run } = ctx;
  const started = Date.now();
  let said = { text: "", at: 0 };
  let waited = false;
  // Asked inside a promise: a directory that cannot be made throws before the wait begins.
  const slot = await Promise.resolve()
    .then(() =>
      takeSlot(
        ctx.cwd,
        slotLimit(ctx.config),
        { id, app: ctx.app },
        {
          onWait: (use) => {
            if (!waited) run.waiting?.("slot");
            waited = true;
            const text = `waiting for a build slot (${slotText(use)})`;
            const now = Date.now();
            if (text === said.text || (said.at && now - said.at < SAY_EVERY_MS)) return;
            said = { text, at: now };
            run.step("slot", text);
          },
          abort: (end) => ctx.onCancel(end),
        },
      ),
    )
    .catch((error: Error) => `cannot take a build slot in ${ctx.cwd}: ${error.message}`);
  if (waited) run.waiting?.(undefined);
  if (typeof slot === "string") {
    run.step("slot", `${slot}; deploying without one`);
    await work(waited);
    return () => {};
  }
  if (!slot) return () => {};
  if (waited) run.step("slot", `got a build slot after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  try {
    // The slot's ticket names the groups of the commands run in it, as the queue's does: a `service deploy` killed
    // with -9 keeps its slot while its script runs on.
    const outer = deployGroups.getStore();
    const recorder = slot.recorder && outer ? both(outer, slot.recorder) : (slot.recorder ?? outer);
    await (recorder ? deployGroups.run(recorder, () => work(waited)) : work(waited));
  } catch (error) {
    slot.release();
    throw error;
  }
  return () => slot.release();
}
