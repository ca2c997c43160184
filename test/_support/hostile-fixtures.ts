/**
 * Fixtures for the hostile-input tests: raw HTTP/1.1 exchanges over a plain socket (for requests
 * fetch will not send: odd header casing, duplicate headers, malformed Host, hand-made chunking), the memory
 * of a process, and the processes carrying a marker in their command line. Loopback only.
 */
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";

export interface RawAnswer {
  /** Status of the final (non-1xx) response; 0 when the server closed without answering. */
  status: number;
  /** Header names in lower case (the last value of a repeated header). */
  headers: Record<string, string>;
  /** The body, de-chunked when the server chunked it. */
  body: Buffer;
  /** Everything received, as received. */
  raw: Buffer;
}

/** Splits a complete raw answer (the server closed the connection) into status, headers and body. */
export function parseAnswer(raw: Buffer): RawAnswer {
  let rest = raw;
  for (;;) {
    const end = rest.indexOf("\r\n\r\n");
    if (end < 0) return { status: 0, headers: {}, body: Buffer.alloc(0), raw };
    const head = rest.subarray(0, end).toString("latin1");
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
    const bodyBytes = rest.subarray(end + 4);
    // Interim answers (100 Continue) come before the real one.
    if (status >= 100 && status < 200) {
      rest = bodyBytes;
      continue;
    }
    const headers: Record<string, string> = {};
    for (const line of head.split("\r\n").slice(1)) {
      const colon = line.indexOf(":");
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const body = /chunked/i.test(headers["transfer-encoding"] ?? "") ? dechunk(bodyBytes) : bodyBytes;
    return { status, headers, body, raw };
  }
}

/** The data of a chunked body (as much of it as arrived). */
export function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf("\r\n", at);
    if (lineEnd < 0) break;
    const size = Number.parseInt(data.subarray(at, lineEnd).toString("latin1"), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

export interface ExchangeOptions {
  /** A timeout rejects; 30 s unless told. */
  timeoutMs?: number;
  /** Closes the connection once this is true of everything received so far (latin1): for a body never finished. */
  until?: (text: string) => boolean;
  /** The local address to connect from (any 127.0.0.x works on Linux): a client the server sees as another. */
  localAddress?: string;
}

/**
 * The one raw HTTP/1.1 client of the tests: sends `parts` (one write each) over a new connection to
 * 127.0.0.1:`port` and collects everything until the server closes (the requests say `Connection: close`) or
 * `until` holds. An error after data arrived (a reset of an upload the server did not read) still counts as an
 * answer; a timeout rejects.
 */
export function exchange(
  port: number,
  parts: (string | Uint8Array)[],
  options: ExchangeOptions = {},
): Promise<RawAnswer> {
  const { timeoutMs = 30_000, until, localAddress } = options;
  return new Promise((resolvePromise, reject) => {
    const socket = connect({ host: "127.0.0.1", port, ...(localAddress ? { localAddress } : {}) });
    const chunks: Buffer[] = [];
    let text = "";
    let settled = false;
    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolvePromise(parseAnswer(Buffer.concat(chunks)));
    };
    const timer = setTimeout(() => {
      if (settled) return;
      settled = true;
      socket.destroy();
      reject(
        new Error(
          `no complete answer within ${timeoutMs} ms; got: ${JSON.stringify(Buffer.concat(chunks).toString("latin1").slice(0, 300))}`,
        ),
      );
    }, timeoutMs);
    socket.on("connect", () => {
      for (const part of parts) socket.write(part);
    });
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      if (!until) return;
      text += chunk.toString("latin1");
      if (until(text)) finish();
    });
    socket.on("close", finish);
    socket.on("error", () => finish());
  });
}

/** `Transfer-Encoding: chunked` framing of `data`, in chunks of `size` bytes, with the final zero chunk. */
export function chunkedBytes(data: Uint8Array, size: number): Buffer {
  const out: Buffer[] = [];
  for (let i = 0; i < data.length; i += size) {
    const piece = data.subarray(i, i + size);
    out.push(Buffer.from(`${piece.length.toString(16)}\r\n`), Buffer.from(piece), Buffer.from("\r\n"));
  }
  out.push(Buffer.from("0\r\n\r\n"));
  return Buffer.concat(out);
}

/** Resident memory of a process in bytes (VmRSS of /proc/<pid>/status); 0 once it is gone. */
export function rssBytes(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The processes whose command line contains `marker`: `pid args` lines from `ps -eo pid=,args=`. */
export function markerProcesses(marker: string): { pid: number; args: string }[] {
  const ps = Bun.spawnSync(["ps", "-eo", "pid=,args="], { stdout: "pipe", stderr: "ignore" });
  const out: { pid: number; args: string }[] = [];
  for (const line of ps.stdout.toString().split("\n")) {
    const match = /^\s*(\d+)\s+(.*)$/.exec(line);
    if (match && match[2]!.includes(marker) && Number(match[1]) !== process.pid)
      out.push({ pid: Number(match[1]), args: match[2]! });
  }
  return out;
}

/** Cleanup: SIGKILLs, one by one and by pid, the processes this test started that carry `marker`. */
export function killMarked(marker: string): void {
  for (const { pid } of markerProcesses(marker)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
}

/** A connection that sends `text` one byte at a time, every `everyMs`, until closed (a slowloris client). */
export function dribble(
  port: number,
  head: string,
  text: string,
  everyMs: number,
): { socket: Socket; sent: () => number; close: () => void } {
  const socket = connect(port, "127.0.0.1");
  let at = 0;
  let timer: ReturnType<typeof setInterval> | undefined;
  socket.on("error", () => {});
  socket.on("data", () => {});
  socket.on("connect", () => {
    socket.write(head);
    timer = setInterval(() => {
      if (socket.destroyed || at >= text.length) return;
      socket.write(text[at++]!);
    }, everyMs);
  });
  const close = () => {
    clearInterval(timer);
    socket.destroy();
  };
  socket.on("close", () => clearInterval(timer));
  return { socket, sent: () => at, close };
}
