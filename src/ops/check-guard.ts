/**
 * What `service check` says about the keys that guard a deploy (docs/security.md): the allowed-signers file and
 * whether the checked-out commit would pass it, the deploy's variables (names only, never a value) and the files
 * they come from.
 */
import { resolve } from "node:path";
import { envFileWarnings, readDeployVariables, type EnvSettings } from "../config/env.ts";
import { headCommit, short } from "../system/git.ts";
import { readAllowedSigners, verifyCommit } from "../verify/signatures.ts";

export interface GuardedApp extends EnvSettings {
  name?: string;
  repoPath: string;
  allowedSigners?: string;
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
  return { problems, warnings };
}

/** One line per app with `allowedSigners`: whether the commit checked out now would deploy, and why not. */
export async function headVerdicts(apps: GuardedApp[], cwd: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const lines: string[] = [];
  for (const app of apps) {
    if (!app.allowedSigners) continue;
    const label = app.name ? `app ${app.name}: ` : "";
    const head = await headCommit(app.repoPath, env).catch(() => null);
    if (!head) {
      lines.push(`${label}allowedSigners: no commit checked out in ${app.repoPath} to check`);
      continue;
    }
    const verdict = await verifyCommit(app.repoPath, head, resolve(cwd, app.allowedSigners), env);
    lines.push(
      verdict.ok
        ? `${label}allowedSigners: HEAD ${short(head)} would deploy: signed by ${verdict.signer}`
        : `${label}allowedSigners: HEAD ${short(head)} would be refused: ${verdict.reason}`,
    );
  }
  return lines;
}
