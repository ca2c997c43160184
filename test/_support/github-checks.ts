/**
 * A local HTTP server that plays GitHub's commit status and check run APIs as documented: the statuses a token
 * writes (`POST /repos/{owner}/{repo}/statuses/{sha}`, creator = the token's login), the list of a commit's statuses
 * (`GET …/commits/{sha}/statuses`, newest first) and its check runs (`GET …/commits/{sha}/check-runs`). Each
 * request is checked against the documented headers; anything else is 404. Loopback only; stopped after the tests.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterRun } from "./after-run.ts";
import { makeRepo, SECRET, tempDir } from "./helpers.ts";

export const OWNER_REPO = "acme/web";

export interface GithubChecks {
  /** The API base URL (the status settings' `apiUrl`). */
  url: string;
  /** Sets a status on a commit as `login` (CI, by default), with the time it changed. */
  status(sha: string, context: string, state: "pending" | "success" | "failure" | "error", login?: string): void;
  /** Sets a check run on a commit, reported by the app `github-actions`: it replaces the run of that name. */
  checkRun(sha: string, name: string, status: "queued" | "in_progress" | "completed", conclusion?: string): void;
  /**
   * Re-runs a check as GitHub does: a new run of that name (a higher id), queued until it starts (`started_at`
   * null); the earlier runs stay listed.
   */
  rerun(sha: string, name: string): void;
  /** The reads of the commit's checks so far. */
  reads(): number;
  /** The statuses written through the API, in order: `{ sha, context, state, by }`. */
  written: { sha: string; context: string; state: string; by: string }[];
  /** Requests refused as not documented or not authorized (a test expects none). */
  refused: string[];
  /** Deployments made (POST /repos/{owner}/{repo}/deployments), each with its statuses in order. */
  deployments: { id: number; ref: string; environment: string; states: string[] }[];
  /** Answer every request with this status from now on (401, 500), or undefined to answer normally. */
  failWith: number | undefined;
}

interface Status {
  id: number;
  context: string;
  state: string;
  target_url: string;
  created_at: string;
  updated_at: string;
  creator: { login: string };
}

const servers: { stop(force?: boolean): unknown }[] = [];
afterRun(() => {
  for (const server of servers) server.stop(true);
});

