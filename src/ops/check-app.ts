/**
 * What `service check` (and the server's start) says of one app's repository and releases: that repoPath is a
 * git work tree the service may use, on the branch it deploys, that polling can find what to poll, and that the
 * releases directory is usable.
 */
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import type { ResolvedApp } from "../config/apps.ts";
import type { ReleaseSettings } from "../config/schema.ts";
import { queueKey, ticketDirProblem } from "../queue/tickets.ts";
import { wantedBranch } from "../system/git.ts";
import { waysOut } from "../steps/diverged.ts";

/**
 * The checks of the optional features, loaded only for a configuration that uses them (docs/architecture.md
 * "Optional features"): a server's start check holds no more of their code than the server does.
 */
export interface Features {
  outbound?: typeof import("../notify/inspect.ts");
  poll?: typeof import("../control/poll.ts");
  releaseFiles?: typeof import("../releases/files.ts");
}

/** The feature checks `apps` need (the top level and each app). */
export async function featuresOf(apps: ResolvedApp[]): Promise<Features> {
  const used = (uses: (app: ResolvedApp) => unknown) => apps.some(uses);
  const [outbound, poll, releaseFiles] = await Promise.all([
    used((app) => app.status || app.notify?.length) ? import("../notify/inspect.ts") : undefined,
    used((app) => app.pollIntervalMs !== undefined) ? import("../control/poll.ts") : undefined,
    used((app) => app.releases) ? import("../releases/files.ts") : undefined,
  ]);
  return { outbound, poll, releaseFiles };
}

