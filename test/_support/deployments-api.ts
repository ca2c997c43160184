/**
 * A local HTTP server that plays GitHub's Deployments API and GitLab's deployments API as documented, and checks
 * every request: method, path, headers, token, body. GitHub: `POST /repos/{owner}/{repo}/deployments`,
 * `POST …/deployments/{deployment_id}/statuses`, `GET …/deployments?sha=&environment=` (and the commit statuses
 * posted beside them). GitLab: `POST /projects/:id/deployments`,
 * `PUT /projects/:id/deployments/:deployment_id`. Anything else is 404 and listed in `refused` (a test expects
 * none). Loopback only; stopped after the tests.
 */
import { afterRun } from "./after-run.ts";

export const DEPLOY_TOKEN = "forge-token-deployments-0123456789";
export const OWNER_REPO = "acme/web";

export interface DeploymentsApi {
  url: string;
  /**
   * GitHub: the deployments created (`{id, ref, environment}`: `ref` is the commit GitHub resolved the ref asked
   * for to, `asked` that ref), and each status posted (`{id, state, …body}`).
   */
  created: { id: number; ref: string; asked: string; environment: string }[];
  statuses: { id: number; state: string; body: Record<string, unknown> }[];
  /** Commit statuses (`POST /repos/{owner}/{repo}/statuses/{sha}`), in order. */
  commitStatuses: { sha: string; state: string }[];
  /** GitLab: each call, in order (`create` with its body, `update` with the deployment id and status). */
  gitlab: { call: "create" | "update"; id: number; body: Record<string, unknown> }[];
  /** Requests refused as not documented or not authorized, as `METHOD path: why`. */
  refused: string[];
}

const servers: { stop(force?: boolean): unknown }[] = [];
afterRun(() => {
  for (const server of servers) server.stop(true);
});

const GITHUB_STATES = new Set(["error", "failure", "inactive", "in_progress", "queued", "pending", "success"]);
const GITLAB_STATES = new Set(["running", "success", "failed", "canceled", "blocked"]);

/**
 * `remote`: the bare repository GitHub holds, where a branch or tag a deployment names is resolved to its commit
 * (as GitHub does); without it only full commits are accepted.
 */
