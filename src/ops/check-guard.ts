/**
 * What `service check` says about the keys that guard a deploy (docs/security.md): the allowed-signers file and
 * whether the live commit and the one the next pull would bring pass it, the deploy's variables (names only, never a value) and the files
 * they come from.
 */
import { resolve } from "node:path";
import { ageIdentityProblem } from "../config/age.ts";
import { envFileWarnings, readDeployVariables } from "../config/env.ts";
import type { ReleaseSettings } from "../config/releases.ts";
import { listDeploys } from "../history/read.ts";
import { gitQuery, short } from "../system/git.ts";
import { readAllowedSigners, verifyCommit } from "../verify/signatures.ts";
import type { VariableSettings } from "../steps/variables.ts";

export interface GuardedApp extends VariableSettings {
  name?: string;
  repoPath: string;
  allowedSigners?: string;
  releases?: ReleaseSettings;
}

/** The problems (every deploy would be refused) and warnings (unsafe files) of one app's guard keys. */
export function guardFindings(app: GuardedApp, cwd: string): { problems: string[]; warnings: string[] } {
  const label = app.name ? `app "${app.name}": ` : "";
  const problems: string[] = [];
  const warnings = envFileWarnings(app, app.repoPath, cwd, app.name);
  if (app.allowedSigners) {
    const signers = readAllowedSigners(resolve(cwd, app.allowedSigners), app.repoPath);
    if ("problem" in signers) problems.push(`${label}${signers.problem}: every deploy would be refused`);
    else warnings.push(...signers.warnings.map((warning) => `${label}${warning}`));
  }
  const variables = readDeployVariables(app, cwd);
  if (variables.problem) problems.push(`${label}${variables.problem}: every deploy would be refused`);
  const identity = ageIdentityProblem(app, cwd, label);
  if (identity) problems.push(identity);
  return { problems, warnings };
}

/**
 * Per app with `allowedSigners`: whether the live commit (docs/deploy-control.md "What is live") would deploy again,
 * and whether what the next pull would bring (the upstream branch as last fetched) would deploy, and why not.
 */
export async function signatureVerdicts(apps: GuardedApp[], cwd: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const lines: string[] = [];
  if (!apps.some((app) => app.allowedSigners)) return lines;
  // What is live is read from the history and the releases: loaded only for an app that checks signatures.
  const { liveOf, releasesStatus } = await import("../control/status.ts");
  const history = listDeploys(cwd);
  for (const app of apps) {
    if (!app.allowedSigners) continue;
    const label = `${app.name ? `app ${app.name}: ` : ""}allowedSigners:`;
    const signers = resolve(cwd, app.allowedSigners);
    const verdict = async (commit: string) => {
      const checked = await verifyCommit(app.repoPath, commit, signers, env);
      return checked.ok ? `would deploy: signed by ${checked.signer}` : `would be refused: ${checked.reason}`;
    };
    const { live } = await liveOf(app, history, await releasesStatus(cwd, app));
    if (live) lines.push(`${label} the live commit ${short(live.sha)} ${await verdict(live.sha)}`);
    else lines.push(`${label} no live commit in ${app.repoPath} to check`);
    const upstream = await gitQuery(app.repoPath, ["rev-parse", "--verify", "--quiet", "@{upstream}"], env);
    const next = upstream.code === 0 ? upstream.stdout : null;
    if (next && next !== live?.sha)
      lines.push(
        `${label} the next pull would bring ${short(next)} (the upstream branch as last fetched), which ${await verdict(next)}`,
      );
  }
  return lines;
}
