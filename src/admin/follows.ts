/**
 * `GET /api/deploys/<id>/log`: a deploy's log as text, and with `?follow=1` the rest as it is written, each stream
 * bounded in all and per client and ended when the service stops.
 */
import { closeSync, readSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { processAlive } from "../system/liveness.ts";
import { Redaction } from "../system/redact.ts";
import { openRegular, readBytesNoFollow, readNoFollow } from "../system/files.ts";
import { deployOf } from "./deploy-ids.ts";
import { jsonResponse } from "../http/json.ts";
import { STREAM_HEADERS } from "../http/response.ts";
import { type AdminContext, apiError } from "./api.ts";

/** Follow streams at once, in all and per client: each holds a connection and polls a file. */
export const MAX_FOLLOWS = 32;
export const MAX_FOLLOWS_PER_CLIENT = 4;

/** Live `?follow=1` streams, by client key, and how to end them all when the service stops. */
export class Follows {
  private readonly perClient = new Map<string, number>();
  private total = 0;
  private readonly stops = new Set<() => void>();

  /** `GET /api/deploys/<id>/log`: the text so far, and with `follow` the rest as it is written. */
  log(context: AdminContext, ref: string, follow: boolean, client: string): Response {
    const entry = deployOf(context, ref);
    if (entry instanceof Response) return entry;
    const redaction = new Redaction(context.secrets());
    if (!follow) {
      try {
        return new Response(
          Buffer.from(redaction.binary(readBytesNoFollow(entry.logPath).toString("latin1")), "latin1"),
          {
            headers: STREAM_HEADERS,
          },
        );
      } catch {
        // A running deploy whose .log is not created yet (it follows the record): its log so far is empty.
        if (entry.status === "running") return new Response("", { headers: STREAM_HEADERS });
        return apiError(404, "not found", `the log of deploy ${entry.id} is missing`);
      }
    }
    if (this.total >= MAX_FOLLOWS || (this.perClient.get(client) ?? 0) >= MAX_FOLLOWS_PER_CLIENT) {
      return jsonResponse(
        429,
        {
          error: "too many follow streams",
          message: `at most ${MAX_FOLLOWS_PER_CLIENT} per client and ${MAX_FOLLOWS} in all: close one first`,
        },
        { "retry-after": "10" },
      );
    }
    this.total++;
    this.perClient.set(client, (this.perClient.get(client) ?? 0) + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.total--;
      const left = (this.perClient.get(client) ?? 1) - 1;
      if (left > 0) this.perClient.set(client, left);
      else this.perClient.delete(client);
    };
    let offset = 0;
    let stopped = false;
    const stop = () => {
      stopped = true;
    };
    this.stops.add(stop);
    const forget = () => {
      release();
      this.stops.delete(stop);
    };
    const buffer = Buffer.alloc(64 * 1024);
    const readMore = (): Uint8Array | undefined => {
      try {
        const fd = openRegular(entry.logPath);
        try {
          const read = readSync(fd, buffer, 0, buffer.length, offset);
          offset += read;
          return read > 0
            ? Buffer.from(redaction.binary(buffer.subarray(0, read).toString("latin1")), "latin1")
            : undefined;
        } finally {
          closeSync(fd);
        }
      } catch {
        return undefined;
      }
    };
    // As `service logs --follow`: until the record says it ended, or the process that wrote it is gone.
    const running = () => {
      try {
        const record = JSON.parse(readNoFollow(entry.jsonPath)) as {
          status?: unknown;
          pid?: unknown;
          pidStart?: unknown;
        };
        if (record.status !== "running") return false;
        return (
          typeof record.pid !== "number" ||
          processAlive(record.pid, typeof record.pidStart === "string" ? record.pidStart : undefined)
        );
      } catch {
        return false;
      }
    };
    const stream = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          // Bounded: the deploy's own timeout ends it, and the service's stop ends every stream.
          for (;;) {
            const chunk = readMore();
            if (chunk) return controller.enqueue(chunk);
            if (stopped || !running()) {
              const rest = readMore();
              if (rest) return controller.enqueue(rest);
              forget();
              return controller.close();
            }
            await sleep(200);
          }
        },
        cancel: forget,
      },
      { highWaterMark: 0 },
    );
    return new Response(stream, { headers: STREAM_HEADERS });
  }

  /** Ends every stream (the service stops). */
  closeAll(): void {
    for (const stop of this.stops) stop();
  }
}
