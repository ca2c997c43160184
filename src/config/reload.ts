import { statSync } from "node:fs";
import { dirname } from "node:path";
import type { Logger } from "../system/logger.ts";
import { ChangeWatch } from "../system/change-watch.ts";
import { fileKey, findConfigFile, loadedFromOf, readConfigText, strictFromEnv, type LoadedFrom } from "./load.ts";
import { envConfig } from "./env-keys.ts";
import type { ResolvedConfig } from "./schema-resolved.ts";
import type { UserConfig } from "./schema.ts";
import { type ConfigText, resolveConfig } from "./resolve.ts";
import { changedKeys } from "./audit.ts";
import { SecretFile, secretFileOf, setSecretFromFile } from "./secret.ts";

/**
 * The configuration in force as each POST sees it (docs/configuration.md "Configuration": every POST sees edits).
 * The working directory and the config file's directory are watched: while nothing changed there (and for at most
 * LOOK_AGAIN_MS), a request costs no system call; `current(true)`, asked before every deploy, always looks. A look
 * reads the file again only when its stat changed and resolves it again only when its text changed, so warnings
 * are not repeated per request. Keeps the last good file values when the file becomes invalid, so a half-saved
 * edit does not break deploys. In strict mode an unknown key or a deleted file counts as invalid too.
 */
export class ConfigReloader {
  private key = "";
  private fileConfig: UserConfig | undefined;
  private readonly loaded: LoadedFrom | undefined;
  /** Told the names of the keys a new version of the file changed. */
  onChange: ((keys: string[]) => void) | undefined;
  private looked = false;
  /** Why the config file is not in force right now (invalid since its last edit); each deploy says so. */
  problem: string | undefined;

  constructor(
    private readonly base: UserConfig,
    private readonly cwd: string,
    private readonly logger: Logger,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {
    // Loaded for another directory, the config's file layer is not the one this reloader reads: keep it whole.
    const loaded = loadedFromOf(base);
    this.loaded = loaded && loaded.cwd === cwd ? loaded : undefined;
    if (this.loaded) [this.key, this.fileConfig] = [this.loaded.key, this.loaded.fileConfig];
    this.strict = this.loaded?.strict ?? strictOrUnsure(env);
    if (this.loaded?.fileConfig) this.goodFile = findConfigFile(cwd, env);
    this.changes.watch(cwd);
    if (env.SERVICE_CONFIG) this.changes.watch(dirname(findConfigFile(cwd, env)!));
  }

  /** Changes in the directories of the config file, its candidates and `.service.secret`. */
  private readonly changes = new ChangeWatch();

  /** Stops watching (the server stopped). */
  close(): void {
    this.changes.close();
  }

  private readonly strict: boolean;
  /** The file the current file values came from, to name it when it is gone. */
  private goodFile: string | undefined;

  /**
   * The configuration in force: the last one while no watched directory changed (at most LOOK_AGAIN_MS ago), else
   * looked at again; with `fresh`, looked at again in any case (a request about to deploy).
   */
  current(fresh = false): ResolvedConfig {
    const merged = this.merged;
    if (!fresh && merged && merged.secret === this.base.secret && !this.changes.due()) return merged.config;
    this.refreshSecret();
    const file = this.configFile();
    const key = this.unchanged(file) ? this.key : this.readKey(file);
    if (key !== this.key) {
      this.key = key;
      this.problem = undefined;
      const read = this.read;
      const before = this.fileConfig;
      if (file && read && !("missing" in read && read.missing)) this.fileConfig = this.parse(file, read);
      else if (this.strict && this.fileConfig) this.keep(`${this.goodFile ?? file ?? "the config file"} is gone`);
      else this.fileConfig = undefined;
      // After the first look, a change of the file's values is told (the keys' names: the audit trail's line).
      const keys = this.looked && before !== this.fileConfig ? changedKeys({ ...before }, { ...this.fileConfig }) : [];
      if (keys.length > 0) this.onChange?.(keys);
    }
    this.looked = true;
    // The same file text and base give the same config: merged once, the same object until either changes.
    if (this.merged && this.merged.key === key && this.merged.secret === this.base.secret) return this.merged.config;
    const layers = this.loaded
      ? { base: this.loaded.base, env: this.loaded.env, over: [this.changedSinceLoad(), this.fromEnv] }
      : { base: this.base, env: {}, over: [this.fromEnv] };
    const { config } = resolveConfig({ cwd: this.cwd, fileValues: this.fileConfig, ...layers });
    this.merged = { key, secret: this.base.secret, config };
    return config;
  }

  private merged: { key: string; secret: string | undefined; config: ResolvedConfig } | undefined;

  /** `.service.secret`, when the base's secret came from it. */
  private secretFile: SecretFile | undefined;

  /**
   * A base secret read from `.service.secret` follows that file (`service secret rotate`): the next request
   * sees the new one, and the merge below runs again because the base's secret changed.
   */
  private refreshSecret(): void {
    const file = secretFileOf(this.base);
    if (!file) return;
    if (this.secretFile?.file !== file) {
      this.secretFile = new SecretFile(file, this.base.secret!);
      this.changes.watch(dirname(file));
    }
    const secret = this.secretFile.current();
    if (secret !== this.base.secret) setSecretFromFile(this.base, file, secret);
  }

  /** The file's identity when it was last read, and whether that read can be trusted to stand for later ones. */
  private seen: { file: string; stamp: string; settled: boolean } | undefined;
  /** The text of the last read (used once, to parse it when its key changed). */
  private read: ConfigText | undefined;

  /**
   * True when the file is the one last read and unchanged since: same device, inode, size, mtime and ctime (in
   * ns). A request, authorized or not, then costs one stat instead of a read of up to 1 MiB. A file modified
   * within RACY_NS of its read could change again within the same timestamp tick: it is read until it settles.
   */
  private unchanged(file: string | undefined): boolean {
    const seen = this.seen;
    return !!file && !!seen && seen.settled && seen.file === file && seen.stamp === statStamp(file)?.stamp;
  }

  private readKey(file: string | undefined): string {
    const before = file ? statStamp(file) : undefined;
    this.read = file ? readConfigText(file) : undefined;
    this.seen =
      file && before && "text" in this.read!
        ? { file, stamp: before.stamp, settled: BigInt(Date.now()) * 1_000_000n - before.mtimeNs > RACY_NS }
        : undefined;
    return fileKey(file, this.read);
  }

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
    if (!dirStamp || dirStamp !== this.lookup.dirStamp)
      this.lookup = { dirStamp, file: findConfigFile(this.cwd, this.env) };
    return this.lookup.file;
  }

