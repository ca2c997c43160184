/**
 * docs/previews.md "GitLab" and "Bitbucket": their deliveries reach the one dispatch. A GitLab merge request is built
 * from `refs/merge-requests/<iid>/head` once its author's access level (asked of the API) is among previews.authors,
 * and told through GitLab's environments and deployments; a Bitbucket pull request is built from its branch, the
 * 12-digit commit of its event matched against the fetched one, and a fork is refused whatever the settings.
 * The forge's API is played locally (preview-forge.ts), each request checked.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, post, SECRET, startServer, tempDir, waitFor, type RunningServer } from "../_support/helpers.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";
import { hmacHex } from "../_support/webhook-fixtures.ts";
import { previewOf, previewState, previewsKey, pushPullHead } from "../_support/pull-requests.ts";
import { FORGE_TOKEN, previewForge, REPO } from "../_support/preview-forge.ts";

const servers: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

async function serve(status: Record<string, unknown> | undefined, previews: Record<string, unknown>) {
  const repo = makeRepo();
  const cwd = tempDir();
  writeServiceYaml(cwd, {
    secret: SECRET,
    repoPath: repo.clone,
    runScript: "echo production",
    path: "/hook",
    ...(status ? { status } : {}),
    previews: previewsKey(cwd, previews),
  });
  const server = await startServer(cwd);
  servers.push(server);
  return { repo, cwd, server };
}

function mergeRequest(iid: number, head: string, author: { id: number; username: string }, action = "open") {
  return {
    object_kind: "merge_request",
    event_type: "merge_request",
    user: { id: author.id, name: author.username, username: author.username },
    project: { id: 14, path_with_namespace: REPO },
    object_attributes: {
      iid,
      target_branch: "main",
      source_branch: "feature/login",
      source_project_id: 14,
      target_project_id: 14,
      author_id: author.id,
      title: "Login <b>page</b>",
      state: "opened",
      last_commit: { id: head, message: "login" },
      labels: [],
      action,
    },
    labels: [],
    changes: {},
  };
}

const deliverGitlab = (server: RunningServer, body: unknown) =>
  post(`${server.url}/hook`, {
    headers: { "content-type": "application/json", "x-gitlab-event": "Merge Request Hook", "x-gitlab-token": SECRET },
    body: JSON.stringify(body),
  });

describe("GitLab merge requests", () => {
  const gitlab = (forge: ReturnType<typeof previewForge>) => ({
    provider: "gitlab",
    apiUrl: `${forge.url}/api/v4`,
    repo: REPO,
    token: FORGE_TOKEN,
  });

  test("a member's merge request is built from its merge request ref and told through an environment", async () => {
    const forge = previewForge();
    forge.members.set("14/51", 30);
    const { repo, cwd, server } = await serve(gitlab(forge), { authors: ["MEMBER"] });
    const head = pushPullHead(repo, 5, undefined, "refs/merge-requests/5/head");
    const answer = await deliverGitlab(server, mergeRequest(5, head, { id: 51, username: "alice" }));
    expect(answer.status).toBe(200);
    expect(await answer.text()).toContain(`building ${head.slice(0, 12)}`);
    const preview = await waitFor(() => previewOf(cwd, 5, ["running", "failed"]), "the preview built");
    expect(preview).toMatchObject({ status: "running", head, forge: "gitlab" });
    expect(readFileSync(join(preview.dir, "built.txt"), "utf8")).toBe("built-5\n");
    await waitFor(() => forge.environments.find((e) => e.name === "review/pr-5"), "the environment");
    expect(forge.refused).toEqual([]);
  });

  test("an author below previews.authors' level is refused at the door, and nothing is built", async () => {
    const forge = previewForge();
    forge.members.set("14/52", 20);
    const { repo, cwd, server } = await serve(gitlab(forge), { authors: ["MEMBER"] });
    const head = pushPullHead(repo, 6, undefined, "refs/merge-requests/6/head");
    const answer = await deliverGitlab(server, mergeRequest(6, head, { id: 52, username: "mallory" }));
    expect(await answer.text()).toContain("[skipped]");
    const state = previewState(cwd);
    expect(state.previews).toEqual([]);
    expect(state.refusals.map((r) => r.reason)).toEqual(["author"]);
  });

  test("an event whose head is not the merge request ref's is refused, naming both commits", async () => {
    const { repo, cwd, server } = await serve(undefined, { authors: ["user:alice"] });
    const head = pushPullHead(repo, 7, undefined, "refs/merge-requests/7/head");
    const other = "0123456789abcdef0123456789abcdef01234567";
    const answer = await deliverGitlab(server, mergeRequest(7, other, { id: 51, username: "alice" }));
    const text = await answer.text();
    expect(text).toContain(head);
    expect(text).toContain(other);
    expect(previewState(cwd).refusals.map((r) => r.reason)).toEqual(["head"]);
  });
});

function bitbucketPullRequest(id: number, hash: string, branch: string, sourceRepo: string) {
  const repo = (uuid: string) => ({ type: "repository", full_name: REPO, uuid, name: "web" });
  const alice = { type: "user", display_name: "Alice", nickname: "alice", account_id: "557058:alice" };
  return {
    pullrequest: {
      id,
      title: "A new page",
      state: "OPEN",
      source: { repository: repo(sourceRepo), commit: { hash }, branch: { name: branch } },
      destination: { repository: repo("{base}"), commit: { hash: "32c4ea19aa3a" }, branch: { name: "main" } },
      author: alice,
    },
    actor: alice,
    repository: { full_name: REPO },
  };
}

const deliverBitbucket = (server: RunningServer, body: unknown) => {
  const text = JSON.stringify(body);
  return post(`${server.url}/hook`, {
    headers: {
      "content-type": "application/json",
      "x-event-key": "pullrequest:created",
      "x-request-uuid": crypto.randomUUID(),
      "x-hub-signature": `sha256=${hmacHex(SECRET, text)}`,
    },
    body: text,
  });
};

describe("Bitbucket pull requests", () => {
  test("built from its branch; the event's 12-digit commit matches the fetched one, which the preview keeps whole", async () => {
    const { repo, cwd, server } = await serve(undefined, { authors: ["user:557058:alice"] });
    const head = pushPullHead(repo, 8, undefined, "refs/heads/feature-8");
    const answer = await deliverBitbucket(server, bitbucketPullRequest(8, head.slice(0, 12), "feature-8", "{base}"));
    expect(await answer.text()).toContain("building");
    const preview = await waitFor(() => previewOf(cwd, 8, ["running", "failed"]), "the preview built");
    expect(preview).toMatchObject({ status: "running", head, forge: "bitbucket" });
  });

  test("a fork's pull request is refused whatever the settings say", async () => {
    const { repo, cwd, server } = await serve(undefined, { authors: ["user:557058:alice"] });
    const head = pushPullHead(repo, 9, undefined, "refs/heads/feature-9");
    const answer = await deliverBitbucket(server, bitbucketPullRequest(9, head.slice(0, 12), "feature-9", "{fork}"));
    expect(await answer.text()).toContain("bitbucket: previews of forks are not supported");
    const state = previewState(cwd);
    expect(state.previews).toEqual([]);
    expect(state.refusals.map((r) => r.reason)).toEqual(["fork"]);
  });
});
