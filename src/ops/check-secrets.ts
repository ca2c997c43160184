/**
 * What `service check` says of the secrets that are not plain files (docs/security.md "Secrets"): it runs each
 * app's `envCommand` (unless `--no-secrets`) and opens its age-encrypted envFile, as a deploy would, and lists the
 * names they give, never a value. A source that fails is a problem: every deploy would be refused.
 */
import { loadDeployVariables, needsLoading, type VariableSettings } from "../steps/variables.ts";

export interface SecretSourceApp extends VariableSettings {
  name?: string;
}

/** The lines, problems and warnings of every app's envCommand and age-encrypted envFile. */
export async function secretSourceFindings(
  apps: SecretSourceApp[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  runCommands: boolean,
): Promise<{ lines: string[]; problems: string[]; warnings: string[] }> {
  const lines: string[] = [];
  const problems: string[] = [];
  const warnings: string[] = [];
  for (const app of apps) {
    if (!needsLoading(app, cwd)) continue;
    const label = app.name ? `app ${app.name}: ` : "";
    const loaded = await loadDeployVariables(app, cwd, env, runCommands);
    const { envFile, envCommand } = loaded.names;
    if (envFile) lines.push(`${label}envFile (age-encrypted) gives: ${envFile.join(", ") || "(nothing)"}`);
    if (app.envCommand && !runCommands) lines.push(`${label}envCommand: not run (--no-secrets)`);
    else if (envCommand) lines.push(`${label}envCommand gives: ${envCommand.join(", ") || "(nothing)"}`);
    problems.push(...loaded.sourceProblems.map((problem) => `${label}${problem}: every deploy would be refused`));
    warnings.push(...loaded.warnings.map((warning) => `${label}${warning}`));
  }
  return { lines, problems, warnings };
}