  /** The new file values, or the last good ones (with a warning) when the file cannot be used. */
  private parse(file: string, read: ConfigText): UserConfig | undefined {
    const resolved = resolveConfig({ cwd: this.cwd, file: { path: file, read }, env: {} });
    // One line in the stream, even for several problems (a list of apps with more than one wrong key).
    if (resolved.invalid) return this.keep(resolved.invalid);
    if (resolved.fileErrors.length > 0) return this.keep(resolved.fileErrors[0]!.join("; "));
    if (this.strict && resolved.unknownKeys.length > 0) return this.keep(resolved.unknownKeys.join("; "));
    for (const unknown of resolved.unknownKeys) this.logger.warn(`${unknown}; ignored`);
    this.goodFile = file;
    return resolved.fileConfig;
  }

  /** Says why the file is not used and what is in force instead; the last good file values stay. */
  private keep(why: string): UserConfig | undefined {
    const fallback = this.fileConfig
      ? "keeping the last good configuration"
      : "using environment variables and defaults only";
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

/** How long after its last modification a file's timestamps may not yet tell a later write apart (coarse clocks). */
const RACY_NS = 2_000_000_000n;

function statStamp(file: string): { stamp: string; mtimeNs: bigint } | undefined {
  try {
    const st = statSync(file, { bigint: true });
    return { stamp: `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`, mtimeNs: st.mtimeNs };
  } catch {
    return undefined;
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

/** A wrong SERVICE_* value leaves the whole environment layer out, said once. */
function safeEnv(env: NodeJS.ProcessEnv, logger: Logger): UserConfig {
  const errors: string[] = [];
  const values = envConfig(env, errors);
  if (errors.length === 0) return values;
  logger.warn(`${errors[0]}; ignored`);
  return {};
}
