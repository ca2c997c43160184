/** What replaces a secret in output, logs and results. */
export const REDACTED = "***";

/**
 * Shorter secrets are refused: redacting one from deploy output would replace every `a` or `ab` in it, and
 * it is guessed in moments.
 */
export const MIN_SECRET_LENGTH = 4;

/** Credentials in a URL: `scheme://user:token@host` or `scheme://token@host`. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@:'"]+(?::[^\s/@'"]*)?@/gi;

/** `://` as bytes, made at its first use: not a cost of every start. */
let urlSeparator: Buffer | undefined;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * A secret, and each of its lines when it has several (a PEM key, a JSON credential): output is read a line at a
 * time (`env | grep`, `while read`, `tail -1`), so one line of it must not show either.
 */
function withLines(secret: string | undefined): string[] {
  if (!secret) return [];
  return /[\r\n]/.test(secret) ? [secret, ...secret.split(/\r?\n|\r/)] : [secret];
}

/**
 * Removes the webhook secret(s) and URL credentials from text. Works on "binary" strings (one char per byte,
 * latin1) so arbitrary output bytes survive untouched around the replacements.
 */
export class Redaction {
  /** The redactions of the last few secret lists: a server's deploys mostly share theirs. */
  private static readonly recent = new Map<string, Redaction>();

  /** A redaction of `secrets`, the same one as for an equal list lately (each list is built into a pattern once). */
  static of(secrets: (string | undefined)[]): Redaction {
    const key = secrets.join("\n");
    let redaction = Redaction.recent.get(key);
    if (!redaction) {
      redaction = new Redaction(secrets);
      Redaction.recent.set(key, redaction);
      if (Redaction.recent.size > 4) Redaction.recent.delete(Redaction.recent.keys().next().value!);
    }
    return redaction;
  }

  private readonly pattern: RegExp | undefined;
  /** The secrets as latin1 strings, longest first. */
  private readonly secrets: string[];
  /** The same secrets as bytes, for the byte-level check of `mayChange`. */
  private readonly secretBytes: Buffer[];

  constructor(secrets: (string | undefined)[]) {
    // Shorter secrets are refused at start; replacing "a" everywhere would destroy the output.
    this.secrets = [
      ...new Set(
        secrets
          .flatMap(withLines)
          .map((s) => s.trim())
          .filter((s) => s.length >= MIN_SECRET_LENGTH),
      ),
    ]
      // Longest first, so a secret that contains another is replaced whole.
      .sort((a, b) => b.length - a.length)
      .map((s) => Buffer.from(s, "utf8").toString("latin1"));
    this.pattern = this.secrets.length ? new RegExp(this.secrets.map(escapeRegExp).join("|"), "g") : undefined;
    this.secretBytes = this.secrets.map((s) => Buffer.from(s, "latin1"));
  }

  /**
   * False when `binary` would return these bytes (as latin1) unchanged: they hold no `://` and no secret. A
   * native byte search, so output with nothing to redact never becomes a string.
   */
  mayChange(bytes: Uint8Array): boolean {
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (view.indexOf((urlSeparator ??= Buffer.from("://", "latin1"))) >= 0) return true;
    for (const secret of this.secretBytes) if (view.indexOf(secret) >= 0) return true;
    return false;
  }

