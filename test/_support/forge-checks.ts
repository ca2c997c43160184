/**
 * A local HTTP server that plays a forge's API for reading a commit's checks: it answers only the requests it was
 * given (method GET, the exact path and query, the forge's auth and accept headers) and 404 to anything else, which
 * it records as refused. Loopback only; stopped after the tests.
 */
import { expect } from "bun:test";
import type { StatusTarget } from "../../src/config/forge.ts";
import { readChecks } from "../../src/gate/forges.ts";
import type { ForgeRead, ReportedCheck } from "../../src/gate/types.ts";
import { afterRun } from "./after-run.ts";

export interface Answer {
  status?: number;
  /** JSON, or a string sent as it is. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Never answers. */
  hang?: boolean;
  /** Streams spaces until the client stops reading. */
  endless?: boolean;
  /** Answers after this long (a slow forge). */
  delayMs?: number;
}

export interface FakeForge {
  /** The server's origin: `http://127.0.0.1:<port>`. */
  url: string;
  /** `GET /path?query` of each request answered as given. */
  requests: string[];
  /** What each request not as documented was (answered 404). */
  refused: string[];
}

const servers: { stop(force?: boolean): unknown }[] = [];
afterRun(() => {
  for (const server of servers) server.stop(true);
});

/**
 * `routes`: path and query (as the client sends them) → the answer; a function is asked each time (it gets the
 * server's origin, for page links). `headers`: the exact value each listed header must have.
 */
export function fakeForge(
  headers: Record<string, string>,
  routes: Record<string, Answer | ((origin: string) => Answer)>,
): FakeForge {
  const forge: FakeForge = { url: "", requests: [], refused: [] };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const target = url.pathname + url.search;
      const wrong = Object.entries(headers)
        .filter(([name, value]) => request.headers.get(name) !== value)
        .map(([name]) => `${name}: ${request.headers.get(name)}`);
      const route = routes[target];
      if (request.method !== "GET" || wrong.length > 0 || !route) {
        forge.refused.push(`${request.method} ${target} ${wrong.join(", ")}`.trim());
        return Response.json({ message: "Not Found" }, { status: 404 });
      }
      forge.requests.push(`GET ${target}`);
      const answer = typeof route === "function" ? route(forge.url) : route;
      if (answer.hang) await new Promise(() => {});
      if (answer.delayMs) await Bun.sleep(answer.delayMs);
      const responseHeaders = { "content-type": "application/json", ...answer.headers };
      if (answer.endless) {
        const chunk = new TextEncoder().encode(" ".repeat(64 * 1024));
        const stream = new ReadableStream({ pull: (controller) => controller.enqueue(chunk) });
        return new Response(stream, { headers: responseHeaders });
      }
      const body = typeof answer.body === "string" ? answer.body : JSON.stringify(answer.body ?? null);
      return new Response(body, { status: answer.status ?? 200, headers: responseHeaders });
    },
  });
  servers.push(server);
  forge.url = `http://127.0.0.1:${server.port}`;
  return forge;
}

export const TOKEN = "forge-token-abcdef123456";
export const SHA = "0123456789abcdef0123456789abcdef01234567";

export type Provider = StatusTarget["provider"];

/** Each forge as documented: where its API lives on the server, its headers, where its checks are listed. */
export const FORGES: Record<
  Provider,
  { name: string; api: string; headers: Record<string, string>; first: string; others: string[] }
> = {
  github: {
    name: "GitHub",
    api: "/api/v3",
    headers: {
      authorization: `Bearer ${TOKEN}`,
      accept: "application/vnd.github+json",
      "x-github-api-version": "2022-11-28",
    },
    first: `/api/v3/repos/acme/web/commits/${SHA}/statuses?per_page=100`,
    others: [`/api/v3/repos/acme/web/commits/${SHA}/check-runs?per_page=100`],
  },
  gitlab: {
    name: "GitLab",
    api: "/api/v4",
    headers: { "private-token": TOKEN, accept: "application/json" },
    first: `/api/v4/projects/acme%2Fweb/repository/commits/${SHA}/statuses?per_page=100&page=1`,
    others: [],
  },
  gitea: {
    name: "Gitea",
    api: "/api/v1",
    headers: { authorization: `token ${TOKEN}`, accept: "application/json" },
    first: `/api/v1/repos/acme/web/commits/${SHA}/status?page=1&limit=50`,
    others: [],
  },
  bitbucket: {
    name: "Bitbucket",
    api: "/2.0",
    headers: { authorization: `Bearer ${TOKEN}`, accept: "application/json" },
    first: `/2.0/repositories/acme/web/commit/${SHA}/statuses?pagelen=100`,
    others: [],
  },
};

export const EMPTY: Record<Provider, unknown> = {
  github: [],
  gitlab: [],
  gitea: { state: "pending", statuses: [], total_count: 0 },
  bitbucket: { values: [], pagelen: 100, page: 1, size: 0 },
};

export const GITHUB_RUNS = FORGES.github.others[0]!;

export function serve(provider: Provider, routes: Record<string, Answer | ((origin: string) => Answer)>): FakeForge {
  return fakeForge(FORGES[provider].headers, routes);
}

export function read(
  provider: Provider,
  forge: FakeForge,
  options: { timeoutMs?: number; signal?: AbortSignal; token?: string; repo?: string } = {},
): Promise<ForgeRead> {
  const target: StatusTarget = {
    provider,
    repo: options.repo ?? "acme/web",
    apiUrl: forge.url + FORGES[provider].api,
    token: options.token ?? TOKEN,
    context: "deploy/web",
  };
  return readChecks(target, SHA, { timeoutMs: options.timeoutMs ?? 10_000, signal: options.signal });
}

/** The checks read, sorted by name then reporter; the server saw only documented requests. */
export async function checksOf(forge: FakeForge, result: Promise<ForgeRead>): Promise<ReportedCheck[]> {
  const answer = await result;
  expect(forge.refused).toEqual([]);
  if (!answer.ok) throw new Error(answer.error);
  return answer.checks.sort((a, b) => `${a.name}\n${a.by}`.localeCompare(`${b.name}\n${b.by}`));
}

/** The forge's routes with `answer` at the first list (the others empty). */
export function first(provider: Provider, answer: Answer): Record<string, Answer> {
  const { first, others } = FORGES[provider];
  return {
    [first]: answer,
    ...Object.fromEntries(others.map((path) => [path, { body: { total_count: 0, check_runs: [] } }])),
  };
}

export const at = (minute: number) => `2024-05-01T10:${String(minute).padStart(2, "0")}:00Z`;
