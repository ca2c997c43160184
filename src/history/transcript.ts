import type { DeployEvent, DeployResult } from "../types.ts";

/** The final stream line, exactly as docs/http.md writes it. */
export function doneLine(result: Pick<DeployResult, "ok" | "run" | "rollback">): string {
  const exitCode = result.rollback ? result.rollback.exitCode : result.run.exitCode;
  return `[done] ok=${result.ok} exitCode=${exitCode === null ? "null" : exitCode}`;
}

const encoder = new TextEncoder();

/**
 * Turns events into the text transcript shared by the HTTP stream, the terminal and the .log file. Output is
 * passed through byte for byte; the service's own lines always start on a line of their own.
 */
export class Transcript {
  private atLineStart = true;

  render(event: DeployEvent): Uint8Array | undefined {
    if (event.type === "output") {
      if (event.data.length === 0) return undefined;
      this.atLineStart = event.data[event.data.length - 1] === 10;
      return event.data;
    }
    // A change of what the deploy waits for is said by its own lines (the gate's): it has none of its own.
    if (event.type === "waiting") return undefined;
    return this.line(textOf(event));
  }

  /** A line of the service's own, on a line of its own. */
  line(text: string): Uint8Array {
    const prefix = this.atLineStart ? "" : "\n";
    this.atLineStart = true;
    return encoder.encode(`${prefix}${text}\n`);
  }

  get midLine(): boolean {
    return !this.atLineStart;
  }
}

function textOf(event: Exclude<DeployEvent, { type: "output" | "waiting" }>): string {
  switch (event.type) {
    case "queued":
      return `[queued] waiting; position=${event.position}`;
    case "start": {
      const forge = event.event ? `, event ${event.event}${event.delivery ? `, delivery ${event.delivery}` : ""}` : "";
      const by = event.actor ? ` by ${event.actor}` : "";
      return `[deploy] ${event.id} started ${event.startedAt.toISOString()} (${event.trigger}${forge}) in ${event.repoPath}${by}`;
    }
    case "step":
      return `[${event.step}] ${event.text}`;
    case "done":
      return doneLine(event.result);
  }
}
