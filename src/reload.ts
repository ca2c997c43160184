import { statSync } from "node:fs";
import type { ConsolaInstance } from "consola";
import { fileKey, findConfigFile, loadedFromOf, mergeConfig, parseConfigRead, readConfigText, strictFromEnv, type ConfigText, type LoadedFrom } from "./config.ts";
import { envConfig, type ResolvedConfig, type UserConfig } from "./config-schema.ts";

/**
 * Re-reads the config file on every call (rule 4: every POST sees edits) and parses it again only when its
 * text changed, so warnings are not repeated per request. Keeps the last good file values when the file
 * becomes invalid, so a half-saved edit does not break deploys. In strict mode an unknown key or a deleted file
 * counts as invalid too.
 */
export class ConfigReloader {
  private key = "";
  private fileConfig: UserConfig | undefined;
  private readonly loaded: LoadedFrom | undefined;
  /** Why the config file is not in force right now (invalid since its last edit); each deploy says so. */
  problem: string | undefined;

  constructor(
    private readonly base: UserConfig,
    private readonly cwd: string,
    private readonly logger: ConsolaInstance,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    // Loaded for another directory, the config's file layer is not the one this reloader reads: keep it whole.
    const loaded = loadedFromOf(base);
    this.loaded = loaded && loaded.cwd === cwd ? loaded : undefined;
    if (this.loaded) [this.key, this.fileConfig] = [this.loaded.key, this.loaded.fileConfig];
    this.strict = this.loaded?.strict ?? strictOrUnsure(env);
  }

  private readonly strict: boolean;
  /** The file the current file values came from, to name it when it is gone. */
  private goodFile: string | undefined;

  current(): ResolvedConfig {
    const file = this.configFile();
    const read = file ? readConfigText(file) : undefined;
    const key = fileKey(file, read);
    if (key !== this.key) {
      this.key = key;
      this.problem = undefined;
      if (file && read && !("missing" in read && read.missing)) this.fileConfig = this.parse(file, read);
      else if (this.strict && this.fileConfig) this.keep(`${this.goodFile ?? file ?? "the config file"} is gone`);
      else this.fileConfig = undefined;
    }
    // The same file text and base give the same config: merged once, the same object until either changes.
    if (this.merged && this.merged.key === key && this.merged.secret === this.base.secret) return this.merged.config;
    const config = this.loaded
      ? mergeConfig(this.cwd, this.loaded.base, this.fileConfig, this.loaded.env, this.changedSinceLoad(), this.fromEnv)
      : mergeConfig(this.cwd, this.base, this.fileConfig, this.fromEnv);
    this.merged = { key, secret: this.base.secret, config };
    return config;
  }

  private merged: { key: string; secret: string | undefined; config: ResolvedConfig } | undefined;

  /** SERVICE_* variables, read once: the environment of a running process does not change under it. */
  private get fromEnv(): UserConfig {
    this.envConfig ??= safeEnv(this.env, this.logger);
    return this.envConfig;
  }

  private envConfig: UserConfig | undefined;

  private lookup = { dirStamp: "", file: undefined as string | undefined };

  /**
   * The config file, looked up again only when the working directory's entries changed (its mtime): one stat
   * per request instead of one per candidate name. SERVICE_CONFIG names its file directly.
   */
  private configFile(): string | undefined {
    if (this.env.SERVICE_CONFIG) return findConfigFile(this.cwd, this.env);
    let dirStamp = "";
    try {
      const st = statSync(this.cwd);
      dirStamp = `${st.ino}:${st.mtimeMs}`;
    } catch {}
    if (!dirStamp || dirStamp !== this.lookup.dirStamp) this.lookup = { dirStamp, file: findConfigFile(this.cwd, this.env) };
    return this.lookup.file;
  }

  /** The new file values, or the last good ones (with a warning) when the file cannot be used. */
  private parse(file: string, read: ConfigText): UserConfig | undefined {
    try {
      const result = parseConfigRead(file, read);
      if (this.strict && !result.invalid && result.warnings.length > 0) return this.keep(result.warnings.map((w) => w.replace(/; ignored$/, "")).join("; "));
      for (const warning of result.warnings) this.logger.warn(warning);
      if (!result.invalid) {
        this.goodFile = file;
        return result.config;
      }
      return this.keep(result.invalid);
    } catch (error) {
      // One line in the stream, even for several problems (a list of apps with more than one wrong key).
      return this.keep((error as Error).message.replaceAll("\n", "; "));
    }
  }

  /** Says why the file is not used and what is in force instead; the last good file values stay. */
  private keep(why: string): UserConfig | undefined {
    const fallback = this.fileConfig ? "keeping the last good configuration" : "using environment variables and defaults only";
    this.problem = `${why}; ${fallback}${this.strict ? " (strict mode)" : ""}`;
    this.logger.warn(this.problem);
    return this.fileConfig;
  }

  /** What the caller set on a loadConfig result after loading it (a generated secret, say). */
  private changedSinceLoad(): UserConfig {
    const changed: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(this.base)) {
      if (value !== this.loaded?.snapshot[key]) changed[key] = value;
    }
    return changed;
  }
}

/** A SERVICE_STRICT_CONFIG that is neither yes nor no is taken as yes: keeping good values is the safe side. */
function strictOrUnsure(env: NodeJS.ProcessEnv): boolean {
  try {
    return strictFromEnv(env);
  } catch {
    return true;
  }
}

function safeEnv(env: NodeJS.ProcessEnv, logger: ConsolaInstance): UserConfig {
  try {
    return envConfig(env);
  } catch (error) {
    logger.warn(`${(error as Error).message}; ignored`);
    return {};
  }
}
