/**
 * GitLab's `Merge Request Hook` as a pull request event (docs/previews.md "GitLab"): open and reopen, an update
 * that brings commits (`oldrev`), a label added, close and merge. The head is the event's `last_commit.id`, fetched
 * from `refs/merge-requests/<iid>/head`; a merge request from another project is a fork.
 */
import { branchName, count, field, fullCommit, type Json, type ParsedPullRequest, text } from "./event-fields.ts";
import type { PullRequestEvent } from "./types.ts";

export const GITLAB_MERGE_REQUEST_HOOK = "Merge Request Hook";

/** The titles of a list of GitLab labels. */
function titles(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value
    .map((label) => text(field(label, "title")))
    .filter(Boolean)
    .slice(0, 100);
}

/** The label an update added (`changes.labels` current minus previous), if any. */
function addedLabel(payload: Json): string | undefined {
  const before = new Set(titles(field(payload, "changes", "labels", "previous")));
  return titles(field(payload, "changes", "labels", "current")).find((title) => !before.has(title));
}

/** A GitLab delivery as a pull request event; a skip for anything that asks nothing of previews. */
export function parseGitlabMergeRequest(headers: Headers, payload: Json | undefined): ParsedPullRequest {
  const event = headers.get("x-gitlab-event")?.trim() ?? "";
  if (event !== GITLAB_MERGE_REQUEST_HOOK)
    return { skip: `gitlab: ${text(event).slice(0, 60) || "no"} event: not a merge request` };
  if (!payload || field(payload, "object_kind") !== "merge_request")
    return { skip: "gitlab: the body is no merge request" };
  const mr = field(payload, "object_attributes");
  const action = text(field(mr, "action"));
  let kind: PullRequestEvent["action"];
  let label: string | undefined;
  if (action === "open" || action === "reopen") kind = "open";
  else if (action === "close" || action === "merge") kind = "close";
  else if (action === "update" && fullCommit(field(mr, "oldrev"))) kind = "push";
  else if (action === "update" && (label = addedLabel(payload)) !== undefined) kind = "label";
  else if (action === "update") return { skip: "gitlab: a merge request update without new commits" };
  else return { skip: `gitlab: merge request ${text(action).slice(0, 40) || "event"}: nothing for previews` };

  const number = count(field(mr, "iid"));
  const head = fullCommit(field(mr, "last_commit", "id"));
  const branch = branchName(field(mr, "source_branch"));
  const base = branchName(field(mr, "target_branch"));
  const source = count(field(mr, "source_project_id"));
  const target = count(field(mr, "target_project_id")) ?? count(field(payload, "project", "id"));
  if (!number) return { skip: "gitlab: the merge request has no iid" };
  if (!head) return { skip: `gitlab: merge request !${number} names no last commit` };
  if (!branch || !base) return { skip: `gitlab: merge request !${number} names no valid source and target branch` };
  if (!target) return { skip: `gitlab: merge request !${number} names no target project` };

  const authorId = count(field(mr, "author_id"));
  const sender = text(field(payload, "user", "username"));
  const senderId = count(field(payload, "user", "id"));
  const labels = titles(field(mr, "labels")).length ? titles(field(mr, "labels")) : titles(field(payload, "labels"));
  const parsed: PullRequestEvent = {
    forge: "gitlab",
    action: kind,
    number,
    title: text(field(mr, "title")),
    branch,
    base,
    head,
    fetchRef: `refs/merge-requests/${number}/head`,
    // A source project that is gone (null) is not the target either.
    fork: source !== target,
    // GitLab names the author by id only: their username is known when they sent this event.
    author: authorId !== undefined && senderId === authorId ? sender : "",
    sender,
    labels,
    projectId: target,
    ...(authorId !== undefined ? { authorId } : {}),
    ...(senderId !== undefined ? { senderId } : {}),
    ...(kind === "label" && label !== undefined ? { label } : {}),
    ...(action === "merge" ? { merged: true } : {}),
  };
  return { event: parsed };
}
