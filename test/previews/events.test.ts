/**
 * docs/previews.md "GitLab" and "Bitbucket": each forge's documented pull request delivery made one pull request
 * event; what asks nothing of previews is a skip, a Bitbucket fork a refusal.
 */
import { describe, expect, test } from "bun:test";
import { parseBitbucketPullRequest, BITBUCKET_FORK_REFUSAL } from "../../src/previews/events-bitbucket.ts";
import { parseGitlabMergeRequest } from "../../src/previews/events-gitlab.ts";

const HEAD = "da1560886d4f094c3e6c9ef40349f7d38b5d27d7";
const OLD = "95790bf891e76fee5e1747ab589903a6a1f80f22";

/** GitLab's documented Merge Request Hook (webhook_events.md), the parts read, with `attributes` changed. */
function gitlabPayload(attributes: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return {
    object_kind: "merge_request",
    event_type: "merge_request",
    user: { id: 51, name: "Alice", username: "alice", email: "alice@example.com" },
    project: { id: 14, name: "Gitlab Test", path_with_namespace: "gitlabhq/gitlab-test" },
    object_attributes: {
      id: 99,
      iid: 1,
      target_branch: "master",
      source_branch: "ms-viewport",
      source_project_id: 14,
      author_id: 51,
      title: "MS-Viewport",
      state: "opened",
      target_project_id: 14,
      url: "http://example.com/diaspora/merge_requests/1",
      last_commit: { id: HEAD, message: "fixed readme", title: "Update file README.md" },
      labels: [{ id: 206, title: "API" }],
      action: "open",
      ...attributes,
    },
    labels: [{ id: 206, title: "API" }],
    changes: {},
    ...extra,
  };
}

const gitlabHeaders = (event = "Merge Request Hook") => new Headers({ "x-gitlab-event": event });

describe("GitLab merge request events", () => {
  test("open is an event with the last commit, the merge request ref, the project and the author", () => {
    const parsed = parseGitlabMergeRequest(gitlabHeaders(), gitlabPayload());
    expect(parsed).toEqual({
      event: {
        forge: "gitlab",
        action: "open",
        number: 1,
        title: "MS-Viewport",
        branch: "ms-viewport",
        base: "master",
        head: HEAD,
        fetchRef: "refs/merge-requests/1/head",
        fork: false,
        author: "alice",
        sender: "alice",
        labels: ["API"],
        projectId: 14,
        authorId: 51,
        senderId: 51,
      },
    });
  });

  test("reopen opens; an update with oldrev is new commits; close and merge close", () => {
    const action = (attributes: Record<string, unknown>) => {
      const parsed = parseGitlabMergeRequest(gitlabHeaders(), gitlabPayload(attributes));
      return "event" in parsed ? [parsed.event.action, parsed.event.merged ?? false] : parsed;
    };
    expect(action({ action: "reopen" })).toEqual(["open", false]);
    expect(action({ action: "update", oldrev: OLD })).toEqual(["push", false]);
    expect(action({ action: "close" })).toEqual(["close", false]);
    expect(action({ action: "merge" })).toEqual(["close", true]);
  });

  test("an update without new commits, an approval and another hook are skips", () => {
    expect(parseGitlabMergeRequest(gitlabHeaders(), gitlabPayload({ action: "update" }))).toEqual({
      skip: "gitlab: a merge request update without new commits",
    });
    expect(parseGitlabMergeRequest(gitlabHeaders(), gitlabPayload({ action: "approved" }))).toEqual({
      skip: "gitlab: merge request approved: nothing for previews",
    });
    expect(parseGitlabMergeRequest(gitlabHeaders("Push Hook"), gitlabPayload())).toEqual({
      skip: "gitlab: Push Hook event: not a merge request",
    });
  });

  test("an update that adds a label is a label event naming it", () => {
    const changes = { labels: { previous: [{ title: "API" }], current: [{ title: "API" }, { title: "preview" }] } };
    const parsed = parseGitlabMergeRequest(gitlabHeaders(), gitlabPayload({ action: "update" }, { changes }));
    expect(parsed).toMatchObject({ event: { action: "label", label: "preview" } });
  });

  test("a merge request from another project is a fork; one sent by someone else names no author login", () => {
    const parsed = parseGitlabMergeRequest(
      gitlabHeaders(),
      gitlabPayload({ source_project_id: 99, action: "update", oldrev: OLD }, { user: { id: 7, username: "bob" } }),
    );
    expect(parsed).toMatchObject({
      event: { fork: true, author: "", sender: "bob", authorId: 51, senderId: 7, projectId: 14 },
    });
  });

  test("a payload missing what previews need is a skip that says what, never a throw", () => {
    expect(parseGitlabMergeRequest(gitlabHeaders(), undefined)).toEqual({
      skip: "gitlab: the body is no merge request",
    });
    expect(parseGitlabMergeRequest(gitlabHeaders(), gitlabPayload({ last_commit: { id: "abc" } }))).toEqual({
      skip: "gitlab: merge request !1 names no last commit",
    });
    expect(parseGitlabMergeRequest(gitlabHeaders(), gitlabPayload({ source_branch: "--upload-pack=x" }))).toEqual({
      skip: "gitlab: merge request !1 names no valid source and target branch",
    });
    expect(parseGitlabMergeRequest(gitlabHeaders(), gitlabPayload({ iid: "1" }))).toEqual({
      skip: "gitlab: the merge request has no iid",
    });
  });
});

