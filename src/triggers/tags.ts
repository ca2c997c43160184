/**
 * Release tags as a trigger (docs/configuration.md `tags`, docs/forges.md "Tag pushes"): with `tags` a glob (`v*`)
 * a pushed tag matching it deploys that tag; with a semver range (`^1.4`) a pushed tag in the range deploys unless
 * it is lower than the live tag. A deploy that names no tag (curl without a body, `service deploy`, a poll) deploys
 * the highest matching tag on the remote. With `branch` set too, a tag deploys only when its commit is on that
 * branch's tip on the remote: a tag cannot bypass what protects the branch. What deploys is a target like the one
 * `service deploy --ref` builds (control/deploy-ref.ts): reset to the tag's commit, its signature checked with
 * `allowedSigners`.
 */
import { leftLive, ofApp, tagOf } from "../history/live.ts";
import { newestDeploys } from "../history/read.ts";
import { defaultRemote, gitQuery, short } from "../system/git.ts";
import { shown } from "../system/shown.ts";
import type { RollbackTarget } from "../types.ts";
import { compareVersions, isRangeText, parseRange, parseVersion, type Range, satisfies } from "./semver.ts";
import type { TriggerSkip } from "./types.ts";

/** The app's `tags` made a rule: a semver range, or a glob of tag names. */
export interface TagsRule {
  text: string;
  range?: Range;
  glob?: RegExp;
}

/** `tags` as a rule, or why it cannot be one (a range that does not parse). */
export function tagsRule(text: string): TagsRule | string {
  const trimmed = text.trim();
  if (!trimmed) return 'tags is empty: give a glob of tag names ("v*") or a semver range ("^1.4")';
  if (isRangeText(trimmed)) {
    const range = parseRange(trimmed);
    if (!range) return `tags "${trimmed}" is not a semver range (like ^1.4, ~1.4.2, >=1.2.0 <2.0.0, 1.4.x or 1.4.2)`;
    return { text: trimmed, range };
  }
  const source = trimmed.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*");
  return { text: trimmed, glob: new RegExp(`^${source}$`) };
}

/** Whether tag `name` matches the rule: in the range (as a version), or matched by the glob. */
export function tagMatches(rule: TagsRule, name: string): boolean {
  if (rule.glob) return rule.glob.test(name);
  const version = parseVersion(name);
  return version !== undefined && satisfies(version, rule.range!);
}

/** The tags of `remote` by name, each with its commit (an annotated tag's peeled `^{}` entry, not the tag object). */
export async function remoteTags(
  repoPath: string,
  remote: string,
  env: NodeJS.ProcessEnv,
): Promise<Map<string, string>> {
  const { code, stderr, stdout } = await gitQuery(repoPath, ["ls-remote", "--tags", "--", remote], env);
  if (code !== 0)
    throw new Error(`git ls-remote --tags ${remote} failed: ${stderr.split("\n").pop() || `exit code ${code}`}`);
  const tags = new Map<string, string>();
  const peeled = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const [commit, ref] = line.split("\t");
    if (!commit || !ref?.startsWith("refs/tags/") || !/^[0-9a-f]{40,64}$/.test(commit)) continue;
    if (ref.endsWith("^{}")) peeled.set(ref.slice(10, -3), commit);
    else tags.set(ref.slice(10), commit);
  }
  for (const [name, commit] of peeled) tags.set(name, commit);
  return tags;
}

/**
 * The highest version among `names`, or why none can be told: none matches, or none of them is a version (the
 * tag pushed last is not something a remote says).
 */
export function newestTag(rule: TagsRule, names: string[]): string | { problem: string } {
  if (!names.some((name) => tagMatches(rule, name))) return { problem: `no tag on the remote matches ${rule.text}` };
  const newest = byVersion(rule, names)[0];
  if (newest === undefined)
    return {
      problem: `no tag matching ${rule.text} is a version (like v1.4.2): which is newest cannot be told; name one with service deploy --ref <tag>`,
    };
  return newest;
}

/**
 * The tag of what is live (the newest deploy of `app` that ended ok): its target's tag, or the tag its ref names.
 * Undefined when that deploy named no tag, or was rolled back (what is live is then an earlier deploy's).
 */
export function liveTagOf(cwd: string, app: string | undefined): string | undefined {
  const entry = newestDeploys(cwd, 1, (e) => ofApp(e, app) && leftLive(e))[0];
  return entry && tagOf(entry);
}

/**
 * The index of the first of `commits` on `branch` as the remote has it now (-1: none is): the branch fetched once
 * into a ref of its own (so a running deploy's pull and its FETCH_HEAD are left alone), then `git merge-base
 * --is-ancestor` for each in order, until one is.
 */
