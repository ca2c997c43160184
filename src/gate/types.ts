/**
 * What a gate reads on the forge and decides (docs/configuration.md "gate"): the checks reported on a commit, as
 * each forge's API names them, turned into one verdict.
 */

/** A check's state in one vocabulary, whatever the forge calls it. */
export type CheckState = "success" | "pending" | "failure" | "error" | "cancelled";

/** One status or check run reported on the commit (the latest of its name and reporter). */
export interface ReportedCheck {
  /** The status context (GitHub, Gitea), status name (GitLab), build status key's name (Bitbucket), check run name. */
  name: string;
  state: CheckState;
  url?: string;
  /** Who reported it: the status creator's login, or the check run's app slug; absent when the forge does not say. */
  by?: string;
  /** When it last changed (ISO 8601), when the forge says. */
  updatedAt?: string;
}

/** One entry of `gate.checks`: a name or a glob (`*` any characters), optionally pinned to its reporter. */
export interface GateEntry {
  name: string;
  by?: string;
}

/** A required check as the verdict saw it: `missing` when nothing matching it is reported. */
export interface GateCheck {
  name: string;
  state: CheckState | "missing";
  url?: string;
  /** The reporter, when the entry is pinned to it or two reporters' checks share the name. */
  by?: string;
}

export interface GateVerdict {
  /** open: every required check succeeded; shut: one failed, errored or was cancelled; pending: otherwise. */
  state: "open" | "pending" | "shut";
  checks: GateCheck[];
  /** When the last of the required checks turned success (for the bake), when the forge says. */
  lastSuccessAt?: string;
}

/** What one read of the forge gave: the checks, or why it could not be read (fatal: 401, 403, 404). */
export type ForgeRead = { ok: true; checks: ReportedCheck[] } | { ok: false; fatal: boolean; error: string };
