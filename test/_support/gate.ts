/** A run script that records its start and end and waits at a gate the test opens: deterministic overlap checks. */
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, SECRET, startServer, tempDir } from "./helpers.ts";

export interface Gate {
  /** The run script: a path to an executable. */
  script: string;
  /** Environment for the server or CLI so the script finds its files. */
  env: Record<string, string>;
  /** Lets every waiting and future run through. */
  open(): void;
  /** The `start <id> <trigger>` / `end <id>` lines written so far. */
  lines(): string[];
  /** Deploy ids in the order they started. */
  starts(): string[];
}

export function makeGate(): Gate {
  const dir = tempDir("service-gate-");
  const script = join(dir, "job.sh");
  const log = join(dir, "runs.log");
  const gate = join(dir, "open");
  writeFileSync(
    script,
    [
      "#!/bin/sh",
      'echo "start $SERVICE_DEPLOY_ID $SERVICE_TRIGGER" >> "$GATE_LOG"',
      'while [ ! -f "$GATE_FILE" ]; do sleep 0.02; done',
      'echo "end $SERVICE_DEPLOY_ID" >> "$GATE_LOG"',
      "",
    ].join("\n"),
  );
  chmodSync(script, 0o755);
  const lines = () => (existsSync(log) ? readFileSync(log, "utf8").trim().split("\n").filter(Boolean) : []);
  return {
    script,
    env: { GATE_LOG: log, GATE_FILE: gate },
    open: () => writeFileSync(gate, ""),
    lines,
    starts: () =>
      lines()
        .filter((l) => l.startsWith("start "))
        .map((l) => l.split(" ")[1]!),
  };
}

/**
 * `await using gated = await startGated(extra)`: a repository, a gate, the server's environment (the secret, the
 * gate's script as the run script, `extra` on top) and the server. When the block ends the gate opens and the
 * server stops.
 */
export async function startGated(extra: Record<string, string> = {}) {
  const repo = makeRepo();
  const gate = makeGate();
  const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: gate.script, ...gate.env, ...extra };
  const server = await startServer(repo.clone, env);
  return {
    repo,
    gate,
    env,
    server,
    async [Symbol.asyncDispose]() {
      gate.open();
      await server.stop();
    },
  };
}

/** True when the start/end lines never overlap: start A, end A, start B, end B, … */
export function serialized(lines: string[]): boolean {
  for (let i = 0; i < lines.length; i += 2) {
    const start = lines[i]?.split(" ");
    const end = lines[i + 1]?.split(" ");
    if (start?.[0] !== "start") return false;
    if (end && (end[0] !== "end" || end[1] !== start[1])) return false;
  }
  return true;
}

/** Reads a streamed response incrementally, so a test can wait for a line while the deploy goes on. */
export class StreamReader {
  text = "";
  /** Set when the connection broke before the response ended. */
  error: Error | undefined;
  /** The whole body; resolves (never rejects) when the response ends or the connection breaks. */
  readonly done: Promise<string>;

  constructor(response: Response) {
    const decoder = new TextDecoder();
    const body = response.body!;
    this.done = (async () => {
      try {
        for await (const chunk of body) this.text += decoder.decode(chunk as Uint8Array, { stream: true });
      } catch (error) {
        this.error = error as Error;
      }
      return this.text;
    })();
  }

  /** The deploy id from the `[deploy] <id> started` line, once it is there. */
  id(): string | undefined {
    return /\[deploy\] ([0-9a-f-]{36}) started/.exec(this.text)?.[1];
  }
}