async function firstOnRemoteBranch(
  repoPath: string,
  remote: string,
  branch: string,
  commits: string[],
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const full = branch.startsWith("refs/") ? branch : `refs/heads/${branch}`;
  const scratch = `refs/service/tag-check/${crypto.randomUUID()}`;
  const fetched = await gitQuery(
    repoPath,
    ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", remote, `+${full}:${scratch}`],
    env,
  );
  try {
    if (fetched.code !== 0)
      throw new Error(`git fetch ${remote} ${full} failed: ${fetched.stderr.split("\n").pop() || fetched.code}`);
    for (const [index, commit] of commits.entries()) {
      const { code } = await gitQuery(repoPath, ["merge-base", "--is-ancestor", commit, scratch], env);
      if (code === 0) return index;
    }
    return -1;
  } finally {
    await gitQuery(repoPath, ["update-ref", "-d", scratch], env);
  }
}

/** The matching tags that are versions, highest first. */
function byVersion(rule: TagsRule, names: string[]): string[] {
  return names
    .filter((name) => tagMatches(rule, name))
    .flatMap((name) => {
      const version = parseVersion(name);
      return version ? [{ name, version }] : [];
    })
    .sort((a, b) => compareVersions(b.version, a.version))
    .map(({ name }) => name);
}

/**
 * With `branch`, what a deploy naming no tag deploys: the highest matching tag whose commit is on the branch, and the
 * higher ones that are not (named in a warning: a tag on an unmerged branch never blocks the ones on it).
 */
async function newestOnBranch(
  rule: TagsRule,
  tags: Map<string, string>,
  app: { repoPath: string; branch: string },
  remote: string,
  env: NodeJS.ProcessEnv,
): Promise<{ name: string; off: string[] } | { problem: string }> {
  const newest = newestTag(rule, [...tags.keys()]);
  if (typeof newest !== "string") return newest;
  const names = byVersion(rule, [...tags.keys()]);
  const index = await firstOnRemoteBranch(
    app.repoPath,
    remote,
    app.branch,
    names.map((name) => tags.get(name)!),
    env,
  );
  if (index < 0)
    return { problem: `no tag matching ${rule.text} is on ${app.branch} (off it: ${names.map(shown).join(", ")})` };
  return { name: names[index]!, off: names.slice(0, index) };
}

/** What the tag trigger decided: a deploy of a tag (like `--ref`'s), or why nothing deploys. */
export type TagDecision = { target: RollbackTarget & { ref: string; tag: string } } | { skip: TriggerSkip };

const skip = (text: string): TagDecision => ({ skip: { reason: "tag", text } });

/**
 * Whether the tag `pushed` deploys for `app` (undefined: no tag was named, the highest matching one on the remote
 * is chosen). Throws when the remote cannot be asked.
 */
export async function tagTrigger(
  cwd: string,
  app: { name?: string; repoPath: string; branch?: string; tags: string },
  pushed: string | undefined,
  env: NodeJS.ProcessEnv,
): Promise<TagDecision> {
  const rule = tagsRule(app.tags);
  if (typeof rule === "string") return skip(rule);
  const remote = await defaultRemote(app.repoPath, env);
  if (!remote) return skip(`repoPath ${app.repoPath} has no remote to read tags from`);
  if (pushed !== undefined && !tagMatches(rule, pushed))
    return skip(
      rule.range
        ? `tag ${pushed} is not in the range ${rule.text}`
        : `tag ${pushed} does not match ${rule.text}; this app deploys tags (${rule.text})`,
    );
  const tags = await remoteTags(app.repoPath, remote, env);
  // With `branch`, a deploy naming no tag is chosen among the tags on it: those are checked already.
  const chosen =
    pushed !== undefined
      ? pushed
      : app.branch
        ? await newestOnBranch(rule, tags, { repoPath: app.repoPath, branch: app.branch }, remote, env)
        : newestTag(rule, [...tags.keys()]);
  if (typeof chosen !== "string" && "problem" in chosen) return skip(chosen.problem);
  const [name, off] = typeof chosen === "string" ? [chosen, []] : [chosen.name, chosen.off];
  const commit = tags.get(name);
  // A push that deleted the tag, or a tag deleted since.
  if (!commit) return skip(`tag ${name} is not on the remote ${remote}`);
  if (rule.range) {
    const live = liveTagOf(cwd, app.name);
    const [version, liveVersion] = [parseVersion(name), live ? parseVersion(live) : undefined];
    if (version && liveVersion && compareVersions(version, liveVersion) < 0)
      return skip(`tag ${name} is lower than ${live}, which is live`);
  }
  if (
    app.branch &&
    pushed !== undefined &&
    (await firstOnRemoteBranch(app.repoPath, remote, app.branch, [commit], env)) < 0
  )
    return skip(`tag ${name} (${short(commit)}) is not on ${app.branch}`);
  const warning = off.length
    ? { warning: `tags in ${rule.text} but not on ${app.branch}, not deployed: ${off.map(shown).join(", ")}` }
    : {};
  return { target: { commit, deployId: null, ref: `refs/tags/${name}`, tag: name, ...warning } };
}
