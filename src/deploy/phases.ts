import type { DeployPhase, Step } from "../types.ts";

/** The steps that are phases of a deploy's time; the others (deploy, config, status …) count within the phase they fall in. */
const PHASE_STEPS = new Set<Step>(["slot", "gate", "pull", "verify", "release", "run", "health", "rollback"]);

/**
 * Where a deploy spent its time (the record's `phases`): the wait in the queue, then each phase from its first line
 * (or output) to the next phase's, as the stages say them. Nothing is measured twice: the lines a deploy writes
 * anyway mark the phases.
 */
export class Phases {
  private readonly list: DeployPhase[] = [];
  private current: { name: Step; at: number } | undefined;

  /** `requestedAt`: when the deploy was asked for (its queue wait ends at `startedAt`). */
  constructor(requestedAt: number | undefined, startedAt: number) {
    if (requestedAt !== undefined && requestedAt <= startedAt)
      this.list.push({ name: "queue", startedAt: new Date(requestedAt).toISOString(), ms: startedAt - requestedAt });
  }

  /** A line or output of `step`: a new phase begins when it is a phase other than the current one (then true). */
  saw(step: Step, now = Date.now()): boolean {
    if (!PHASE_STEPS.has(step) || this.current?.name === step) return false;
    this.close(now);
    this.current = { name: step, at: now };
    return true;
  }

  /** The phases that ended so far. */
  ended(): readonly DeployPhase[] {
    return this.list;
  }

  /** The phases, the current one ended at `now`. */
  end(now: number): DeployPhase[] {
    this.close(now);
    return this.list;
  }

  private close(now: number): void {
    if (!this.current) return;
    const { name, at } = this.current;
    this.list.push({ name, startedAt: new Date(at).toISOString(), ms: now - at });
    this.current = undefined;
  }
}

/** The phases in one line: `queue 0.0 s · gate 12.1 s · pull 0.3 s · run 4.2 s`. */
export function phasesLine(phases: DeployPhase[]): string {
  return phases.map((phase) => `${phase.name} ${(phase.ms / 1000).toFixed(1)} s`).join(" · ");
}