export function deploymentsApi(remote?: string): DeploymentsApi {
  const api: DeploymentsApi = { url: "", created: [], statuses: [], commitStatuses: [], gitlab: [], refused: [] };
  let nextId = 100;
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  const refuse = (request: Request, path: string, why: string, status = 404) => {
    api.refused.push(`${request.method} ${path}: ${why}`);
    return json(status, { message: status === 401 ? "Bad credentials" : "Not Found" });
  };

  function resolveRef(ref: string): string | undefined {
    if (/^[0-9a-f]{40}$/.test(ref)) return ref;
    if (!remote) return undefined;
    const found = Bun.spawnSync(["git", "-C", remote, "rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
    return found.exitCode === 0 ? found.stdout.toString().trim() : undefined;
  }

  function github(request: Request, path: string, body: Record<string, unknown>, query: URLSearchParams): Response {
    const h = request.headers;
    if (h.get("authorization") !== `Bearer ${DEPLOY_TOKEN}`) return refuse(request, path, "token", 401);
    if (h.get("accept") !== "application/vnd.github+json") return refuse(request, path, "accept");
    if (h.get("x-github-api-version") !== "2022-11-28") return refuse(request, path, "api version");
    // `GET /repos/{owner}/{repo}/deployments?sha=…&environment=…`: the list, newest first.
    if (request.method === "GET" && path === `/repos/${OWNER_REPO}/deployments`) {
      const listed = api.created.filter(
        (d) => d.ref === (query.get("sha") ?? d.ref) && d.environment === (query.get("environment") ?? d.environment),
      );
      return json(
        200,
        listed.reverse().map((d) => ({ id: d.id, sha: d.ref, ref: d.ref, environment: d.environment })),
      );
    }
    if (!h.get("content-type")?.startsWith("application/json")) return refuse(request, path, "content type");
    if (request.method !== "POST") return refuse(request, path, "method");
    if (path === `/repos/${OWNER_REPO}/deployments`) {
      if (typeof body.ref !== "string" || typeof body.environment !== "string") return refuse(request, path, "body");
      const sha = resolveRef(body.ref);
      // GitHub's answer to a ref it does not have: 422 Validation Failed.
      if (!sha) return json(422, { message: `No ref found for: ${body.ref}` });
      const id = nextId++;
      api.created.push({ id, ref: sha, asked: body.ref, environment: body.environment });
      return json(201, { id, sha, ref: body.ref, environment: body.environment });
    }
    // The commit status a deploy posts beside its deployment's (`POST /repos/{owner}/{repo}/statuses/{sha}`).
    const commit = new RegExp(`^/repos/${OWNER_REPO}/statuses/([0-9a-f]{40})$`).exec(path);
    if (commit && typeof body.state === "string" && typeof body.context === "string") {
      api.commitStatuses.push({ sha: commit[1]!, state: body.state });
      return json(201, { id: nextId++, state: body.state });
    }
    const status = new RegExp(`^/repos/${OWNER_REPO}/deployments/(\\d+)/statuses$`).exec(path);
    if (status) {
      if (typeof body.state !== "string" || !GITHUB_STATES.has(body.state)) return refuse(request, path, "state");
      for (const key of ["log_url", "environment_url", "target_url"])
        if (key in body && !URL.canParse(String(body[key]))) return refuse(request, path, key);
      const id = Number(status[1]);
      api.statuses.push({ id, state: body.state, body });
      return json(201, { id: nextId++, state: body.state });
    }
    return refuse(request, path, "not documented");
  }

  function gitlab(request: Request, path: string, body: Record<string, unknown>): Response {
    if (request.headers.get("private-token") !== DEPLOY_TOKEN) return refuse(request, path, "token", 401);
    if (!request.headers.get("content-type")?.startsWith("application/json")) return refuse(request, path, "type");
    const project = `/projects/${encodeURIComponent(OWNER_REPO)}/deployments`;
    // The commit status posted beside it (`POST /projects/:id/statuses/:sha`).
    const commit = new RegExp(`^/projects/${encodeURIComponent(OWNER_REPO)}/statuses/([0-9a-f]{40})$`).exec(path);
    if (request.method === "POST" && commit && typeof body.state === "string" && typeof body.name === "string") {
      api.commitStatuses.push({ sha: commit[1]!, state: body.state });
      return json(201, { id: nextId++, status: body.state });
    }
    if (request.method === "POST" && path === project) {
      for (const key of ["environment", "sha", "ref"])
        if (typeof body[key] !== "string" || !body[key]) return refuse(request, path, `body ${key}`);
      if (typeof body.tag !== "boolean" || body.status !== "running") return refuse(request, path, "body tag/status");
      const id = nextId++;
      api.gitlab.push({ call: "create", id, body });
      return json(201, { id, iid: id, ref: body.ref, sha: body.sha, status: body.status });
    }
    const update = new RegExp(`^${project.replace(/[.%]/g, "\\$&")}/(\\d+)$`).exec(path);
    if (request.method === "PUT" && update) {
      if (typeof body.status !== "string" || !GITLAB_STATES.has(body.status)) return refuse(request, path, "status");
      const id = Number(update[1]);
      api.gitlab.push({ call: "update", id, body });
      return json(200, { id, status: body.status });
    }
    return refuse(request, path, "not documented");
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      // The raw path: GitLab's project id is one URL-encoded segment.
      const path = url.pathname;
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse((await request.text()) || "{}");
      } catch {
        return refuse(request, path, "body is not JSON", 400);
      }
      if (path.startsWith("/api/v4/")) return gitlab(request, path.slice(7), body);
      return github(request, path, body, url.searchParams);
    },
  });
  servers.push(server);
  api.url = `http://127.0.0.1:${server.port}`;
  return api;
}
