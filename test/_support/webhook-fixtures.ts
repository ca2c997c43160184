/**
 * Fixtures for the multi-app and Git host tests: config files, requests routed by Host, signatures computed
 * the way each Git host computes them, recorded-style push payloads, and the deploy records in the logs.
 * Chunked bodies made by hand (fetch will not send them) are raw-http.ts's.
 */
import { createHmac } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";

/** Writes `service.yaml` in `dir` (YAML from an object, so paths need no quoting by hand). */
export function writeServiceYaml(dir: string, config: Record<string, unknown>): string {
  const file = join(dir, "service.yaml");
  writeFileSync(file, stringify(config));
  return file;
}

/** POST to the server with an explicit Host header (the route of an app). */
export function postAs(
  baseUrl: string,
  host: string | undefined,
  path: string,
  options: { secret?: string; headers?: Record<string, string>; body?: string | ReadableStream<Uint8Array> } = {},
): Promise<Response> {
  const headers: Record<string, string> = {
    ...(host !== undefined ? { host } : {}),
    ...(options.secret !== undefined ? { "x-service-secret": options.secret } : {}),
    ...options.headers,
  };
  return fetch(`${baseUrl}${path}`, { method: "POST", headers, body: options.body });
}

/** `<hex HMAC(secret, body)>`, the way GitHub, Gitea/Forgejo and Bitbucket Cloud sign a delivery. */
export function hmacHex(secret: string, body: string | Uint8Array, algorithm: "sha256" | "sha1" = "sha256"): string {
  return createHmac(algorithm, secret).update(body).digest("hex");
}

/** A file named `name` in `dir` holds one line per run of the app's script (see `markerScript`). */
export function markerCount(dir: string, name: string): number {
  const file = join(dir, name);
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0;
}

/** A run script that appends `<app>` to `<dir>/<name>`: which app ran, and how often. */
export function markerScript(dir: string, name: string): string {
  return `echo "ran $SERVICE_APP" >> '${join(dir, name)}'`;
}

/** Every `.json` deploy record under `<cwd>/.service/logs`, by start time (file names sort by the second only). */
export function deployRecords(cwd: string): any[] {
  const dir = join(cwd, ".service", "logs");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.parse(readFileSync(join(dir, f), "utf8")))
    .sort((a, b) => String(a.startedAt).localeCompare(String(b.startedAt)));
}

export function jsonLogFiles(cwd: string): string[] {
  const dir = join(cwd, ".service", "logs");
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".json")) : [];
}

/** The chunked framing of a body: `chunkedBytes` of raw-http.ts, by its older name. */
export { chunkedBytes as chunked } from "./raw-http.ts";

const SHA = "6113728f27ae82c7b1a177c8d03f9e96e0adf246";
const BEFORE = "0000000000000000000000000000000000000000";

/**
 * A push payload whose pushed commit (`after`, GitLab's `checkout_sha`, Bitbucket's `new.target.hash`, the commit
 * ids) is `commit`: with a branch filter the deploy checks that HEAD is that commit after the pull, so a delivery
 * that must deploy names a commit of the test's repository.
 */
export function atCommit<T extends Record<string, unknown>>(payload: T, commit: string): T {
  return JSON.parse(JSON.stringify(payload).replaceAll(SHA, commit)) as T;
}