/** `tokens` maps each token the API accepts to its login. */
export function githubChecks(tokens: Record<string, string>): GithubChecks {
  const statuses = new Map<string, Status[]>();
  const runs = new Map<string, object[]>();
  let id = 0;
  let reads = 0;
  const addStatus = (sha: string, context: string, state: string, login: string) => {
    const now = new Date().toISOString();
    const list = statuses.get(sha) ?? [];
    list.unshift({
      id: ++id,
      context,
      state,
      target_url: `https://ci.example/${encodeURIComponent(context)}/${id}`,
      created_at: now,
      updated_at: now,
      creator: { login },
    });
    statuses.set(sha, list);
  };
  const addRun = (sha: string, name: string, status: string, conclusion?: string) => {
    const now = new Date().toISOString();
    const list = runs.get(sha) ?? [];
    list.push({
      id: ++id,
      name,
      status,
      conclusion: status === "completed" ? (conclusion ?? "success") : null,
      html_url: `https://github.example/runs/${id}`,
      // A queued run has not started: GitHub says null.
      started_at: status === "queued" ? null : now,
      completed_at: status === "completed" ? now : null,
      app: { slug: "github-actions" },
    });
    runs.set(sha, list);
  };
  const api: GithubChecks = {
    url: "",
    status: (sha, context, state, login = "ci-bot") => addStatus(sha, context, state, login),
    checkRun(sha, name, status, conclusion) {
      runs.set(
        sha,
        (runs.get(sha) ?? []).filter((run) => (run as { name: string }).name !== name),
      );
      addRun(sha, name, status, conclusion);
    },
    rerun: (sha, name) => addRun(sha, name, "queued"),
    reads: () => reads,
    written: [],
    refused: [],
    deployments: [],
    failWith: undefined,
  };
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json; charset=utf-8" } });
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const path = url.pathname;
      const refuse = (status: number, why: string) => {
        api.refused.push(`${request.method} ${path}: ${why}`);
        return json(status, { message: why });
      };
      if (api.failWith)
        return json(api.failWith, { message: api.failWith === 401 ? "Bad credentials" : "Server Error" });
      const token = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
      const login = token && tokens[token];
      if (!login) return refuse(401, "Bad credentials");
      if (request.headers.get("x-github-api-version") !== "2022-11-28") return refuse(400, "missing API version");
      if (!(request.headers.get("accept") ?? "").includes("application/vnd.github+json"))
        return refuse(415, "accept must be application/vnd.github+json");
      const prefix = `/repos/${OWNER_REPO}`;
      const write = new RegExp(`^${prefix}/statuses/([0-9a-f]{40})$`).exec(path);
      if (request.method === "POST" && write) {
        const body = (await request.json()) as { state: string; context: string };
        addStatus(write[1]!, body.context, body.state, login);
        api.written.push({ sha: write[1]!, context: body.context, state: body.state, by: login });
        return json(201, { id });
      }
      // Deployments and their statuses (docs.github.com/rest/deployments): a ref and an environment; a state of the list.
      if (request.method === "POST" && path === `${prefix}/deployments`) {
        const body = (await request.json()) as { ref?: unknown; environment?: unknown };
        if (typeof body.ref !== "string" || typeof body.environment !== "string")
          return refuse(422, "ref and environment are required");
        api.deployments.push({ id: ++id, ref: body.ref, environment: body.environment, states: [] });
        return json(201, { id, ref: body.ref, environment: body.environment });
      }
      const deployment = new RegExp(`^${prefix}/deployments/(\\d+)/statuses$`).exec(path);
      if (request.method === "POST" && deployment) {
        const made = api.deployments.find((each) => each.id === Number(deployment[1]));
        const { state } = (await request.json()) as { state?: string };
        const states = ["error", "failure", "inactive", "in_progress", "queued", "pending", "success"];
        if (!made) return refuse(404, "Not Found");
        if (!state || !states.includes(state)) return refuse(422, "state is not one of the documented states");
        made.states.push(state);
        return json(201, { id: ++id, state });
      }
      const read = new RegExp(`^${prefix}/commits/([0-9a-f]{40})/(statuses|check-runs)$`).exec(path);
      if (request.method !== "GET" || !read) return refuse(404, "Not Found");
      reads++;
      const [, sha, what] = read as unknown as [string, string, string];
      if (what === "statuses") return json(200, statuses.get(sha) ?? []);
      const list = runs.get(sha) ?? [];
      return json(200, { total_count: list.length, check_runs: list });
    },
  });
  servers.push(server);
  api.url = `http://127.0.0.1:${server.port}`;
  return api;
}

/** The token the gated services below write statuses and read checks with (login `deploy-bot`). */
export const GATE_TOKEN = "gate-token-0123456789abcdef";

/**
 * A service (its own directory) for a new repository, gated as `gate` (YAML) says, reading a GitHub-like forge;
 * its run script appends the commit it deploys to `ran`. `extra` lines are added to its service.yaml.
 */
export function gatedService(gate: string, extra: string[] = [], apiUrl?: string) {
  const repo = makeRepo();
  const forge = githubChecks({ [GATE_TOKEN]: "deploy-bot" });
  const cwd = tempDir("service-gate-");
  const ran = join(cwd, "ran");
  writeFileSync(
    join(cwd, "service.yaml"),
    [
      `repoPath: ${repo.clone}`,
      `runScript: git rev-parse HEAD >> ${ran}`,
      "status:",
      "  provider: github",
      `  repo: ${OWNER_REPO}`,
      `  apiUrl: ${apiUrl ?? forge.url}`,
      `gate: ${gate}`,
      ...extra,
      "",
    ].join("\n"),
  );
  const env = { SERVICE_SECRET: SECRET, SERVICE_STATUS_TOKEN: GATE_TOKEN, SERVICE_HOSTNAME: "127.0.0.1" };
  return { repo, forge, cwd, ran, env };
}
