/**
 * Pull request deliveries as GitHub and Gitea/Forgejo send them (trimmed of URLs), signed with the webhook secret,
 * and a server whose app has `previews`, for the tests of test/previews/.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { git, post, readJson, SECRET, type Repo, type RunningServer } from "./helpers.ts";
import { githubHeaders, hmacHex } from "./webhook-fixtures.ts";

export interface PullRequestOptions {
  action?: string;
  branch?: string;
  base?: string;
  title?: string;
  author?: string;
  sender?: string;
  association?: string;
  fork?: boolean;
  labels?: string[];
  label?: string;
  merged?: boolean;
}

/** A GitHub `pull_request` delivery's body (octokit's PullRequestOpenedEvent, trimmed). */
export function githubPullRequest(number: number, head: string, o: PullRequestOptions = {}): Record<string, unknown> {
  const base = { login: "acme" };
  const author = { login: o.author ?? "alice", id: 1, type: "User" };
  return {
    action: o.action ?? "opened",
    number,
    pull_request: {
      number,
      state: o.action === "closed" ? "closed" : "open",
      title: o.title ?? "Add the thing",
      user: author,
      author_association: o.association ?? "MEMBER",
      labels: (o.labels ?? []).map((name) => ({ name })),
      merged: o.merged ?? false,
      head: {
        ref: o.branch ?? "feature/thing",
        sha: head,
        repo: { full_name: o.fork ? "mallory/web" : "acme/web", owner: o.fork ? { login: "mallory" } : base },
      },
      base: { ref: o.base ?? "main", sha: "0".repeat(40), repo: { full_name: "acme/web", owner: base } },
    },
    ...(o.label ? { label: { name: o.label } } : {}),
    repository: { full_name: "acme/web", owner: base },
    sender: { login: o.sender ?? o.author ?? "alice", id: 2, type: "User" },
  };
}

/** A Gitea/Forgejo `pull_request` delivery's body: no association; `synchronized`, `label_updated`. */
export function giteaPullRequest(number: number, head: string, o: PullRequestOptions = {}): Record<string, unknown> {
  const body = githubPullRequest(number, head, o);
  const pr = body.pull_request as Record<string, unknown>;
  delete pr.author_association;
  return { ...body, action: o.action ?? "opened" };
}

/** POSTs a pull request delivery, signed as the forge signs it. */
export function deliverPullRequest(
  server: RunningServer,
  body: Record<string, unknown>,
  forge: "github" | "gitea" = "github",
  event = "pull_request",
  query = "",
): Promise<Response> {
  const text = JSON.stringify(body);
  const signature = hmacHex(SECRET, text);
  const headers: Record<string, string> =
    forge === "github"
      ? { ...githubHeaders(), "x-github-event": event, "x-hub-signature-256": `sha256=${signature}` }
      : {
          "content-type": "application/json",
          "x-github-event": event,
          "x-gitea-event": event,
          "x-gitea-delivery": crypto.randomUUID(),
          "x-gitea-signature": signature,
        };
  return post(`${server.url}/hook${query}`, { headers, body: text });
}

/** The previews' state of `app` as kept on disk (`{ previews: [], refusals: [] }` when there is none). */
export function previewState(cwd: string, app = "default"): { previews: any[]; refusals: any[] } {
  const file = join(cwd, ".service", "previews", `${app}.json`);
  return existsSync(file) ? readJson(file) : { previews: [], refusals: [] };
}

/** The preview of PR `number` once its status is one of `statuses`. */
export function previewOf(cwd: string, number: number, statuses: string[], app = "default") {
  const preview = previewState(cwd, app).previews.find((p) => p.number === number);
  return preview && statuses.includes(preview.status) ? preview : undefined;
}

/** A `previews` key for the tests: previews under `dir`, ports from 4100. */
export function previewsKey(dir: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  mkdirSync(dir, { recursive: true });
  return {
    path: join(dir, "previews"),
    url: "https://pr-{number}.preview.example.com",
    ports: "41000-41099",
    runScript: "echo built-$SERVICE_PREVIEW_NUMBER > built.txt",
    ...extra,
  };
}

/**
 * Pushes a commit of `files` on top of main as PR `number`'s head (`refs/pull/<n>/head`, or `ref` as another forge
 * names it: GitLab's `refs/merge-requests/<iid>/head`, Bitbucket's branch), forced, main untouched.
 */
export function pushPullHead(
  repo: Repo,
  number: number,
  files: Record<string, string> = { "app.txt": `pr ${number}\n` },
  ref = `refs/pull/${number}/head`,
) {
  const pusher = join(repo.dir, "pusher");
  const main = git(pusher, "rev-parse", "HEAD");
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(pusher, name)), { recursive: true });
    writeFileSync(join(pusher, name), content);
  }
  git(pusher, "add", "-A");
  git(pusher, "commit", "--quiet", "--allow-empty", "-m", `pull request ${number}`);
  const made = git(pusher, "rev-parse", "HEAD");
  git(pusher, "push", "--quiet", "origin", `+HEAD:${ref}`);
  git(pusher, "reset", "--quiet", "--hard", main);
  return made;
}
