import * as nodeCrypto from "node:crypto";
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { resolve } from "node:path";
import type { ResolvedConfig, UserConfig } from "./schema.ts";

/** File in the working directory that holds the generated secret. */
export const SECRET_FILE = ".service.secret";

/**
 * Shorter secrets are refused: redacting one from deploy output would replace every `a` or `ab` in it, and
 * it is guessed in moments.
 */
export const MIN_SECRET_LENGTH = 4;

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
  const length = secret.trim().length;
  if (length >= WEAK_SECRET_LENGTH || length < MIN_SECRET_LENGTH) return undefined;
  const which = app === undefined ? "the webhook secret" : `the secret of app "${app}"`;
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
  const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    const fd = openSync(temp, "wx", 0o600);
    try {
      fchmodSync(fd, 0o600);
      writeSync(fd, `${content}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
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
    text = readFileSync(file, "utf8");
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
  if (config.secret) return { secret: config.secret, source: "config", generated: false };
  const file = resolve(cwd, SECRET_FILE);
  const existing = readSecretFile(file);
  if (existing) {
    config.secret = existing;
    return { secret: existing, source: "file", generated: false, file };
  }
  const secret = generateSecret();
  writeSecretFile(file, secret);
  config.secret = secret;
  return { secret, source: "generated", generated: true, file };
}

/** The one-shot `crypto.hash` (Bun, Node 20.12+): twice as fast as createHash for a short string. */
const oneShotHash = (nodeCrypto as { hash?: (algorithm: string, data: string, outputEncoding: "buffer") => Buffer })
  .hash;

const digest = oneShotHash
  ? (value: string) => oneShotHash("sha256", value, "buffer")
  : (value: string) => createHash("sha256").update(value).digest();

/** The digest of the last expected secret: it is the same on every request, so it is hashed once. */
let expectedDigest = { secret: "", digest: digest("") };

/** Constant-time string comparison: both sides are hashed first so lengths never leak or throw. */
export function secretsEqual(given: string, expected: string): boolean {
  if (expectedDigest.secret !== expected) expectedDigest = { secret: expected, digest: digest(expected) };
  return timingSafeEqual(digest(given), expectedDigest.digest);
}

/** Headers carrying an HMAC of the body: `<algorithm>=<hex>`, or bare hex (sha256) for Gitea/Forgejo/Gogs. */
const SIGNATURE_HEADERS = [
  "x-hub-signature-256",
  "x-hub-signature",
  "x-gitea-signature",
  "x-forgejo-signature",
  "x-gogs-signature",
];

/**
 * The signature headers that carry a digest. Gitea/Forgejo send all four even with no webhook secret (when
 * the user authenticates with their "Authorization Header" field instead): empty, or `sha1=` / `sha256=`
 * with nothing after. Such a header signs nothing, so it is not counted, neither for nor against.
 */
function presentSignatures(headers: Headers): string[] {
  const present: string[] = [];
  for (const name of SIGNATURE_HEADERS) {
    const value = headers.get(name)?.trim();
    if (value && !EMPTY_SIGNATURE.test(value)) present.push(value);
  }
  return present;
}

const EMPTY_SIGNATURE = /^(sha1|sha256)=$/i;

/** True when the request carries a body signature, so the body must be read to authenticate it. */
export function hasBodySignature(headers: Headers): boolean {
  return presentSignatures(headers).length > 0;
}

/** HMACs (hex) of a body, by algorithm: computed as it streamed in, so the body itself need not be kept. */
export type BodyDigests = Partial<Record<"sha256" | "sha1", string>>;

const SIGNATURE = /^(?:(sha256|sha1)=)?([0-9a-f]+)$/i;
const signatureAlgorithm = (value: string) =>
  (SIGNATURE.exec(value.trim())?.[1] ?? "sha256").toLowerCase() as "sha256" | "sha1";

/** `sha256=<hex>` (GitHub, Gitea, Bitbucket Cloud), `sha1=<hex>` (GitHub's legacy header) or bare hex. */
function signatureMatches(value: string, secret: string, body: Uint8Array | BodyDigests): boolean {
  const match = SIGNATURE.exec(value.trim());
  const algorithm = signatureAlgorithm(value);
  const expected =
    body instanceof Uint8Array ? createHmac(algorithm, secret).update(body).digest("hex") : (body[algorithm] ?? "");
  return secretsEqual((match?.[2] ?? "").toLowerCase(), expected) && match !== null && expected !== "";
}

/**
 * The HMACs the request's signature headers call for, fed the body chunk by chunk as it arrives; `digests()`
 * is what `verifyRequestSecret` takes in place of the body.
 */
export function bodySigner(
  headers: Headers,
  secret: string,
): { update(chunk: Uint8Array): void; digests(): BodyDigests } {
  const algorithms = [...new Set(presentSignatures(headers).map(signatureAlgorithm))];
  const hmacs = algorithms.map((algorithm) => [algorithm, createHmac(algorithm, secret.trim())] as const);
  return {
    update: (chunk) => {
      for (const [, hmac] of hmacs) hmac.update(chunk);
    },
    digests: () => Object.fromEntries(hmacs.map(([algorithm, hmac]) => [algorithm, hmac.digest("hex")])),
  };
}

/**
 * Checks a request's credentials against `secret`. Accepted: `X-Service-Secret: <secret>`,
 * `Authorization: Bearer <secret>`, `X-Gitlab-Token: <secret>` (GitLab's "Secret token"), and an HMAC of the
 * raw body in `X-Hub-Signature-256` / `X-Hub-Signature` (GitHub, Gitea/Forgejo, Bitbucket Cloud) or
 * `X-Gitea-Signature` / `X-Forgejo-Signature` / `X-Gogs-Signature`. At least one must be present, and every
 * one present must be right: a wrong header is a 401 even next to a right one. `body` (the raw body, or its
 * `bodySigner` digests) is needed only when a signature header is present.
 */
export function verifyRequestSecret(headers: Headers, secret: string, body?: Uint8Array | BodyDigests): boolean {
  const candidates: string[] = [];
  for (const name of ["x-service-secret", "x-gitlab-token"]) {
    const value = headers.get(name);
    if (value !== null) candidates.push(value.trim());
  }
  const authorization = headers.get("authorization");
  if (authorization !== null) {
    // Other schemes (Basic from a proxy, say) are not ours to judge.
    const match = /^Bearer(?:\s+(.*))?$/i.exec(authorization.trim());
    if (match) candidates.push((match[1] ?? "").trim());
  }
  // Header values arrive trimmed, so surrounding whitespace in the configured value (a YAML block scalar's
  // newline, say) is not part of the secret.
  const expected = secret.trim();
  const signatures = presentSignatures(headers);
  if (!expected || candidates.length + signatures.length === 0 || candidates.some((c) => c === "")) return false;
  if (signatures.length > 0 && !body) return false;
  let ok = true;
  for (const candidate of candidates) ok = secretsEqual(candidate, expected) && ok;
  for (const signature of signatures) ok = signatureMatches(signature, expected, body!) && ok;
  return ok;
}
