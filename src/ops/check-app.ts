/**
 * What `service check` (and the server's start) says of one app's repository and releases: that repoPath is a
 * git work tree the service may use, on the branch it deploys, that polling can find what to poll, and that the
 * releases directory is usable.
 */
import { existsSync, statSync } from "node:fs";
import type { ResolvedApp } from "../config/apps.ts";
import type { ReleaseSettings } from "../config/releases.ts";
import { queueKey, ticketDirProblem } from "../queue/tickets.ts";
import { gitQuery, headCommit, resolveCommit, short, wantedBranch } from "../system/git.ts";
import { runSync } from "../system/run-sync.ts";
import { divergence, upstreamNow, waysOut } from "../steps/diverged.ts";

/**
 * The checks of the optional features, loaded only for a configuration that uses them (docs/architecture.md
 * "Optional features"): a server's start check holds no more of their code than the server does.
 */
export interface Features {
  outbound?: typeof import("../notify/inspect.ts");
  poll?: typeof import("../control/poll-target.ts");
  releaseFiles?: typeof import("../releases/files.ts");
}

/** The feature checks `apps` need (the top level and each app). */
export async function featuresOf(apps: ResolvedApp[]): Promise<Features> {
  const used = (uses: (app: ResolvedApp) => unknown) => apps.some(uses);
  const [outbound, poll, releaseFiles] = await Promise.all([
    used((app) => app.status || app.notify?.length) ? import("../notify/inspect.ts") : undefined,
    used((app) => app.pollIntervalMs !== undefined) ? import("../control/poll-target.ts") : undefined,
    used((app) => app.releases) ? import("../releases/files.ts") : undefined,
  ]);
  return { outbound, poll, releaseFiles };
}

/** Whether `dir` is a git work tree, or why git refuses to say: a repository owned by another user. */
function gitRepoState(dir: string): "yes" | "no" | "not owned" {
  const result = runSync(["git", "rev-parse", "--is-inside-work-tree"], { cwd: dir });
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
      const result = runSync(["git", ...args], { cwd: repoPath });
      return { code: result.status, stdout: result.stdout };
    });
    const target = pollTargetOf(repoPath, app.branch, answers);
    if (typeof target === "string") problems.push(`${label}pollIntervalMs is set but ${target}`);
  }
  return problems;
}

/** The releases directory of an app must be usable (docs/releases.md); an activate script needs releases. */
export function releasesProblems(
  label: string,
  app: { repoPath: string; releases?: ReleaseSettings; activateScript?: string; runScript?: string },
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
  const warnings = [
    ...files!.sharedFileWarnings(app.releases),
    ...files!.carryWarnings(app.releases, app.runScript),
  ].map((warning) => `${label}${warning}`);
  return { problems: problem ? [`${label}${problem}`] : [], warnings };
}

/**
 * A checkout on another branch than `branch` (docs/deploy-control.md "What was pushed"): every deploy is refused
 * until it is checked out again. Undefined when it is on it, or `branch` names no branch.
 */
function branchMismatch(repoPath: string, branch: string | undefined): string | undefined {
  const wanted = wantedBranch(branch);
  if (!wanted) return undefined;
  const result = runSync(["git", "symbolic-ref", "--quiet", "--short", "HEAD"], { cwd: repoPath });
  const current = result.status === 0 ? result.stdout.trim() : null;
  if (current === wanted) return undefined;
  const where = current ? `is on branch ${current}` : "is not on a branch (detached HEAD)";
  return `the checkout in ${repoPath} ${where}, but branch is ${wanted}: every deploy is refused until git -C ${repoPath} checkout ${wanted}`;
}

/**
 * The clone against its remote branch, as the last fetch left it (docs/deploy-control.md "After a force-push"):
 * local changes to tracked files and a branch a force-push rewrote are problems, with their fix; commits of the
 * clone's own are named (a pull merges them, `pull: reset` drops them).
 */
export async function cloneFindings(
  label: string,
  app: { repoPath: string; pull?: "pull" | "reset" },
  env: NodeJS.ProcessEnv,
): Promise<{ problems: string[]; warnings: string[] }> {
  const { repoPath } = app;
  const reset = app.pull === "reset";
  const problems: string[] = [];
  const warnings: string[] = [];
  if (!existsSync(repoPath) || gitRepoState(repoPath) !== "yes") return { problems, warnings };
  const diff = await gitQuery(repoPath, ["diff", "--name-only", "HEAD", "--"], env);
  const changed = diff.code === 0 ? diff.stdout.split("\n").filter(Boolean) : [];
  if (changed.length > 0) {
    const list = `${changed.slice(0, 5).join(", ")}${changed.length > 5 ? `, and ${changed.length - 5} more` : ""}`;
    const fix = reset
      ? "pull: reset drops them at the next deploy; commit and push them to keep them"
      : `git pull fails on them or deploys them; commit and push them, or drop them with git -C ${repoPath} checkout -- .`;
    problems.push(`${label}the clone in ${repoPath} has local changes to tracked files (${list}): ${fix}`);
  }
  const head = await headCommit(repoPath, env);
  // A clone at its upstream's tip (the common case) has nothing more to ask: one git call.
  if (!head || (await resolveCommit(repoPath, "@{upstream}", env)) === head) return { problems, warnings };
  const at = await upstreamNow(repoPath, env);
  const kind = at?.tip ? await divergence(repoPath, at.upstream, head, at.tip, env, true) : undefined;
  if (!at?.tip || !kind) return { problems, warnings };
  if (kind === "rewritten") {
    // `pull: reset` follows the rewritten branch at the next deploy: nothing to fix.
    if (!reset)
      problems.push(
        `${label}the clone in ${repoPath} and ${at.name} have diverged (${at.name} was force-pushed: it no longer ` +
          `contains HEAD ${short(head)}): every git pull fails, or merges; ${waysOut(at.upstream.branch)}`,
      );
    return { problems, warnings };
  }
  const counted = await gitQuery(repoPath, ["rev-list", "--count", `${at.tip}..${head}`], env);
  const own = Number(counted.stdout) || 0;
  const them = own === 1 ? "it" : "them";
  const what = `the clone in ${repoPath} carries ${own} commit${own === 1 ? "" : "s"} of its own, not on ${at.name}`;
  warnings.push(
    `${label}${what}: ${reset ? `pull: reset drops ${them} at the next deploy` : `git pull merges ${them} into every deploy`}`,
  );
  return { problems, warnings };
}