/** A GitHub `push` delivery as GitHub sends it (trimmed of URLs that change nothing here). */
export function githubPush(ref = "refs/heads/main", extraCommits = 0): Record<string, unknown> {
  const commit = (i: number) => ({
    id: `${SHA.slice(0, 39)}${i % 10}`,
    tree_id: "f9d2a07e9488b91af2641b26b9407fe22a451433",
    distinct: true,
    message: i === 0 ? "Update README.md" : `Commit number ${i}: ${"lorem ipsum ".repeat(4)}`,
    timestamp: "2026-05-04T10:15:31+02:00",
    url: `https://github.com/octo-org/website/commit/${SHA}`,
    author: { name: "Mona Octocat", email: "mona@github.com", username: "octocat" },
    committer: { name: "GitHub", email: "noreply@github.com", username: "web-flow" },
    added: [],
    removed: [],
    modified: ["README.md"],
  });
  const commits = Array.from({ length: 1 + extraCommits }, (_, i) => commit(i));
  return {
    ref,
    before: BEFORE,
    after: SHA,
    repository: {
      id: 186853002,
      node_id: "MDEwOlJlcG9zaXRvcnkxODY4NTMwMDI=",
      name: "website",
      full_name: "octo-org/website",
      private: false,
      owner: { name: "octo-org", login: "octo-org", id: 6811672, type: "Organization" },
      html_url: "https://github.com/octo-org/website",
      clone_url: "https://github.com/octo-org/website.git",
      ssh_url: "git@github.com:octo-org/website.git",
      default_branch: "main",
      master_branch: "main",
    },
    pusher: { name: "octocat", email: "mona@github.com" },
    sender: { login: "octocat", id: 583231, type: "User" },
    created: false,
    deleted: false,
    forced: false,
    base_ref: null,
    compare: `https://github.com/octo-org/website/compare/000000000000...${SHA.slice(0, 12)}`,
    commits,
    head_commit: commits[commits.length - 1],
  };
}

/** The headers GitHub sends with a delivery, the signatures left to the caller. */
export function githubHeaders(contentType = "application/json"): Record<string, string> {
  return {
    "content-type": contentType,
    "user-agent": "GitHub-Hookshot/a1b2c3d",
    "x-github-event": "push",
    "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
    "x-github-hook-id": "292430182",
    "x-github-hook-installation-target-id": "79929171",
    "x-github-hook-installation-target-type": "repository",
  };
}

/** A Gitea/Forgejo push delivery. */
export function giteaPush(ref = "refs/heads/main"): Record<string, unknown> {
  return {
    ref,
    before: BEFORE,
    after: SHA,
    compare_url: "https://gitea.example.com/org/website/compare/0000000...6113728",
    commits: [
      {
        id: SHA,
        message: "Update README.md\n",
        url: `https://gitea.example.com/org/website/commit/${SHA}`,
        author: { name: "Gitea", email: "gitea@example.com", username: "gitea" },
      },
    ],
    total_commits: 1,
    repository: {
      id: 1,
      name: "website",
      full_name: "org/website",
      default_branch: "main",
      clone_url: "https://gitea.example.com/org/website.git",
    },
    pusher: { id: 1, login: "gitea", email: "gitea@example.com" },
    sender: { id: 1, login: "gitea", email: "gitea@example.com" },
  };
}

/** A Bitbucket Cloud `repo:push` delivery: the branch is in push.changes[].new. */
export function bitbucketPush(branch = "main"): Record<string, unknown> {
  const target = {
    type: "commit",
    hash: SHA,
    message: "Update README.md\n",
    date: "2026-05-04T08:15:31+00:00",
    author: { raw: "Mona <mona@example.com>" },
  };
  return {
    push: {
      changes: [
        {
          new: { type: "branch", name: branch, target },
          old: { type: "branch", name: branch, target: { ...target, hash: BEFORE } },
          created: false,
          closed: false,
          forced: false,
          truncated: false,
          commits: [target],
        },
      ],
    },
    repository: {
      type: "repository",
      name: "website",
      full_name: "octo-team/website",
      uuid: "{5ae3b5a8-1f3e-4a4c-b5a7-0f53d8a1d3f2}",
      scm: "git",
    },
    actor: { type: "user", display_name: "Mona", uuid: "{0d0f7b4e-2a0e-4b4d-9a48-2d6c4a1f2b3c}" },
  };
}

export function bitbucketHeaders(): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": "Bitbucket-Webhooks/2.0",
    "x-event-key": "repo:push",
    "x-request-uuid": "c7b9d2a4-7e4a-4c1f-9f2e-1b6d8a3e5f70",
    "x-hook-uuid": "{3a1c9f0e-8b7d-4e6a-a2c5-9d4f1b0e7c36}",
    "x-attempt-number": "1",
  };
}