/** Whether `dir` is a git work tree, or why git refuses to say: a repository owned by another user. */
function gitRepoState(dir: string): "yes" | "no" | "not owned" {
  const result = spawnSync("git", ["rev-parse", "--is-inside-work-tree"], {
    cwd: dir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (result.status === 0 && result.stdout.trim() === "true") return "yes";
  // git 2.35.2 and later: "detected dubious ownership in repository at …" (safe.directory).
  return /dubious ownership/.test(result.stderr ?? "") ? "not owned" : "no";
}

/** git's refusal of a repository another user owns, and the two ways out. */
function ownershipProblem(label: string, repoPath: string): string {
  let owner = "";
  try {
    owner = ` (uid ${statSync(repoPath).uid})`;
  } catch {}
  return (
    `${label}repoPath ${repoPath} is owned by another user${owner}: git refuses to work in it ("dubious ownership"), ` +
    `so git pull will fail; run the service as the repository's owner, or trust it with ` +
    `git config --global --add safe.directory ${repoPath} (as the user the service runs as)`
  );
}

/** What would make every deploy of the app fail: its repository, the queue's directory, the branch, polling. */
export function repoProblems(
  label: string,
  app: { repoPath: string; pollIntervalMs?: number; branch?: string },
  poll: Features["poll"],
): string[] {
  const { repoPath } = app;
  if (!existsSync(repoPath)) return [`${label}repoPath ${repoPath} does not exist`];
  if (!statSync(repoPath).isDirectory()) return [`${label}repoPath ${repoPath} is not a directory`];
  const state = gitRepoState(repoPath);
  if (state === "not owned") return [ownershipProblem(label, repoPath)];
  if (state === "no") return [`${label}repoPath ${repoPath} is not a git repository (git pull will fail)`];
  const queue = ticketDirProblem(queueKey(repoPath));
  const problems = queue ? [`${label}${queue}`] : [];
  const mismatch = branchMismatch(repoPath, app.branch);
  if (mismatch) problems.push(`${label}${mismatch}`);
  if (app.pollIntervalMs !== undefined) {
    // Loaded: this app polls (featuresOf).
    const { pollTargetOf, TARGET_QUERIES } = poll!;
    const answers = TARGET_QUERIES.map((args) => {
      const result = spawnSync("git", args, { cwd: repoPath, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
      return { code: result.status, stdout: result.stdout ?? "" };
    });
    const target = pollTargetOf(repoPath, app.branch, answers);
    if (typeof target === "string") problems.push(`${label}pollIntervalMs is set but ${target}`);
  }
  return problems;
}

/** The releases directory of an app must be usable (docs/releases.md); an activate script needs releases. */
export function releasesProblems(
  label: string,
  app: { repoPath: string; releases?: ReleaseSettings; activateScript?: string },
  files: Features["releaseFiles"],
): { problems: string[]; warnings: string[] } {
  if (!app.releases) {
    const unused = app.activateScript?.trim()
      ? [
          `${label}activateScript is set but releases is not: it runs only after a release is switched to (docs/releases.md)`,
        ]
      : [];
    return { problems: [], warnings: unused };
  }
  // Loaded: this app has releases (featuresOf).
  const problem = files!.releasesPathProblem(app.releases, app.repoPath);
  return { problems: problem ? [`${label}${problem}`] : [], warnings: [] };
}

/**
 * A checkout on another branch than `branch` (docs/deploy-control.md "What was pushed"): every deploy is refused
 * until it is checked out again. Undefined when it is on it, or `branch` names no branch.
 */
function branchMismatch(repoPath: string, branch: string | undefined): string | undefined {
  const wanted = wantedBranch(branch);
  if (!wanted) return undefined;
  const result = spawnSync("git", ["symbolic-ref", "--quiet", "--short", "HEAD"], {
    cwd: repoPath,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  const current = result.status === 0 ? result.stdout.trim() : null;
  if (current === wanted) return undefined;
  const where = current ? `is on branch ${current}` : "is not on a branch (detached HEAD)";
  return `the checkout in ${repoPath} ${where}, but branch is ${wanted}: every deploy is refused until git -C ${repoPath} checkout ${wanted}`;
}

/** git's answer in `repoPath`, trimmed; null when it fails. */
function gitSays(repoPath: string, args: string[]): string | null {
  const result = spawnSync("git", args, { cwd: repoPath, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return result.status === 0 ? result.stdout.trim() : null;
}

/**
 * The clone against its remote branch, as the last fetch left it (docs/deploy-control.md "After a force-push"):
 * local changes to tracked files and a branch a force-push rewrote are problems, with their fix; commits of the
 * clone's own are named (a pull merges them, `pull: reset` drops them).
 */
export function cloneFindings(
  label: string,
  app: { repoPath: string; pull?: "pull" | "reset" },
): { problems: string[]; warnings: string[] } {
  const { repoPath } = app;
  const reset = app.pull === "reset";
  const problems: string[] = [];
  const warnings: string[] = [];
  if (!existsSync(repoPath) || gitRepoState(repoPath) !== "yes") return { problems, warnings };
  const changed = (gitSays(repoPath, ["diff", "--name-only", "HEAD", "--"]) ?? "").split("\n").filter(Boolean);
  if (changed.length > 0) {
    const list = `${changed.slice(0, 5).join(", ")}${changed.length > 5 ? `, and ${changed.length - 5} more` : ""}`;
    const fix = reset
      ? "pull: reset drops them at the next deploy; commit and push them to keep them"
      : `git pull fails on them or deploys them; commit and push them, or drop them with git -C ${repoPath} checkout -- .`;
    problems.push(`${label}the clone in ${repoPath} has local changes to tracked files (${list}): ${fix}`);
  }
  const branch = gitSays(repoPath, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
  const format = "--format=%(upstream)%09%(upstream:short)%09%(upstream:remoteref)";
  const [ref, name, merge] =
    (branch && gitSays(repoPath, ["for-each-ref", format, `refs/heads/${branch}`])?.split("\t")) || [];
  const head = gitSays(repoPath, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
  const tip = ref ? gitSays(repoPath, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]) : null;
  if (!ref || !name || !head || !tip || gitSays(repoPath, ["merge-base", "--is-ancestor", head, tip]) !== null)
    return { problems, warnings };
  const remoteBranch = merge?.replace(/^refs\/heads\//, "") || branch!;
  if (gitSays(repoPath, ["merge-base", "--fork-point", ref, head]) === head) {
    // The remote branch had HEAD and lost it: a force-push. `pull: reset` follows it at the next deploy.
    if (!reset)
      problems.push(
        `${label}the clone in ${repoPath} and ${name} have diverged (${name} was force-pushed: it no longer contains ` +
          `HEAD ${head.slice(0, 12)}): every git pull fails, or merges; ${waysOut(remoteBranch)}`,
      );
    return { problems, warnings };
  }
  const own = Number(gitSays(repoPath, ["rev-list", "--count", `${tip}..${head}`]) ?? 0);
  const them = own === 1 ? "it" : "them";
  const what = `the clone in ${repoPath} carries ${own} commit${own === 1 ? "" : "s"} of its own, not on ${name}`;
  warnings.push(
    `${label}${what}: ${reset ? `pull: reset drops ${them} at the next deploy` : `git pull merges ${them} into every deploy`}`,
  );
  return { problems, warnings };
}
