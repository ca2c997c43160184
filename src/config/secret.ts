import { randomBytes } from "../system/digest.ts";
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { fileStamp, readNoFollow, writeFileAtomic } from "../system/files.ts";
import { MIN_SECRET_LENGTH } from "../system/redact.ts";
import type { ResolvedConfig } from "./schema-resolved.ts";
import type { UserConfig } from "./schema.ts";

/** File in the working directory that holds the generated secret. */
export const SECRET_FILE = ".service.secret";

/** Where the generated admin token is kept, relative to the working directory. */
export const ADMIN_TOKEN_FILE = ".service/admin.token";

/** Shorter secrets work but are warned about: guessing is only as hard as the secret is long. */
export const WEAK_SECRET_LENGTH = 16;

/** How messages name the top-level secret. */
export const CONFIGURED_SECRET = "the configured secret (SERVICE_SECRET or the secret key)";

/** Why `secret`, set by `where`, cannot be used; undefined when it can. */
export function shortSecretError(secret: string, where: string): string | undefined {
  const length = secret.trim().length;
  if (length === 0 || length >= MIN_SECRET_LENGTH) return undefined;
  return `${where} is only ${length} character${length > 1 ? "s" : ""}: a secret needs at least ${MIN_SECRET_LENGTH} (it could not be kept out of deploy output, and is guessed at once); use ${WEAK_SECRET_LENGTH} or more, or remove it to have one generated`;
}

/** The warning for a secret that works but is short enough to guess; undefined for a long one (and for one too short to use: that is `shortSecretError`'s). */
export function weakSecretWarning(secret: string, app?: string): string | undefined {
  return weakWarning(secret, app === undefined ? "the webhook secret" : `the secret of app "${app}"`);
}

/**
 * The same for the admin token in force (`file`: the one it was read from). The admin listener stops a
 * guesser's address while it is over its failure budget, but a short token is still found by many addresses.
 */
export function weakAdminTokenWarning(token: string, file?: string): string | undefined {
  return weakWarning(token, file === undefined ? "the admin token" : `the admin token in ${file}`);
}

function weakWarning(secret: string, which: string): string | undefined {
  const length = secret.trim().length;
  if (length >= WEAK_SECRET_LENGTH || length < MIN_SECRET_LENGTH) return undefined;
  return `${which} is only ${length} characters: a short secret can be guessed; use ${WEAK_SECRET_LENGTH} or more (a generated one has 43: remove it to have one generated)`;
}

/** 256 bits from the CSPRNG, base64url: 43 characters, safe in headers and URLs. */
export function generateSecret(): string {
  return randomBytes(32).toString("base64url");
}

/**
 * Writes `content` to `file` atomically (temp file + rename) with mode 0600 whatever the umask. A failure
 * names `file`, not the temp file the user never asked about, and leaves no temp file behind.
 */
export function writeSecretFile(file: string, content: string): void {
  try {
    writeFileAtomic(file, `${content}\n`, 0o600, true);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new Error(
      `cannot write the secret file ${file} (${reason}): set SERVICE_SECRET, or make the directory writable`,
      { cause: error },
    );
  }
}

/** Reads a secret file; undefined when it does not exist. An empty file is an error, not a secret. */
export function readSecretFile(file: string): string | undefined {
  let text: string;
  try {
    // A link the operator made is followed; a FIFO or a device is refused, never waited on.
    text = readNoFollow(file, true);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new Error(`cannot read the secret file ${file}: ${(error as Error).message}`, { cause: error });
  }
  const secret = text.trim();
  if (!secret)
    throw new Error(`the secret file ${file} is empty: delete it to generate a new secret, or put one in it`);
  const short = shortSecretError(secret, `the secret in ${file}`);
  if (short) throw new Error(short);
  return secret;
}

/** A warning when a secret file can be read by users other than its owner. */
export function secretFileWarning(file: string): string | undefined {
  let mode: number;
  try {
    mode = statSync(file).mode & 0o777;
  } catch {
    return undefined;
  }
  if ((mode & 0o077) === 0) return undefined;
  return `the secret file ${file} can be read by other users (mode ${mode.toString(8).padStart(4, "0")}): run chmod 600 ${file}`;
}

export interface EnsuredSecret {
  secret: string;
  /** Where the secret came from. */
  source: "config" | "file" | "generated";
  /** True only on the start that created `.service.secret`: the one time the value is shown. */
  generated: boolean;
  /** The secret file, when the secret lives in one. */
  file?: string;
}

/**
 * Makes sure `config.secret` is set: the configured secret (SERVICE_SECRET or the `secret` key) wins, then
 * `.service.secret` in `cwd`, else a new one is generated and stored there. Sets `config.secret`.
 */
export function ensureWebhookSecret(config: UserConfig | ResolvedConfig, cwd = process.cwd()): EnsuredSecret {
  // Header values arrive trimmed, so a blank secret could never match: every request would get 401.
  if (config.secret && !config.secret.trim()) {
    throw new Error(`${CONFIGURED_SECRET} is blank: set a real value, or remove it to have one generated`);
  }
  const short = config.secret && shortSecretError(config.secret, CONFIGURED_SECRET);
  if (short) throw new Error(short);
  const marked = secretFileOf(config);
  if (config.secret && marked) return { secret: config.secret, source: "file", generated: false, file: marked };
  if (config.secret) return { secret: config.secret, source: "config", generated: false };
  const file = resolve(cwd, SECRET_FILE);
  const existing = readSecretFile(file);
  if (existing) {
    setSecretFromFile(config, file, existing);
    return { secret: existing, source: "file", generated: false, file };
  }
  const secret = generateSecret();
  writeSecretFile(file, secret);
  setSecretFromFile(config, file, secret);
  return { secret, source: "generated", generated: true, file };
}

/**
 * A secret kept in a file, as a running server uses it: read again when the file changes (`service secret
 * rotate` and `service admin-token rotate` replace it atomically), at the cost of one stat per call. A file
 * that became unreadable, empty or too short keeps the last good secret: a half-done edit must not lock every
 * sender out.
 */
export class SecretFile {
  private stamp: string | undefined;
  private value: string;

  constructor(
    readonly file: string,
    initial: string,
  ) {
    this.value = initial;
    this.stamp = fileStamp(file);
    this.current();
  }

  current(): string {
    const stamp = fileStamp(this.file);
    if (stamp === undefined || stamp === this.stamp) return this.value;
    this.stamp = stamp;
    try {
      this.value = readSecretFile(this.file) ?? this.value;
    } catch {
      // Kept: the last good secret.
    }
    return this.value;
  }
}

/** Marks a config whose `secret` was read from (or generated into) `.service.secret`, and which one. */
const FROM_FILE = Symbol("service.secretFromFile");

type Marked = { [FROM_FILE]?: { file: string; secret: string } };

function markFromFile(config: UserConfig | ResolvedConfig, file: string, secret: string): void {
  Object.defineProperty(config, FROM_FILE, { value: { file, secret }, enumerable: false, configurable: true });
}

/**
 * The secret file `config.secret` came from, while it still holds that file's value; undefined for a secret
 * configured by SERVICE_SECRET or the `secret` key. A running server reads that file again when it changes.
 */
export function secretFileOf(config: UserConfig | ResolvedConfig): string | undefined {
  const mark = (config as Marked)[FROM_FILE];
  return mark && mark.secret === config.secret ? mark.file : undefined;
}

/** Sets `config.secret` to a new value of the file it came from (a rotated secret). */
export function setSecretFromFile(config: UserConfig | ResolvedConfig, file: string, secret: string): void {
  config.secret = secret;
  markFromFile(config, file, secret);
}
