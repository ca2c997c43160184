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

  constructor(secrets: (string | undefined)[]) {
    const usable = [...new Set(secrets.map((s) => s?.trim()).filter((s): s is string => !!s && s.length >= MIN_SECRET_LENGTH))]
      // Longest first, so a secret that contains another is replaced whole.
      .sort((a, b) => b.length - a.length)
      .map((s) => escape(Buffer.from(s, "utf8").toString("latin1")));
    this.pattern = usable.length ? new RegExp(usable.join("|"), "g") : undefined;
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
 * chunks is still found); a partial line is released by `flush` (at the end of a process, or after a short
 * quiet spell so progress output stays live) or when it grows past MAX_HELD.
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
    if (this.held.length > MAX_HELD) this.flush();
    else if (this.held && !this.timer) this.timer = setTimeout(() => this.flush(), this.quietMs);
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.held) return;
    const rest = this.held;
    this.held = "";
    this.release(rest);
  }

  private release(text: string): void {
    this.emit(Buffer.from(this.redaction.binary(text), "latin1"));
  }
}