/** A GitLab "Push Hook" delivery. */
export function gitlabPush(ref = "refs/heads/main"): Record<string, unknown> {
  return {
    object_kind: "push",
    event_name: "push",
    before: BEFORE,
    after: SHA,
    ref,
    ref_protected: true,
    checkout_sha: SHA,
    user_id: 4,
    user_name: "John Smith",
    user_username: "jsmith",
    project_id: 15,
    project: {
      id: 15,
      name: "website",
      path_with_namespace: "mike/website",
      default_branch: "main",
      git_http_url: "https://gitlab.example.com/mike/website.git",
    },
    commits: [
      {
        id: SHA,
        message: "Update README.md\n",
        title: "Update README.md",
        timestamp: "2026-05-04T10:15:31+02:00",
        author: { name: "John Smith", email: "john@example.com" },
        added: [],
        modified: ["README.md"],
        removed: [],
      },
    ],
    total_commits_count: 1,
    repository: {
      name: "website",
      url: "git@gitlab.example.com:mike/website.git",
      homepage: "https://gitlab.example.com/mike/website",
    },
  };
}

export function gitlabHeaders(): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": "GitLab/17.0.0",
    "x-gitlab-event": "Push Hook",
    "x-gitlab-event-uuid": "13792a34-cac6-4fda-95a8-c58e00a3954e",
    "x-gitlab-instance": "https://gitlab.example.com",
    "x-gitlab-webhook-uuid": "5d2a6c8b-3f10-4b8e-9a7d-1e4c0f6b2a93",
  };
}

const GITHUB_REPOSITORY = {
  id: 186853002,
  name: "website",
  full_name: "octo-org/website",
  private: false,
  default_branch: "main",
  html_url: "https://github.com/octo-org/website",
};
const GITHUB_SENDER = { login: "octocat", id: 583231, type: "User" };

/**
 * GitHub deliveries other than `push`, as GitHub sends them (trimmed of URLs that change nothing here): what
 * a webhook left at "Send me everything", or created a moment ago (`ping`), delivers.
 */
export function githubEvent(
  event: "ping" | "create" | "star" | "issues" | "pull_request" | "release" | "workflow_run",
  ref = "simple-tag",
): Record<string, unknown> {
  const base = { repository: GITHUB_REPOSITORY, sender: GITHUB_SENDER };
  switch (event) {
    case "ping":
      return {
        zen: "Design for failure.",
        hook_id: 292430182,
        hook: {
          type: "Repository",
          id: 292430182,
          name: "web",
          active: true,
          events: ["push"],
          config: { content_type: "json", insecure_ssl: "0", url: "https://deploy.example.com/" },
        },
        ...base,
      };
    case "create":
      return { ref, ref_type: "tag", master_branch: "main", description: null, pusher_type: "user", ...base };
    case "star":
      return { action: "created", starred_at: "2026-05-04T08:15:31Z", ...base };
    case "issues":
      return {
        action: "opened",
        issue: { number: 7, title: "The deploy shows ok although it rolled back", state: "open", user: GITHUB_SENDER },
        ...base,
      };
    case "pull_request":
      return {
        action: "opened",
        number: 8,
        pull_request: {
          number: 8,
          state: "open",
          title: "Fix the build",
          head: { ref: "fix-build", sha: SHA },
          base: { ref: "main", sha: SHA },
        },
        ...base,
      };
    case "release":
      return {
        action: "published",
        release: {
          id: 1,
          tag_name: "v1.0.0",
          target_commitish: "main",
          name: "v1.0.0",
          draft: false,
          prerelease: false,
        },
        ...base,
      };
    case "workflow_run":
      return {
        action: "completed",
        workflow_run: {
          id: 30433642,
          name: "CI",
          head_branch: "main",
          head_sha: SHA,
          event: "push",
          status: "completed",
          conclusion: "success",
        },
        ...base,
      };
  }
}

/** A GitLab "Tag Push Hook" delivery: `ref` is the tag, `object_kind` is tag_push. */
export function gitlabTagPush(tag = "v1.0.0"): Record<string, unknown> {
  return { ...gitlabPush(`refs/tags/${tag}`), object_kind: "tag_push", event_name: "tag_push" };
}
