/**
 * What `service check` (and the server's start) says of one app's repository and releases: that repoPath is a
 * git work tree the service may use, on the branch it deploys, that polling can find what to poll, and that the
 * releases directory is usable.
 */
import { existsSync, statSync } from "node:fs";
import type { ResolvedApp } from "../config/apps.ts";
import type { ReleaseSettings } from "../config/schema.ts";
import { queueKey, ticketDirProblem } from "../queue/tickets.ts";
import { wantedBranch } from "../deploy/verify-push.ts";
import { gitQuery } from "../system/git.ts";

type Env = NodeJS.ProcessEnv;

/**
 * The checks of the optional features, loaded only for a configuration that uses them (docs/architecture.md
 * "Optional features"): a server's start check holds no more of their code than the server does.
 */
export interface Features {
  outbound?: typeof import("../notify/inspect.ts");
  poll?: typeof import("../control/poll.ts");
  releaseFiles?: typeof import("../deploy/release-files.ts");
}

/** The feature checks `apps` need (the top level and each app). */
export async function featuresOf(apps: ResolvedApp[]): Promise<Features> {
  const used = (uses: (app: ResolvedApp) => unknown) => apps.some(uses);
  const [outbound, poll, releaseFiles] = await Promise.all([
    used((app) => app.status || app.notify?.length) ? import("../notify/inspect.ts") : undefined,
    used((app) => app.pollIntervalMs !== undefined) ? import("../control/poll.ts") : undefined,
    used((app) => app.releases) ? import("../deploy/release-files.ts") : undefined,
  ]);
  return { outbound, poll, releaseFiles };
}

/** Whether `dir` is a git work tree, or why git refuses to say: a repository owned by another user. */
async function gitRepoState(dir: string, env: Env): Promise<"yes" | "no" | "not owned"> {
  const result = await gitQuery(dir, ["rev-parse", "--is-inside-work-tree"], env);
  if (result.code === 0 && result.stdout === "true") return "yes";
  // git 2.35.2 and later: "detected dubious ownership in repository at …" (safe.directory).
  return /dubious ownership/.test(result.stderr) ? "not owned" : "no";
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
export async function repoProblems(
  label: string,
  app: { repoPath: string; pollIntervalMs?: number; branch?: string },
  poll: Features["poll"],
  env: Env,
): Promise<string[]> {
  const { repoPath } = app;
  if (!existsSync(repoPath)) return [`${label}repoPath ${repoPath} does not exist`];
  if (!statSync(repoPath).isDirectory()) return [`${label}repoPath ${repoPath} is not a directory`];
  const state = await gitRepoState(repoPath, env);
  if (state === "not owned") return [ownershipProblem(label, repoPath)];
  if (state === "no") return [`${label}repoPath ${repoPath} is not a git repository (git pull will fail)`];
  const queue = ticketDirProblem(queueKey(repoPath));
  const problems = queue ? [`${label}${queue}`] : [];
  const mismatch = await branchMismatch(repoPath, app.branch, env);
  if (mismatch) problems.push(`${label}${mismatch}`);
  if (app.pollIntervalMs !== undefined) {
    // Loaded: this app polls (featuresOf).
    const { pollTargetOf, TARGET_QUERIES } = poll!;
    const answers = await Promise.all(TARGET_QUERIES.map((args) => gitQuery(repoPath, [...args], env)));
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
async function branchMismatch(repoPath: string, branch: string | undefined, env: Env): Promise<string | undefined> {
  const wanted = wantedBranch(branch);
  if (!wanted) return undefined;
  const result = await gitQuery(repoPath, ["symbolic-ref", "--quiet", "--short", "HEAD"], env);
  const current = result.code === 0 ? result.stdout : null;
  if (current === wanted) return undefined;
  const where = current ? `is on branch ${current}` : "is not on a branch (detached HEAD)";
  return `the checkout in ${repoPath} ${where}, but branch is ${wanted}: every deploy is refused until git -C ${repoPath} checkout ${wanted}`;
}
