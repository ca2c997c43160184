import type { DeployPhase, Step } from "../types.ts";

/** The steps that are phases of a deploy's time; the others (deploy, config, status …) count within the phase they fall in. */
const PHASE_STEPS = new Set<Step>(["slot", "gate", "pull", "verify", "release", "run", "health", "watch", "rollback"]);

/**
 * Where a deploy spent its time (the record's `phases`): the wait in the queue, then each phase from its first line
 * (or output) to the next phase's, as the stages say them. Nothing is measured twice: the lines a deploy writes
 * anyway mark the phases. No name comes twice: with releases, the release switched to is `switch`; once a rollback
 * begins, its phases are `rollback` (`switch back` with releases) and `health after rollback` (`health after switch
 * back`), and its last lines (succeeded, done) end that health phase rather than open another.
 */
export class Phases {
  private readonly list: DeployPhase[] = [];
  private current: { name: string; at: number } | undefined;
  /** A release was prepared or switched to (the releases flow), a release switched to, a rollback begun. */
  private releases = false;
  private switched = false;
  private back = false;

  /** `requestedAt`: when the deploy was asked for (its queue wait ends at `startedAt`). */
  constructor(requestedAt: number | undefined, startedAt: number) {
    if (requestedAt !== undefined && requestedAt <= startedAt)
      this.list.push({ name: "queue", startedAt: new Date(requestedAt).toISOString(), ms: startedAt - requestedAt });
  }

  /**
   * A line (its `text`) or output of `step`: a new phase begins when it names a phase other than the current one
   * (then true).
   */
  saw(step: Step, now = Date.now(), text?: string): boolean {
    if (!PHASE_STEPS.has(step)) return false;
    const name = this.nameOf(step, text);
    if (name === undefined || this.current?.name === name) return false;
    this.close(now);
    this.current = { name, at: now };
    return true;
  }

  /** The phase a line or output of `step` belongs to; undefined: the current one, whatever it is. */
  private nameOf(step: Step, text: string | undefined): string | undefined {
    if (step === "release") this.releases = true;
    if (step === "rollback") this.back = true;
    if (this.back) {
      const back = this.releases ? "switch back" : "rollback";
      if (step === "health") return `health after ${back}`;
      // After the health check of what was switched back to, its last lines (succeeded, done) end that phase.
      if (step === "rollback" || step === "release" || step === "run")
        return this.current?.name.startsWith("health after") ? undefined : back;
      return step;
    }
    if (step !== "release") return step;
    if (text?.startsWith("switched current")) this.switched = true;
    if (this.switched) return "switch";
    // A failed build's release removed: still the run's phase.
    return this.current?.name === "run" ? undefined : "release";
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
