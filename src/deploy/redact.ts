/** What replaces a secret in output, logs and results. */
export const REDACTED = "***";

/** Secrets shorter than this are not redacted: replacing "a" everywhere would destroy the output. */
const MIN_SECRET_LENGTH = 6;

/** Credentials in a URL: `scheme://user:token@host` or `scheme://token@host`. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@:'"]+(?::[^\s/@'"]*)?@/gi;

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Removes the webhook secret(s) and URL credentials from text. Works on "binary" strings (one char per byte,
 * latin1) so arbitrary output bytes survive untouched around the replacements.
 */
export class Redaction {
  private readonly pattern: RegExp | undefined;
  /** The secrets as latin1 strings, longest first. */
  private readonly secrets: string[];

  constructor(secrets: (string | undefined)[]) {
    this.secrets = [...new Set(secrets.map((s) => s?.trim()).filter((s): s is string => !!s && s.length >= MIN_SECRET_LENGTH))]
      // Longest first, so a secret that contains another is replaced whole.
      .sort((a, b) => b.length - a.length)
      .map((s) => Buffer.from(s, "utf8").toString("latin1"));
    this.pattern = this.secrets.length ? new RegExp(this.secrets.map(escape).join("|"), "g") : undefined;
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

  /** A text (a message, a result field). */
  text(value: string): string {
    return this.binary(Buffer.from(value, "utf8").toString("latin1"), true);
  }

  /** Latin1 in, latin1 out; `decode` turns the result back into UTF-8 text. */
  binary(value: string, decode = false): string {
    let out = value.includes("://") ? value.replace(URL_CREDENTIALS, `$1${REDACTED}@`) : value;
    if (this.pattern) out = out.replace(this.pattern, REDACTED);
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
  private held = "";
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly redaction: Redaction,
    private readonly emit: (data: Uint8Array) => void,
    /** A partial line is released after this much quiet, so prompts and progress stay live. */
    private readonly quietMs = 100,
  ) {}

  write(data: Uint8Array): void {
    this.held += Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("latin1");
    const end = Math.max(this.held.lastIndexOf("\n"), this.held.lastIndexOf("\r"));
    if (end >= 0) {
      this.release(this.held.slice(0, end + 1));
      this.held = this.held.slice(end + 1);
    }
    if (this.held.length > MAX_HELD) {
      this.release(this.take(true));
      // A pathological "x://…" tail of 64 KiB without a "/": bounded memory wins over holding it.
      if (this.held.length > MAX_HELD) this.release(this.take(false));
    }
    if (this.held && !this.timer) this.timer = setTimeout(() => this.quiet(), this.quietMs);
  }

  /** Releases everything held: the process ended, or the service writes a line of its own. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const rest = this.take(false);
    if (rest) this.release(rest);
  }

  /**
   * After a quiet spell: releases the partial line so progress output stays live, except a tail that may be
   * the start of a secret (`printf part1; sleep 1; printf part2` must not leak part1 whatever the timing).
   * That tail waits for more output or the final flush.
   */
  private quiet(): void {
    this.timer = undefined;
    const safe = this.take(true);
    if (safe) this.release(safe);
  }

  /** Removes and returns the held text, all of it or only what cannot be the start of a secret. */
  private take(keepUnsafeTail: boolean): string {
    // Whole secrets first: one that ends inside the tail could otherwise be released cut in two.
    if (keepUnsafeTail) this.held = this.redaction.binary(this.held);
    const end = keepUnsafeTail ? this.redaction.unsafeTail(this.held) : this.held.length;
    const out = this.held.slice(0, end);
    this.held = this.held.slice(end);
    return out;
  }

  private release(text: string): void {
    this.emit(Buffer.from(this.redaction.binary(text), "latin1"));
  }
}
