import { basename } from "node:path";
import { LOG_DIR } from "../history/record.ts";
import { Transcript } from "../history/transcript.ts";
import type { Freeze } from "../config/freeze.ts";
import { frozenText } from "../deploy/frozen.ts";
import { pauseOf, resumeHint } from "../queue/pause.ts";
import type { DeployEvent, DeployResult, DeploySink } from "../types.ts";
import { jsonResponse } from "./json.ts";

/** Output held for a client that reads slower than the script prints; past it, output is skipped (the .log has it). */
export const MAX_PENDING_BYTES = 4 * 1024 * 1024;

export const STREAM_HEADERS = {
  "content-type": "text/plain; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
  "x-content-type-options": "nosniff",
};

/**
 * The live text response of one deploy. The deploy writes into it through the returned sink and never waits
 * for the client: a slow client gets skipped output (with a mark) instead of slowing the deploy, and a client
 * that goes away only stops the writing. During silences a heartbeat line keeps proxies from closing the
 * connection.
 */
export function streamingResponse(heartbeatMs: number): {
  response: Response;
  sink: DeploySink;
  fail: (message: string) => void;
} {
  const transcript = new Transcript();
  const chunks: Uint8Array[] = [];
  let pending = 0;
  let skipped = 0;
  let finished = false;
  let gone = false;
  let wake: (() => void) | undefined;
  let lastWrite = Date.now();
  const started = Date.now();
  /** Between `[queued]` and the deploy's start: the heartbeat must not say the deploy runs. */
  let waiting = false;

  const push = (bytes: Uint8Array | undefined) => {
    if (!bytes || gone) return;
    chunks.push(bytes);
    pending += bytes.length;
    lastWrite = Date.now();
    wake?.();
  };

  // Started by the first read, not here: a response built and then dropped (the request was refused after
  // all) must not leave a timer that ticks, and fills `chunks`, forever.
  let heartbeat: ReturnType<typeof setInterval> | undefined;
  const startHeartbeat = () => {
    heartbeat ??= setInterval(
      () => {
        if (Date.now() - lastWrite >= heartbeatMs) {
          push(
            transcript.line(
              `[heartbeat] still ${waiting ? "waiting" : "running"} after ${Math.round((Date.now() - started) / 1000)} s`,
            ),
          );
        }
      },
      Math.max(50, Math.min(heartbeatMs, 1000)),
    );
  };

  const sink: DeploySink = (event: DeployEvent) => {
    if (gone) return;
    if (event.type === "queued" || event.type === "start") waiting = event.type === "queued";
    if (event.type === "output" && pending > MAX_PENDING_BYTES) {
      skipped += event.data.length;
      return;
    }
    if (skipped > 0) {
      push(
        transcript.line(
          `[stream] skipped ${skipped} bytes of output while this client was not reading; the .log file has all of it`,
        ),
      );
      skipped = 0;
    }
    push(transcript.render(event));
    if (event.type === "done") {
      finished = true;
      clearInterval(heartbeat);
      wake?.();
    }
  };

  /** Ends the stream as a failed deploy when the deploy itself could not report (it never should). */
  const fail = (message: string) => {
    if (finished) return;
    push(transcript.line(`[deploy] ${message}`));
    push(transcript.line("[done] ok=false exitCode=null"));
    finished = true;
    clearInterval(heartbeat);
    wake?.();
  };

  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!finished && !gone) startHeartbeat();
        while (chunks.length === 0 && !finished) await new Promise<void>((r) => (wake = r));
        wake = undefined;
        if (chunks.length > 0) {
          const chunk = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
          chunks.length = 0;
          pending = 0;
          controller.enqueue(chunk);
        }
        // The last chunk and the end of the body go out together: no turn of the loop between `[done]` and the end.
        if (finished && chunks.length === 0) controller.close();
      },
      cancel() {
        gone = true;
        chunks.length = 0;
        pending = 0;
        clearInterval(heartbeat);
      },
    },
    { highWaterMark: 0 },
  );
  return { response: new Response(stream, { status: 200, headers: STREAM_HEADERS }), sink, fail };
}

/** The buffered JSON response (`?format=json`). */
export async function jsonResult(result: Promise<DeployResult>): Promise<Response> {
  const done = await result;
  return jsonResponse(200, { ...done, log: clientLog(done.log) });
}

/**
 * The result's `log` as a client is told it (docs/http.md "The JSON result"): the id, and the two files by their paths
 * in the service's working directory (`.service/logs/<stem>.json`), never the server's directories.
 */
export function clientLog(log: DeployResult["log"]): DeployResult["log"] {
  return { id: log.id, json: `${LOG_DIR}/${basename(log.json)}`, log: `${LOG_DIR}/${basename(log.log)}` };
}

/** The webhook's answer while paused: 200, so forges do not count a failure and disable the hook. */
export function pausedResponse(cwd: string, app: string | undefined, json: boolean): Response | undefined {
  const paused = pauseOf(cwd, app);
  if (!paused) return undefined;
  // An app's pause names its app and the command that lifts it: `service resume` alone would answer "not paused".
  const appPause = paused.app === undefined ? {} : { app: paused.app, resume: resumeHint(paused) };
  if (json) return jsonResponse(200, { skipped: true, paused: true, reason: paused.reason, ...appPause });
  const hint = paused.app === undefined ? "" : ` (${resumeHint(paused)} lifts it)`;
  return new Response(`[skipped] paused: ${paused.reason}${hint}\n`, {
    headers: { "content-type": "text/plain; charset=utf-8" },
  });
}

/** The webhook's answer while a freeze window holds the app: 200, like a pause's, with the window's reason and end. */
export function frozenResponse(freeze: Freeze | undefined, json: boolean): Response | undefined {
  if (!freeze) return undefined;
  if (json)
    return jsonResponse(200, {
      skipped: true,
      frozen: true,
      reason: freeze.reason,
      until: freeze.until,
      end: freeze.end.toISOString(),
    });
  return new Response(`[skipped] ${frozenText(freeze)}\n`, {
    headers: { "content-type": "text/plain; charset=utf-8" },
  });
}
