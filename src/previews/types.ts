/**
 * What a preview is (docs/previews.md): a pull request as any forge's event names it, the settings of the
 * `previews` key, and one preview as `.service/previews/<app>.json` keeps it. Types only.
 */
import type { PreviewsKey } from "../config/previews.ts";

export type PreviewForge = "github" | "gitea" | "gitlab" | "bitbucket";

/** A pull (merge) request as a forge's event names it, made the same whatever the forge. Every text is an outsider's. */
export interface PullRequestEvent {
  forge: PreviewForge;
  /** open: opened or reopened; push: new commits; label: a label added; close: closed, merged or declined. */
  action: "open" | "push" | "label" | "close";
  /** The PR's number (GitLab: the MR's iid; Bitbucket: the PR's id). */
  number: number;
  title: string;
  /** The source branch's name, as the forge sends it. */
  branch: string;
  /** The target branch. */
  base: string;
  /** The head commit the event names (40 hex). */
  head: string;
  /** Where the head is fetched from on the app's remote: `refs/pull/<n>/head`, `refs/merge-requests/<iid>/head`, `refs/heads/<branch>`. */
  fetchRef: string;
  /** The head repository is not the base repository. */
  fork: boolean;
  /** The PR's author's login (Bitbucket: nickname or account id). */
  author: string;
  /** Who sent this event (the pusher of new commits, the one who added a label). */
  sender: string;
  /** The sender's numeric id, where the forge names people by id (GitLab). */
  senderId?: number;
  /** GitHub's `author_association` of the author (OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, NONE, …), when sent. */
  association?: string;
  /** The label this event added (action `label`). */
  label?: string;
  /** The labels the PR has now. */
  labels: string[];
  /** Closed by a merge. */
  merged?: boolean;
  /** What a forge's API needs beyond the app's `status` settings: GitLab's project and author ids. */
  projectId?: number;
  authorId?: number;
}

/** The `previews` key (per app; top level in single-app mode), as normalised by config/previews.ts. */
export type PreviewSettings = PreviewsKey;

export type PreviewStatus = "building" | "running" | "failed" | "stopped" | "teardown failed";

/** One preview, as `.service/previews/<app>.json` keeps it. */
export interface Preview {
  app: string;
  forge: PreviewForge;
  number: number;
  title: string;
  /** The branch as the forge named it (an outsider's text). */
  branch: string;
  /** The branch made safe for a host name: `[a-z0-9-]`, at most 40 characters, `-<number>` when two would collide. */
  slug: string;
  /** The commit deployed (or being deployed). */
  head: string;
  /** With `label`: the head the PR had when an allowed sender added the label. */
  approvedHead?: string;
  port: number;
  url: string;
  /** `<path>/pr-<number>`. */
  dir: string;
  /** ISO times. */
  created: string;
  updated: string;
  status: PreviewStatus;
  /** The last deploy's id and outcome, when one ran. */
  deployId?: string;
  outcome?: "ok" | "failed" | "cancelled";
  /** Why it is failed, stopped or its teardown failed. */
  reason?: string;
  /** The PR comment's id once made (docs/previews.md "The comment"). */
  commentId?: string;
  /** The forge's deployment of this preview once made (GitHub, GitLab), for its later statuses. */
  forgeDeploymentId?: string;
  /** Where its head is fetched from (PullRequestEvent `fetchRef`), for a deploy by hand. */
  fetchRef?: string;
  /** The process groups its scripts ran in: what they left running is stopped at its teardown. */
  groups?: { pgid: number; start: string }[];
  /** Failed teardowns so far (a later one skips the teardown script after three). */
  teardownTries?: number;
}
