/**
 * A local HTTP server that plays the four forges' APIs a preview's report uses, as documented, and checks every
 * request: method, path, auth, content type, body. GitHub: deployments and their statuses, issue comments, a pull
 * request's state. Gitea:
 * commit statuses, issue comments. GitLab (under /api/v4): commit statuses, environments (list by name, create,
 * update, stop), deployments (create, update), merge request notes, project members. Bitbucket (under /2.0):
 * commit build statuses, pull request comments. Anything else is 404 and listed in `refused` (a test expects none).
 * Loopback, port 0; stopped after the run.
 */
import { afterRun } from "./after-run.ts";

export const FORGE_TOKEN = "preview-forge-token-0123456789";
export const REPO = "acme/web";

export interface Comment {
  id: number;
  body: string;
  /** Who wrote it, as the forge says. */
  user: string;
}

export interface PreviewForge {
  url: string;
  /** Every accepted call, in order: `METHOD path` and its JSON body. */
  calls: { call: string; body: Record<string, unknown> }[];
  refused: string[];
  /** Each pull request's comments, by `<forge>#<number>`. */
  comments: Map<string, Comment[]>;
  /** GitLab's members: `<project>/<user>` → access level. */
  members: Map<string, number>;
  /** GitLab's environments. */
  environments: { id: number; name: string; external_url: string; state: string }[];
  /** The pull requests GitHub says are closed (the others are open). */
  closed: Set<number>;
  /** Calls answered 500, by `METHOD path` prefix. */
  failing: Set<string>;
  /** Page size of the comment lists (small to make pages). */
  pageSize: number;
  /** When set, the next page of a comment list is named on this origin (another server's). */
  nextOrigin?: string;
}

const servers: { stop(force?: boolean): unknown }[] = [];
afterRun(() => {
  for (const server of servers) server.stop(true);
});

const GITHUB_STATES = new Set(["error", "failure", "inactive", "in_progress", "queued", "pending", "success"]);
const GITEA_STATES = new Set(["pending", "success", "error", "failure", "warning"]);
const GITLAB_STATES = new Set(["pending", "running", "success", "failed", "canceled", "skipped"]);
const GITLAB_DEPLOYMENT = new Set(["running", "success", "failed", "canceled"]);
const BITBUCKET_STATES = new Set(["INPROGRESS", "SUCCESSFUL", "FAILED", "STOPPED"]);
const SHA = /^[0-9a-f]{7,40}$/;