/** Bitbucket Cloud's pull request delivery (the Pull Request entity of its event payloads), the parts read. */
function bitbucketPayload(pr: Record<string, unknown> = {}, sourceRepo = "{59005838-3978-410b-84fd-8b4ce1b41089}") {
  const repo = (uuid: string) => ({ type: "repository", full_name: "acme/web", uuid, name: "web" });
  return {
    pullrequest: {
      id: 7,
      title: "new commit",
      state: "OPEN",
      source: { repository: repo(sourceRepo), commit: { hash: "9c833166dcef" }, branch: { name: "new-branch" } },
      destination: {
        repository: repo("{59005838-3978-410b-84fd-8b4ce1b41089}"),
        commit: { hash: "32c4ea19aa3a" },
        branch: { name: "main" },
      },
      author: { type: "user", display_name: "Alice", nickname: "alice", account_id: "557058:alice-id" },
      ...pr,
    },
    actor: { type: "user", display_name: "Bob", nickname: "bob", account_id: "557058:bob-id" },
    repository: { full_name: "acme/web" },
  };
}

const bitbucketHeaders = (key: string) => new Headers({ "x-event-key": key, "x-request-uuid": "d-1" });

describe("Bitbucket pull request events", () => {
  test("created is an event on the source branch, with the commit as Bitbucket names it and the account ids", () => {
    expect(parseBitbucketPullRequest(bitbucketHeaders("pullrequest:created"), bitbucketPayload())).toEqual({
      event: {
        forge: "bitbucket",
        action: "open",
        number: 7,
        title: "new commit",
        branch: "new-branch",
        base: "main",
        head: "9c833166dcef",
        fetchRef: "refs/heads/new-branch",
        fork: false,
        author: "557058:alice-id",
        sender: "557058:bob-id",
        labels: [],
      },
    });
  });

  test("updated is new commits; fulfilled closes merged; rejected closes", () => {
    const of = (key: string) => {
      const parsed = parseBitbucketPullRequest(bitbucketHeaders(key), bitbucketPayload());
      return "event" in parsed ? [parsed.event.action, parsed.event.merged ?? false] : parsed;
    };
    expect(of("pullrequest:updated")).toEqual(["push", false]);
    expect(of("pullrequest:fulfilled")).toEqual(["close", true]);
    expect(of("pullrequest:rejected")).toEqual(["close", false]);
    expect(of("pullrequest:approved")).toEqual({ skip: "bitbucket: pullrequest:approved event: nothing for previews" });
  });

  test("a pull request from another repository is a fork (trust.ts refuses it whatever the settings)", () => {
    const parsed = parseBitbucketPullRequest(
      bitbucketHeaders("pullrequest:created"),
      bitbucketPayload({}, "{00000000-0000-0000-0000-00000000f0f0}"),
    );
    expect(parsed).toMatchObject({ event: { forge: "bitbucket", fork: true } });
    expect(BITBUCKET_FORK_REFUSAL).toBe("bitbucket: previews of forks are not supported");
  });

  test("a nickname alone never names the author: it is not unique", () => {
    const parsed = parseBitbucketPullRequest(
      bitbucketHeaders("pullrequest:created"),
      bitbucketPayload({ author: { nickname: "alice", display_name: "Alice" } }),
    );
    expect(parsed).toMatchObject({ event: { author: "" } });
  });

  test("a payload missing what previews need is a skip that says what", () => {
    expect(parseBitbucketPullRequest(bitbucketHeaders("pullrequest:created"), undefined)).toEqual({
      skip: "bitbucket: the body is no pull request",
    });
    const noHash = bitbucketPayload();
    (noHash.pullrequest.source as { commit: unknown }).commit = { hash: "zz" };
    expect(parseBitbucketPullRequest(bitbucketHeaders("pullrequest:created"), noHash)).toEqual({
      skip: "bitbucket: pull request #7 names no source commit",
    });
  });
});