  /**
   * Where the part of `held` (latin1) that may be the start of a secret or of URL credentials begins, or
   * `held.length`. That part must wait for the rest of its line: released alone, the rest would arrive in the
   * next chunk and neither half would match.
   */
  unsafeTail(held: string): number {
    let from = held.length;
    for (const secret of this.secrets) {
      for (let n = Math.min(secret.length - 1, held.length); n > held.length - from; n--) {
        if (held.endsWith(secret.slice(0, n))) {
          from = held.length - n;
          break;
        }
      }
    }
    // `scheme://user:tok` with no `/`, `@` or space yet: the credentials may still be coming.
    const url = held.includes("://") ? /[a-z][a-z0-9+.-]*:\/\/[^\s/@'"]*$/i.exec(held) : null;
    if (url) from = Math.min(from, url.index);
    return from;
  }

  /**
   * `held.length - unsafeTail(held)` for bytes that `mayChange` said hold no `://` and no secret: then only the
   * last bytes (one fewer than the longest secret) can start a secret, so only they become a string.
   */
  unsafeTailLength(held: Uint8Array): number {
    const longest = this.secrets.length ? this.secrets[0]!.length : 1;
    const tail = Buffer.from(
      held.buffer,
      held.byteOffset + Math.max(0, held.length - (longest - 1)),
      Math.min(held.length, longest - 1),
    ).toString("latin1");
    return tail.length - this.unsafeTail(tail);
  }

  /** A text (a message, a result field). */
  text(value: string): string {
    return this.binary(Buffer.from(value, "utf8").toString("latin1"), true);
  }

  /** Latin1 in, latin1 out; `decode` turns the result back into UTF-8 text. */
  binary(value: string, decode = false): string {
    // Secrets first: one that is a whole URL with credentials (a database URL) goes whole, not only its user:password.
    // A plain search for each first: with the secrets of 200 apps it is several times cheaper than the pattern.
    let out =
      this.pattern && this.secrets.some((secret) => value.includes(secret))
        ? value.replace(this.pattern, REDACTED)
        : value;
    if (out.includes("://")) out = out.replace(URL_CREDENTIALS, `$1${REDACTED}@`);
    return decode ? Buffer.from(out, "latin1").toString("utf8") : out;
  }
}

/** Longest stretch of output held back waiting for its line to end (a secret cannot hide across a flush). */
const MAX_HELD = 64 * 1024;

/**
 * Redacts a stream of output chunks. Output is released line by line (a secret or a URL split across two
 * chunks is still found); a partial line is released by `flush` (at the end of a process), or after a short
 * quiet spell (so progress output stays live) or when it grows past MAX_HELD, then without a tail that may
 * be the start of a secret.
 */
export class OutputRedactor {
  /**
   * The partial line held back, as bytes (latin1: one byte per char of the string forms below). It never
   * holds a line end: `write` releases up to the last one.
   */
  private held: Uint8Array = EMPTY;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly redaction: Redaction,
    private readonly emit: (data: Uint8Array) => void,
    /** A partial line is released after this much quiet, so prompts and progress stay live. */
    private readonly quietMs = 100,
  ) {}

  write(data: Uint8Array): void {
    // `held` has no line end, so the last one of held + data is data's.
    const end = Math.max(data.lastIndexOf(10), data.lastIndexOf(13));
    if (end >= 0) {
      this.releaseBytes(concat(this.held, data.subarray(0, end + 1)));
      this.held = new Uint8Array(data.subarray(end + 1)); // a copy: the chunk itself can go
    } else {
      this.held = concat(this.held, data);
    }
    if (this.held.length > MAX_HELD) {
      this.emit(this.take(true));
      // A pathological "x://…" tail of 64 KiB without a "/": bounded memory wins over holding it.
      if (this.held.length > MAX_HELD) this.emit(this.take(false));
    }
    if (this.held.length > 0 && !this.timer) this.timer = setTimeout(() => this.quiet(), this.quietMs);
  }

  /** Releases everything held: the process ended, or the service writes a line of its own. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const rest = this.take(false);
    if (rest.length > 0) this.emit(rest);
  }

  /**
   * After a quiet spell: releases the partial line so progress output stays live, except a tail that may be
   * the start of a secret (`printf part1; sleep 1; printf part2` must not leak part1 whatever the timing).
   * That tail waits for more output or the final flush.
   */
  private quiet(): void {
    this.timer = undefined;
    const safe = this.take(true);
    if (safe.length > 0) this.emit(safe);
  }

  /**
   * Removes the held output, all of it or only what cannot be the start of a secret, and returns it
   * redacted. Without a `://` or a secret in it (most output) the bytes are cut as they are.
   */
  private take(keepUnsafeTail: boolean): Uint8Array {
    const bytes = this.held;
    if (!this.redaction.mayChange(bytes)) {
      const end = keepUnsafeTail ? bytes.length - this.redaction.unsafeTailLength(bytes) : bytes.length;
      this.held = end === bytes.length ? EMPTY : new Uint8Array(bytes.subarray(end));
      return bytes.subarray(0, end);
    }
    let held = latin1(bytes);
    // Whole secrets first: one that ends inside the tail could otherwise be released cut in two.
    if (keepUnsafeTail) held = this.redaction.binary(held);
    const end = keepUnsafeTail ? this.redaction.unsafeTail(held) : held.length;
    this.held = end === held.length ? EMPTY : Buffer.from(held.slice(end), "latin1");
    return Buffer.from(this.redaction.binary(held.slice(0, end)), "latin1");
  }

  private release(text: string): void {
    this.emit(Buffer.from(this.redaction.binary(text), "latin1"));
  }

  /** `release` for bytes: passed on as they are when there is nothing to redact (most output). */
  private releaseBytes(bytes: Uint8Array): void {
    if (this.redaction.mayChange(bytes)) this.release(latin1(bytes));
    else this.emit(bytes);
  }
}

const EMPTY = new Uint8Array(0);

const latin1 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");

/** `a` then `b`; `b` itself when `a` is empty (no copy). */
function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
