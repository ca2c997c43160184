/**
 * A local HTTP server that plays a forge's status API or a chat service: it records every request and answers
 * as told (201, 401, 500, or holds the request until released). Loopback only; stopped after the tests.
 */
import { afterRun } from "./after-run.ts";

export interface Seen {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  json(): any;
}

export type Answer = number | "hang";

export interface FakeApi {
  url: string;
  seen: Seen[];
  /** How the next requests are answered, one per request; the last one repeats. */
  answers: Answer[];
  /** Body of non-2xx answers (to check it is redacted). */
  errorBody: string;
  /** Answers every held request with 201. */
  release(): void;
  held(): number;
}

const servers: { stop(force?: boolean): unknown }[] = [];
afterRun(() => {
  for (const server of servers) server.stop(true);
});

export function fakeApi(answers: Answer[] = [201]): FakeApi {
  const seen: Seen[] = [];
  const waiting: (() => void)[] = [];
  const api: FakeApi = {
    url: "",
    seen,
    answers,
    errorBody: '{"message":"Bad credentials"}',
    release() {
      for (const go of waiting.splice(0)) go();
    },
    held: () => waiting.length,
  };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const body = await request.text();
      seen.push({
        method: request.method,
        path: url.pathname + url.search,
        headers: Object.fromEntries(request.headers),
        body,
        json: () => JSON.parse(body),
      });
      const answer = api.answers.length > 1 ? api.answers.shift()! : api.answers[0]!;
      if (answer === "hang") {
        await new Promise<void>((resolve) => waiting.push(resolve));
        return new Response("{}", { status: 201 });
      }
      return new Response(answer >= 300 ? api.errorBody : '{"id":1}', {
        status: answer,
        headers: { "content-type": "application/json" },
      });
    },
  });
  servers.push(server);
  api.url = `http://127.0.0.1:${server.port}`;
  return api;
}

/** A loopback URL where nothing listens: a port that was free a moment ago. */
export function closedUrl(): string {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const url = `http://127.0.0.1:${server.port}`;
  server.stop(true);
  return url;
}
