/** Most bytes of one output stream kept in the result (the .log file and the live stream have everything). */
export const MAX_CAPTURE_BYTES = 1024 * 1024;

/** Collects one output stream as text, up to MAX_CAPTURE_BYTES. */
export class Capture {
  private text = "";
  private bytes = 0;
  private dropped = 0;
  private readonly decoder = new TextDecoder();

  add(data: Uint8Array): void {
    const room = MAX_CAPTURE_BYTES - this.bytes;
    if (room <= 0) {
      this.dropped += data.length;
      return;
    }
    const kept = data.length > room ? data.subarray(0, room) : data;
    this.dropped += data.length - kept.length;
    this.bytes += kept.length;
    this.text += this.decoder.decode(kept, { stream: true });
  }

  toString(): string {
    const tail = this.decoder.decode();
    return this.dropped
      ? `${this.text}${tail}\n[truncated: ${this.dropped} more bytes in the .log file]\n`
      : this.text + tail;
  }
}

/** The two output streams of one step (or of the rollback's reset and rerun together). */
export interface Captures {
  stdout: Capture;
  stderr: Capture;
}

export const captures = (): Captures => ({ stdout: new Capture(), stderr: new Capture() });