export function previewForge(): PreviewForge {
  const forge: PreviewForge = {
    url: "",
    calls: [],
    refused: [],
    comments: new Map(),
    closed: new Set(),
    members: new Map(),
    environments: [],
    failing: new Set(),
    pageSize: 100,
  };
  let nextId = 1000;
  const deployments: { id: number; sha: string; ref: string; environment: unknown }[] = [];
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

  function route(request: Request, body: Record<string, unknown>): Response | string {
    const url = new URL(request.url);
    const path = url.pathname;
    const m = request.method;
    const h = request.headers;
    const call = `${m} ${path}`;
    for (const prefix of forge.failing) if (call.startsWith(prefix)) return json(500, { message: "broken" });
    const sends = m === "POST" || m === "PUT" || m === "PATCH";
    if (sends && !h.get("content-type")?.startsWith("application/json")) return "content type";
    const ok = (status: number, answer: unknown, headers?: Record<string, string>) => {
      forge.calls.push({ call, body });
      return json(status, answer, headers);
    };
    const page = (list: Comment[], view: (c: Comment) => unknown, style: "link" | "gitlab" | "bitbucket") => {
      const n = Number(url.searchParams.get("page") ?? "1");
      const slice = list.slice((n - 1) * forge.pageSize, n * forge.pageSize).map(view);
      const more = n * forge.pageSize < list.length;
      const nextUrl = new URL(url);
      nextUrl.searchParams.set("page", String(n + 1));
      if (forge.nextOrigin) nextUrl.host = new URL(forge.nextOrigin).host;
      if (style === "bitbucket") return ok(200, { values: slice, ...(more ? { next: nextUrl.href } : {}) });
      if (style === "gitlab") return ok(200, slice, more ? { "x-next-page": String(n + 1) } : { "x-next-page": "" });
      return ok(200, slice, more ? { link: `<${nextUrl.href}>; rel="next"` } : {});
    };
    const thread = (key: string) => forge.comments.get(key) ?? forge.comments.set(key, []).get(key)!;
    const edit = (key: string, id: number, text: unknown) => {
      const found = thread(key).find((c) => c.id === id);
      if (!found) return json(404, { message: "Not Found" });
      if (typeof text !== "string") return "comment body";
      found.body = text;
      return ok(200, { id, body: text });
    };
    let p: RegExpExecArray | null;
    /** GitHub's and Gitea's issue comments: the same API under each one's `base`, kept as `<forge>#<number>`. */
    const issueComments = (name: "github" | "gitea", base: string): Response | string | undefined => {
      if ((p = new RegExp(`^${base}/issues/(\\d+)/comments$`).exec(path))) {
        const key = `${name}#${p[1]}`;
        if (m === "GET") return page(thread(key), (c) => ({ id: c.id, body: c.body, user: { login: c.user } }), "link");
        if (m === "POST" && typeof body.body === "string") {
          const comment = { id: nextId++, body: body.body, user: "service-bot" };
          thread(key).push(comment);
          return ok(201, { id: comment.id, body: comment.body });
        }
      }
      if (m === "PATCH" && (p = new RegExp(`^${base}/issues/comments/(\\d+)$`).exec(path))) {
        const id = Number(p[1]);
        const key = [...forge.comments.keys()].find(
          (k) => k.startsWith(`${name}#`) && thread(k).some((c) => c.id === id),
        );
        return edit(key ?? `${name}#none`, id, body.body);
      }
      return undefined;
    };

    // GitHub (the API at the root).
    if (path.startsWith("/repos/") && h.has("x-github-api-version")) {
      if (h.get("authorization") !== `Bearer ${FORGE_TOKEN}`) return "token";
      if (h.get("accept") !== "application/vnd.github+json" || h.get("x-github-api-version") !== "2022-11-28")
        return "headers";
      const base = `/repos/${REPO}`;
      if (m === "POST" && path === `${base}/deployments`) {
        const { ref, environment, auto_merge, required_contexts } = body;
        if (typeof ref !== "string" || !/^[0-9a-f]{40}$/.test(ref) || typeof environment !== "string") return "body";
        if (auto_merge !== false || !Array.isArray(required_contexts) || required_contexts.length) return "checks";
        const id = nextId++;
        deployments.unshift({ id, sha: ref, ref, environment });
        return ok(201, { id, sha: ref, ref, environment });
      }
      if (m === "GET" && path === `${base}/deployments`) {
        // Newest first, as GitHub lists them.
        return ok(
          200,
          deployments.filter((d) => d.environment === url.searchParams.get("environment")),
        );
      }
      if (m === "POST" && (p = new RegExp(`^${base}/deployments/(\\d+)/statuses$`).exec(path))) {
        if (!GITHUB_STATES.has(String(body.state))) return "state";
        return ok(201, { id: nextId++, state: body.state });
      }
      // A pull request (GET /repos/{owner}/{repo}/pulls/{n}): open unless the test closed it.
      if (m === "GET" && (p = new RegExp(`^${base}/pulls/(\\d+)$`).exec(path)))
        return ok(200, { number: Number(p[1]), state: forge.closed.has(Number(p[1])) ? "closed" : "open" });
      return issueComments("github", base) ?? "not documented";
    }

    // Gitea (under /api/v1).
    if (path.startsWith("/api/v1/")) {
      if (h.get("authorization") !== `token ${FORGE_TOKEN}`) return "token";
      const base = `/api/v1/repos/${REPO}`;
      if (m === "POST" && (p = new RegExp(`^${base}/statuses/([0-9a-f]+)$`).exec(path))) {
        if (!GITEA_STATES.has(String(body.state)) || typeof body.context !== "string") return "status body";
        return ok(201, { id: nextId++ });
      }
      return issueComments("gitea", base) ?? "not documented";
    }

    // GitLab (under /api/v4): the project by its URL-encoded path.
    if (path.startsWith("/api/v4/")) {
      if (h.get("private-token") !== FORGE_TOKEN) return "token";
      const raw = new URL(request.url).pathname;
      const project = `/api/v4/projects/${encodeURIComponent(REPO)}`;
      if ((p = /^\/api\/v4\/projects\/(\d+)\/members\/all\/(\d+)$/.exec(raw)) && m === "GET") {
        const level = forge.members.get(`${p[1]}/${p[2]}`);
        if (level === undefined) return json(404, { message: "404 Not found" });
        return ok(200, { id: Number(p[2]), username: `user${p[2]}`, access_level: level, state: "active" });
      }
      if (!raw.startsWith(project)) return "project";
      const rest = raw.slice(project.length);
      if (m === "POST" && (p = /^\/statuses\/([0-9a-f]{40})$/.exec(rest))) {
        if (!GITLAB_STATES.has(String(body.state)) || typeof body.name !== "string") return "status body";
        return ok(201, { id: nextId++, status: body.state });
      }
      if (m === "GET" && rest === "/environments") {
        const name = url.searchParams.get("name");
        return ok(
          200,
          forge.environments.filter((e) => e.name === name),
        );
      }
      if (m === "POST" && rest === "/environments") {
        if (typeof body.name !== "string" || typeof body.external_url !== "string") return "environment body";
        if (forge.environments.some((e) => e.name === body.name))
          return json(400, { message: { name: ["has already been taken"] } });
        const environment = { id: nextId++, name: body.name, external_url: body.external_url, state: "available" };
        forge.environments.push(environment);
        return ok(201, environment);
      }
      if ((p = /^\/environments\/(\d+)(\/stop)?$/.exec(rest))) {
        const environment = forge.environments.find((e) => e.id === Number(p![1]));
        if (!environment) return json(404, { message: "404 Not found" });
        if (m === "PUT" && !p[2] && typeof body.external_url === "string") {
          environment.external_url = body.external_url;
          return ok(200, environment);
        }
        if (m === "POST" && p[2]) {
          environment.state = "stopped";
          return ok(200, environment);
        }
      }
      if (m === "POST" && rest === "/deployments") {
        const { environment, sha, ref, tag, status } = body;
        if (typeof environment !== "string" || typeof sha !== "string" || !/^[0-9a-f]{40}$/.test(sha)) return "body";
        if (typeof ref !== "string" || typeof tag !== "boolean" || !GITLAB_DEPLOYMENT.has(String(status)))
          return "body";
        return ok(201, { id: nextId++, status });
      }
      if (m === "PUT" && /^\/deployments\/\d+$/.test(rest)) {
        if (!GITLAB_DEPLOYMENT.has(String(body.status))) return "status";
        return ok(200, { status: body.status });
      }
      if ((p = /^\/merge_requests\/(\d+)\/notes(?:\/(\d+))?$/.exec(rest))) {
        const key = `gitlab#${p[1]}`;
        if (m === "GET" && !p[2])
          return page(thread(key), (c) => ({ id: c.id, body: c.body, author: { username: c.user } }), "gitlab");
        if (m === "POST" && !p[2] && typeof body.body === "string") {
          const comment = { id: nextId++, body: body.body, user: "service-bot" };
          thread(key).push(comment);
          return ok(201, { id: comment.id, body: comment.body });
        }
        if (m === "PUT" && p[2]) return edit(key, Number(p[2]), body.body);
      }
      return "not documented";
    }

    // Bitbucket (under /2.0).
    if (path.startsWith("/2.0/")) {
      if (h.get("authorization") !== `Bearer ${FORGE_TOKEN}`) return "token";
      const base = `/2.0/repositories/${REPO}`;
      if (m === "POST" && (p = new RegExp(`^${base}/commit/([0-9a-f]+)/statuses/build$`).exec(path))) {
        if (!SHA.test(p[1]!) || !BITBUCKET_STATES.has(String(body.state))) return "status";
        if (typeof body.key !== "string" || typeof body.url !== "string") return "status body";
        return ok(201, { key: body.key, state: body.state });
      }
      if ((p = new RegExp(`^${base}/pullrequests/(\\d+)/comments(?:/(\\d+))?$`).exec(path))) {
        const key = `bitbucket#${p[1]}`;
        const raw = (body.content as { raw?: unknown } | undefined)?.raw;
        if (m === "GET" && !p[2])
          return page(
            thread(key),
            (c) => ({ id: c.id, content: { raw: c.body }, user: { nickname: c.user } }),
            "bitbucket",
          );
        if (m === "POST" && !p[2] && typeof raw === "string") {
          const comment = { id: nextId++, body: raw, user: "service-bot" };
          thread(key).push(comment);
          return ok(201, { id: comment.id, content: { raw } });
        }
        if (m === "PUT" && p[2]) return edit(key, Number(p[2]), raw);
      }
      return "not documented";
    }
    return "not documented";
  }

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const text = await request.text();
      let body: Record<string, unknown> = {};
      if (text) {
        try {
          body = JSON.parse(text);
        } catch {
          forge.refused.push(`${request.method} ${new URL(request.url).pathname}: malformed JSON`);
          return json(400, { message: "Problems parsing JSON" });
        }
      }
      const answer = route(request, body);
      if (typeof answer !== "string") return answer;
      forge.refused.push(`${request.method} ${new URL(request.url).pathname}: ${answer}`);
      return json(answer === "token" ? 401 : 404, { message: answer === "token" ? "Bad credentials" : "Not Found" });
    },
  });
  servers.push(server);
  forge.url = `http://127.0.0.1:${server.port}`;
  return forge;
}
