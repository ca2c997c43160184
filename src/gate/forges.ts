/**
 * What a forge says of a commit's checks, read through each forge's documented API (the forge, repository, API and
 * token: config/forge.ts; the bounds of a read: gate/forge-read.ts; the verdict on them: gate/checks.ts).
 */
import type { StatusTarget } from "../config/forge.ts";
import { basicCredential } from "../config/notify.ts";
import { asList, boundedRead, type Next, pages, type Read } from "./forge-read.ts";
import type { CheckState, ForgeRead, ReportedCheck } from "./types.ts";

const FORGE_NAMES = { github: "GitHub", gitlab: "GitLab", gitea: "Gitea", bitbucket: "Bitbucket" } as const;

type Json = Record<string, unknown>;

/**
 * The checks reported on `sha`: GitHub's statuses and check runs, GitLab's, Gitea's and Bitbucket's commit
 * statuses, the latest of each name (and reporter, where the forge names one); or why they could not be read
 * (fatal: the forge refused, 401, 403, 404, or answered out of bounds; else worth reading again).
 */
export function readChecks(
  target: StatusTarget,
  sha: string,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<ForgeRead> {
  return boundedRead(target, FORGE_NAMES[target.provider], authHeaders(target), options, (read) =>
    READERS[target.provider](read, encodeURIComponent(sha)),
  );
}

/** The same auth as the statuses written (notify/commit-status.ts): each forge's own scheme. */
export function authHeaders(target: StatusTarget): Record<string, string> {
  const { token } = target;
  switch (target.provider) {
    case "github":
      return {
        authorization: `Bearer ${token}`,
        accept: "application/vnd.github+json",
        "x-github-api-version": "2022-11-28",
      };
    case "gitea":
      return { authorization: `token ${token}`, accept: "application/json" };
    case "gitlab":
      return { "private-token": token, accept: "application/json" };
    case "bitbucket":
      // An app password is written `username:app-password` (Basic); an access token alone is a Bearer token.
      return {
        authorization: token.includes(":") ? `Basic ${basicCredential(token)}` : `Bearer ${token}`,
        accept: "application/json",
      };
  }
}

const repoPath = (repo: string) => repo.split("/").map(encodeURIComponent).join("/");

const READERS: Record<StatusTarget["provider"], (read: Read, sha: string) => Promise<ReportedCheck[]>> = {
  async github(read, sha) {
    const base = `${read.target.apiUrl}/repos/${repoPath(read.target.repo)}/commits/${sha}`;
    // The list, not the combined status: only the list names each status's creator, which a pinned entry needs.
    // It is newest first; the latest per context and creator is kept.
    const statuses = await pages(read, `${base}/statuses?per_page=100`, linkNext, asList, "statuses");
    const runs = await pages(
      read,
      `${base}/check-runs?per_page=100`,
      linkNext,
      (b) => asList((b as Json)?.check_runs),
      "check runs",
    );
    const byReporter = (c: ReportedCheck) => `${c.name}\n${c.by ?? ""}`;
    return [...latest(statuses.map(githubStatus), byReporter), ...latest(runs.map(checkRun), byReporter)];
  },

  async gitlab(read, sha) {
    const base = `${read.target.apiUrl}/projects/${encodeURIComponent(read.target.repo)}/repository/commits/${sha}/statuses`;
    const page = (n: number) => `${base}?per_page=100&page=${n}`;
    const next: Next = (url, _body, headers) => {
      const n = headers.get("x-next-page")?.trim() ?? "";
      const current = Number(url.searchParams.get("page"));
      return /^\d+$/.test(n) && Number(n) > current ? page(Number(n)) : undefined;
    };
    const statuses = await pages(read, page(1), next, asList, "statuses");
    // The latest per name: a job retried by someone else replaces the one it retried.
    return latest(statuses.map(gitlabStatus), (c) => c.name);
  },

  async gitea(read, sha) {
    const limit = 50;
    const base = `${read.target.apiUrl}/repos/${repoPath(read.target.repo)}/commits/${sha}/status`;
    const page = (n: number) => `${base}?page=${n}&limit=${limit}`;
    let seen = 0;
    const next: Next = (url, _body, headers, items) => {
      seen += items;
      const total = Number(headers.get("x-total-count") ?? Number.NaN);
      const more = Number.isInteger(total) ? seen < total && items > 0 : items === limit;
      return more ? page(Number(url.searchParams.get("page")) + 1) : undefined;
    };
    const statuses = await pages(read, page(1), next, (b) => asList((b as Json)?.statuses), "statuses");
    return latest(statuses.map(giteaStatus), (c) => c.name);
  },

  async bitbucket(read, sha) {
    const url = `${read.target.apiUrl}/repositories/${repoPath(read.target.repo)}/commit/${sha}/statuses?pagelen=100`;
    const next: Next = (_url, body) => text((body as Json)?.next);
    const values = await pages(read, url, next, (b) => asList((b as Json)?.values), "statuses");
    return latest(values.map(bitbucketStatus), (c) => c.name);
  },
};

/** A check with what orders it among its namesakes: compared first to last, the greater is newer. */
type Ordered = ReportedCheck & { order: number[] };

const newer = (a: number[], b: number[]) => {
  const i = a.findIndex((value, n) => value !== b[n]);
  return i >= 0 && a[i]! > (b[i] ?? Number.NEGATIVE_INFINITY);
};

/** The newest check of each key, without its order; checks without a name are dropped. */
function latest(checks: Ordered[], key: (check: Ordered) => string): ReportedCheck[] {
  const kept = new Map<string, Ordered>();
  for (const check of checks) {
    if (!check.name) continue;
    const current = kept.get(key(check));
    if (!current || newer(check.order, current.order)) kept.set(key(check), check);
  }
  return [...kept.values()].map(({ order: _, ...reported }) => reported);
}

/** An entry's fields; an entry that is no object has none (and, without a name, is dropped). */
const fields = (item: unknown) => (item && typeof item === "object" ? item : {}) as Json;
const text = (value: unknown) => (typeof value === "string" && value ? value : undefined);
const num = (value: unknown) => (typeof value === "number" ? value : 0);
const time = (value: unknown) => {
  const ms = Date.parse(text(value) ?? "");
  return Number.isNaN(ms) ? 0 : ms;
};

function check(name: unknown, state: CheckState, url: unknown, by: unknown, at: unknown, order: number[]): Ordered {
  const checked: Ordered = { name: text(name) ?? "", state, order };
  if (text(url)) checked.url = text(url);
  if (text(by)) checked.by = text(by);
  if (text(at)) checked.updatedAt = text(at);
  return checked;
}

/** GitHub's status states are ours; one it may add later waits. */
const githubStates: Record<string, CheckState> = {
  success: "success",
  pending: "pending",
  failure: "failure",
  error: "error",
};

function githubStatus(item: unknown, index: number): Ordered {
  const s = fields(item);
  // Newest first: a higher id, or else an earlier place in the list, is newer.
  const order = [num(s.id), -index];
  return check(
    s.context,
    githubStates[String(s.state)] ?? "pending",
    s.target_url,
    (s.creator as Json)?.login,
    s.updated_at,
    order,
  );
}

/**
 * A check run: pending until completed; then its conclusion. neutral and skipped pass (as GitHub's own required
 * checks count them); stale is GitHub's own "no answer yet", so it waits.
 */
const conclusions: Record<string, CheckState> = {
  success: "success",
  neutral: "success",
  skipped: "success",
  failure: "failure",
  timed_out: "failure",
  action_required: "failure",
  startup_failure: "failure",
  cancelled: "cancelled",
};

function checkRun(item: unknown): Ordered {
  const r = fields(item);
  const state = r.status === "completed" ? (conclusions[String(r.conclusion)] ?? "pending") : "pending";
  // The latest run of a name and app is the newest by id: a re-run is a new run with a higher id, and one still
  // queued has no start time (an older success ordered by `started_at` would win and open the gate).
  const order = [num(r.id)];
  return check(
    r.name,
    state,
    text(r.html_url) ?? r.details_url,
    (r.app as Json)?.slug,
    r.completed_at ?? r.started_at,
    order,
  );
}

/**
 * GitLab's job and status states. skipped passes, like a skipped check run on GitHub (a job skipped because an
 * earlier one failed leaves that failure to be seen); manual and scheduled wait for someone or something to start
 * them.
 */
const gitlabStates: Record<string, CheckState> = {
  success: "success",
  skipped: "success",
  failed: "failure",
  canceled: "cancelled",
};

function gitlabStatus(item: unknown): Ordered {
  const s = fields(item);
  const state = gitlabStates[String(s.status)] ?? "pending";
  const at = s.finished_at ?? s.started_at ?? s.created_at;
  return check(s.name, state, s.target_url, (s.author as Json)?.username, at, [num(s.id)]);
}

/** Gitea's states; a warning is a finished check that did not pass: it shuts the gate like a failure. */
const giteaStates: Record<string, CheckState> = {
  success: "success",
  pending: "pending",
  failure: "failure",
  error: "error",
  warning: "failure",
};

function giteaStatus(item: unknown): Ordered {
  const s = fields(item);
  const state = giteaStates[String(s.status ?? s.state)] ?? "pending";
  return check(s.context, state, s.target_url, (s.creator as Json)?.login, s.updated_at, [num(s.id)]);
}

/**
 * Bitbucket's build statuses, by name (this server writes its context as the name, cut to 40 characters as the
 * key), else by key. Bitbucket does not say who reported one: no `by`, so a pinned entry never matches there.
 */
const bitbucketStates: Record<string, CheckState> = {
  SUCCESSFUL: "success",
  INPROGRESS: "pending",
  FAILED: "failure",
  STOPPED: "cancelled",
};

function bitbucketStatus(item: unknown): Ordered {
  const s = fields(item);
  const state = bitbucketStates[String(s.state)] ?? "pending";
  return check(text(s.name) ?? s.key, state, s.url, undefined, s.updated_on, [time(s.updated_on)]);
}

/** GitHub's `Link: <…>; rel="next"`. */
const linkNext: Next = (_url, _body, headers) => {
  for (const part of (headers.get("link") ?? "").split(",")) {
    const match = /<([^>]*)>\s*;(?:.*;)?\s*rel="?next"?/.exec(part);
    if (match) return match[1];
  }
  return undefined;
};
