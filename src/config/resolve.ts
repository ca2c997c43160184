/**
 * The one configuration resolution: (base config, config file text, environment) → the resolved config, where
 * each value came from, and every problem found. It reads nothing and logs nothing; loadConfig, the per-request
 * reload, the post-pull reload and `service check` differ only in what they do with the problems.
 */
import { isAbsolute, resolve } from "node:path";
import { envConfig } from "./env-keys.ts";
import { parseYaml } from "./yaml.ts";
import { normalizeUserConfig } from "./keys.ts";
import { carryOverlap, RELEASES_ENV, resolveReleases } from "./releases.ts";
import { GATE_ENV, resolveGate } from "./gate.ts";
import type { ConfigError, UserConfig } from "./schema.ts";
import { defaultConfig, type ResolvedConfig } from "./schema-resolved.ts";

/** Where a value came from: the defaults, the caller's base, the config file, SERVICE_* variables, or a caller's layer over them. */
/** The text of a config file, or why it cannot be read (`missing` when it does not exist). */
export type ConfigText = { text: string } | { invalid: string; missing: boolean };

export type Source = "default" | "base" | "file" | "env" | "caller";

export interface ConfigInput {
  /** Where relative paths resolve. */
  cwd: string;
  /** Values under the config file, over the defaults. */
  base?: UserConfig;
  /** The config file and its text (or why it has none); absent when there is no config file. */
  file?: { path: string; read: ConfigText };
  /** File values to use instead of parsing `file` (the last good ones a reload keeps). */
  fileValues?: UserConfig;
  /** Where `SERVICE_*` are read. */
  env: NodeJS.ProcessEnv;
  /** Layers over the environment, lowest first (a caller's own changes to a loaded config). */
  over?: UserConfig[];
}

export interface Resolution {
  config: ResolvedConfig;
  /** Where each set key's value came from; a key not listed has no value. */
  sources: Partial<Record<keyof ResolvedConfig, Source>>;
  /** The config file's values (its wrong-typed ones left out); undefined without a usable file. */
  fileConfig?: UserConfig;
  /** Why the config file cannot be used at all (unreadable, not YAML, not a mapping). */
  invalid?: string;
  /** The config file named does not exist. */
  missing: boolean;
  /** The file sets a non-empty `apps`, even one whose list was rejected. */
  setsApps: boolean;
  /** Unknown keys in the file, one sentence each (their defaults stay in force). */
  unknownKeys: string[];
  /** Wrong values in the file, one group per key (a list of apps can have several problems). */
  fileErrors: string[][];
  /** The environment's values (its wrong ones left out). */
  envConfig: UserConfig;
  /** Wrong `SERVICE_*` values. */
  envErrors: string[];
}

/** Resolves defaults ← base ← file ← env ← over, with repoPath made absolute. */
export function resolveConfig(input: ConfigInput): Resolution {
  const parsed = input.file ? parseFile(input.file.path, input.file.read) : undefined;
  const fileConfig = input.fileValues ?? parsed?.config;
  const envErrors: string[] = [];
  const fromEnv = envConfig(input.env, envErrors);
  const layers: [Source, UserConfig | undefined][] = [
    ["base", input.base],
    ["file", fileConfig],
    ["env", fromEnv],
  ];
  for (const layer of input.over ?? []) layers.push(["caller", layer]);
  const merged: Record<string, unknown> = { ...defaultConfig(input.cwd) };
  const sources: Record<string, Source> = Object.fromEntries(Object.keys(merged).map((key) => [key, "default"]));
  for (const [source, layer] of layers) {
    for (const [key, value] of Object.entries(layer ?? {})) {
      if (value === undefined) continue;
      // The environment sets the fields of `releases` one by one: they change the releases of the layers below.
      merged[key] = ["releases", "gate", "limits"].includes(key)
        ? { ...(merged[key] as object | undefined), ...value }
        : value;
      sources[key] = source;
    }
  }
  const config = merged as unknown as ResolvedConfig;
  config.repoPath = isAbsolute(config.repoPath) ? config.repoPath : resolve(input.cwd, config.repoPath);
  if (config.releases?.path === undefined && config.releases !== undefined) {
    const set = Object.keys(config.releases).map((field) => RELEASES_ENV[field as keyof typeof RELEASES_ENV]);
    envErrors.push(
      `environment variable ${set[0] ?? RELEASES_ENV.keep}: set without a releases path (set ${RELEASES_ENV.path}, or releases.path in the config file)`,
    );
    delete config.releases;
    delete sources.releases;
  } else if (config.releases && carryOverlap(config.releases)) {
    // Each layer was checked alone: the file's `shared` and the environment's `carry` may still overlap.
    envErrors.push(`environment variable ${RELEASES_ENV.carry}: ${carryOverlap(config.releases)}`);
    delete config.releases;
    delete sources.releases;
  } else if (config.releases) config.releases = resolveReleases(config.releases, input.cwd);
  if (config.gate && config.gate.checks === undefined) {
    envErrors.push(
      `environment variable ${config.gate.waitMs !== undefined ? GATE_ENV.waitMs : GATE_ENV.bakeMs}: set without gate checks (set ${GATE_ENV.checks}, or gate.checks in the config file)`,
    );
    delete config.gate;
    delete sources.gate;
  } else if (config.gate) config.gate = resolveGate(config.gate);
  return {
    config,
    sources,
    fileConfig,
    invalid: parsed?.invalid,
    missing: parsed?.missing ?? false,
    setsApps: parsed?.setsApps ?? false,
    unknownKeys: parsed?.unknownKeys ?? [],
    fileErrors: parsed?.errors ?? [],
    envConfig: fromEnv,
    envErrors,
  };
}

interface ParsedFile {
  config?: UserConfig;
  invalid?: string;
  missing?: boolean;
  setsApps?: boolean;
  unknownKeys?: string[];
  errors?: string[][];
}

/** The `yaml` package ends its first message line with ":" before a code excerpt; the excerpt is not kept. */
function yamlError(error: unknown): string {
  return ((error as Error).message.split("\n")[0] ?? "").replace(/:\s*$/, "");
}

function parseFile(file: string, read: ConfigText): ParsedFile {
  if (!("text" in read)) return { invalid: read.invalid, missing: read.missing };
  let raw: unknown;
  try {
    raw = parseYaml(read.text);
  } catch (error) {
    return { invalid: `${file} is not valid YAML: ${yamlError(error)}` };
  }
  if (raw !== null && raw !== undefined && (typeof raw !== "object" || Array.isArray(raw))) {
    return { invalid: `${file}: the top level must be a mapping of keys to values` };
  }
  const apps = (raw as { apps?: unknown } | null | undefined)?.apps;
  const setsApps = Array.isArray(apps) ? apps.length > 0 : apps !== undefined && apps !== null;
  const warnings: string[] = [];
  const errors: ConfigError[] = [];
  const config = normalizeUserConfig(raw, file, warnings, errors);
  return { config, setsApps, unknownKeys: warnings, errors: errors.map((error) => error.problems) };
}
