/**
 * The deploy's variables from every source (docs/security.md "The deploy's environment", "Secrets"): `envFile`
 * (plain, or age-encrypted and opened in memory with `ageIdentityFile`), `envCommand`'s output, and `env`. Read
 * once per deploy, before anything live moves; every value that does not come from the config file itself is a
 * secret. `envFile`'s variables come first, then `envCommand`'s over them, then `env`'s over both.
 */
import { dirname, resolve } from "node:path";
import { isAgeEncrypted, readIdentities } from "../config/age.ts";
import {
  type DeployVariables,
  type EnvSettings,
  MAX_ENV_FILE_BYTES,
  parseDotenv,
  readDeployVariables,
} from "../config/env.ts";
import { findConfigFile } from "../config/load.ts";
import { readUserBytes } from "../system/files.ts";
import { MIN_SECRET_LENGTH } from "../system/redact.ts";
import { type EnvCommandSettings, runEnvCommand } from "./env-command.ts";

export interface VariableSettings extends EnvSettings, EnvCommandSettings {
  ageIdentityFile?: string;
}

export interface LoadedVariables extends DeployVariables {
  /** Values under MIN_SECRET_LENGTH that an age file or the command gave: named, never shown. */
  warnings: string[];
  /** The names each source gave (`service check` lists them; never a value). */
  names: { envFile?: string[]; envCommand?: string[] };
  /** The problems of the age file and the command alone (the plain files' are `readDeployVariables`'). */
  sourceProblems: string[];
}

/** Whether reading the variables needs more than the plain files: a command to run or an age file to open. */
export function needsLoading(settings: VariableSettings, cwd: string): boolean {
  return !!settings.envCommand || ageEnvFile(settings, cwd) !== undefined;
}

/** The envFile's bytes when it is age-encrypted; undefined when it is plain or cannot be read (said elsewhere). */
function ageEnvFile(settings: VariableSettings, cwd: string): { file: string; bytes: Uint8Array } | undefined {
  if (!settings.envFile) return undefined;
  const file = resolve(cwd, settings.envFile);
  try {
    const bytes = readUserBytes(file, MAX_ENV_FILE_BYTES);
    return isAgeEncrypted(bytes) ? { file, bytes } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads the deploy's variables from every source now. `processEnv` is the service's environment (the command's,
 * less `SERVICE_*`); the command runs in the directory of the service's config file (`cwd` without one).
 * `runCommand: false` leaves the command out (`service check --no-secrets`).
 */
export async function loadDeployVariables(
  settings: VariableSettings,
  cwd: string,
  processEnv: NodeJS.ProcessEnv,
  runCommand = true,
): Promise<LoadedVariables> {
  const base = readDeployVariables(settings, cwd);
  const problems = base.problem ? [base.problem] : [];
  const secrets = [...base.secrets];
  const warnings: string[] = [];
  const names: LoadedVariables["names"] = {};
  const short = (vars: Record<string, string>, what: string) => {
    for (const [name, value] of Object.entries(vars)) {
      const length = value.trim().length;
      if (length > 0 && length < MIN_SECRET_LENGTH)
        warnings.push(
          `${what}: the value of ${name} has ${length} character${length > 1 ? "s" : ""}: a value under ${MIN_SECRET_LENGTH} characters is never redacted from deploy output`,
        );
    }
  };
  const sourceProblems: string[] = [];
  let fromFile: Record<string, string> = {};
  const age = ageEnvFile(settings, cwd);
  if (age) {
    const opened = await openAgeFile(age, settings, cwd);
    if ("problem" in opened) sourceProblems.push(opened.problem);
    else {
      const parsed = parseDotenv(opened.text, age.file);
      sourceProblems.push(...parsed.problems);
      fromFile = parsed.vars;
      secrets.push(...Object.values(fromFile));
      names.envFile = Object.keys(fromFile);
      short(fromFile, `${age.file} (age-encrypted envFile)`);
    }
  }
  let fromCommand: Record<string, string> = {};
  if (settings.envCommand && runCommand) {
    const configFile = findConfigFile(cwd, processEnv);
    const ran = await runEnvCommand(settings, configFile ? dirname(configFile) : cwd, processEnv);
    if ("problem" in ran) sourceProblems.push(ran.problem);
    else {
      fromCommand = ran.vars;
      secrets.push(...Object.values(fromCommand));
      names.envCommand = Object.keys(fromCommand);
      short(fromCommand, "envCommand");
    }
  }
  // `env`'s own names keep their values; the rest of `base` is the plain envFile's.
  const own = new Set(Object.keys(settings.env ?? {}));
  const pick = (keep: boolean) => Object.fromEntries(Object.entries(base.vars).filter(([n]) => own.has(n) === keep));
  const vars = { ...fromFile, ...pick(false), ...fromCommand, ...pick(true) };
  problems.push(...sourceProblems);
  const problem = problems.length > 0 ? { problem: problems.join("; ") } : {};
  return { vars, secrets, warnings, names, sourceProblems, ...problem };
}

/** An age-encrypted envFile's text, opened with the identities of `ageIdentityFile`, or why it cannot be. */
async function openAgeFile(
  age: { file: string; bytes: Uint8Array },
  settings: VariableSettings,
  cwd: string,
): Promise<{ text: string } | { problem: string }> {
  if (!settings.ageIdentityFile)
    return {
      problem: `${age.file} (envFile) is age-encrypted and no ageIdentityFile is set: set it to the identity file (age-keygen's) that opens it`,
    };
  const identityFile = resolve(cwd, settings.ageIdentityFile);
  const read = readIdentities(identityFile);
  if ("problem" in read) return read;
  // The age implementation is loaded only now: a server without an encrypted file never holds it.
  const { decryptAge } = await import("../config/age-decrypt.ts");
  return decryptAge(age.bytes, read.identities, age.file, identityFile);
}
