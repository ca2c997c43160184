/**
 * The one raw HTTP/1.1 client of the tests, over a plain socket to 127.0.0.1: for requests fetch will not send
 * (odd header casing, duplicate headers, malformed Host, hand-made chunking, bodies that never end) and for
 * answers fetch would hide (the bytes as received, a client that does not read). Loopback only.
 */
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

/** One `Transfer-Encoding: chunked` frame holding `data`. */
export function chunkFrame(data: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from("\r\n")]);
}

/**
 * `Transfer-Encoding: chunked` framing of `data` (a string is sent as UTF-8), in chunks of `size` bytes, with
 * the final zero chunk.
 */
export function chunkedBytes(data: string | Uint8Array, size: number): Buffer {
  const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(chunkFrame(bytes.subarray(i, i + size)));
  out.push(Buffer.from("0\r\n\r\n"));
  return Buffer.concat(out);
}

/** An open connection to the server: what arrived so far, and writes that wait for the kernel to take them. */
export interface RawConnection {
  socket: Socket;
  /** Everything received so far. */
  received(): Buffer;
  /** How many bytes were received so far. */
  bytes(): number;
  /** What arrived so far, parsed (status 0 while no whole head is in). */
  answer(): RawAnswer;
  /** The answer once its head and its Content-Length bytes of body are in; undefined before. */
  complete(): RawAnswer | undefined;
  /** Resolves when the connection has closed (either side, or an error). */
  closed: Promise<void>;
  isClosed(): boolean;
  /**
   * Writes `data`; resolves true once it was handed to the kernel, false when the connection closed first or
   * the write did not go through within `stallMs` (a server that stopped reading).
   */
  send(data: string | Uint8Array, stallMs?: number): Promise<boolean>;
  close(): void;
  /** `using connection = connectRaw(…)`: closed when the block ends. */
  [Symbol.dispose](): void;
}

export interface ConnectOptions {
  /** The local address to connect from (any 127.0.0.x works on Linux): a client the server sees as another. */
  localAddress?: string;
  /** Does not read what the server sends until `socket.resume()`: a client that never reads. */
  paused?: boolean;
}

/**
 * Opens a connection to 127.0.0.1:`port` and writes `parts` (one write each; written once connected). Errors
 * are not thrown: a reset ends the connection like a close does, and what arrived before it still counts.
 */
export function connectRaw(
  port: number,
  parts: (string | Uint8Array)[] = [],
  options: ConnectOptions = {},
): RawConnection {
  const socket = connect({
    host: "127.0.0.1",
    port,
    ...(options.localAddress ? { localAddress: options.localAddress } : {}),
  });
  if (options.paused) socket.pause();
  const chunks: Buffer[] = [];
  let size = 0;
  let ended = false;
  socket.on("data", (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.length;
  });
  socket.on("error", () => {});
  const closed = new Promise<void>((resolve) =>
    socket.on("close", () => {
      ended = true;
      resolve();
    }),
  );
  for (const part of parts) socket.write(part);
  const received = () => Buffer.concat(chunks);
  return {
    socket,
    received,
    bytes: () => size,
    answer: () => parseAnswer(received()),
    complete() {
      const answer = parseAnswer(received());
      const length = Number(answer.headers["content-length"] ?? Number.NaN);
      return answer.status > 0 && answer.body.length >= length ? answer : undefined;
    },
    closed,
    isClosed: () => ended,
    send(data, stallMs = 10_000) {
      if (ended) return Promise.resolve(false);
      return new Promise<boolean>((done) => {
        const end = (value: boolean) => {
          clearTimeout(stalled);
          socket.off("close", onClose);
          done(value);
        };
        const onClose = () => end(false);
        const stalled = setTimeout(() => end(false), stallMs);
        socket.on("close", onClose);
        socket.write(data, (error) => end(!error));
      });
    },
    close: () => socket.destroy(),
    [Symbol.dispose]: () => socket.destroy(),
  };
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
 * One request, one answer: sends `parts` (one write each) over a new connection to 127.0.0.1:`port` and
 * collects everything until the server closes (the requests say `Connection: close`) or `until` holds. An
 * error after data arrived (a reset of an upload the server did not read) still counts as an answer; a timeout
 * rejects.
 */
export async function exchange(
  port: number,
  parts: (string | Uint8Array)[],
  options: ExchangeOptions = {},
): Promise<RawAnswer> {
  const { timeoutMs = 30_000, until, localAddress } = options;
  using connection = connectRaw(port, parts, { localAddress });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `no complete answer within ${timeoutMs} ms; got: ${JSON.stringify(connection.received().toString("latin1").slice(0, 300))}`,
          ),
        ),
      timeoutMs,
    );
  });
  const held = until
    ? new Promise<void>((resolve) => {
        let text = "";
        connection.socket.on("data", (chunk: Buffer) => {
          text += chunk.toString("latin1");
          if (until(text)) resolve();
        });
      })
    : new Promise<void>(() => {});
  try {
    await Promise.race([connection.closed, held, timedOut]);
  } finally {
    clearTimeout(timer);
  }
  return connection.answer();
}

export interface UploadOptions {
  /** Frames the body as `Transfer-Encoding: chunked`. */
  chunked?: boolean;
  /** Ends a chunked body with its final zero chunk once every byte is sent; unfinished when false. */
  finish?: boolean;
  /** Bytes per write; 64 KiB unless told. */
  pieceBytes?: number;
  /** Stops sending and resolves as soon as the answer is complete, rather than once every byte was sent. */
  untilAnswered?: boolean;
  /** A timeout rejects; 60 s unless told. */
  timeoutMs?: number;
}

/**
 * Sends `head`, then `bytes` of body (`{` bytes) in pieces, each write waiting until its bytes are handed to the
 * kernel, and resolves with the server's complete answer and how many body bytes went out. A server that stops
 * reading altogether (backpressure) is not an error: after 10 s without progress the upload stops sending. With
 * `finish` false the body is left unfinished (no final chunk, fewer bytes than a Content-Length declares): an
 * answer then proves the server refused the request without waiting for the rest of it.
 */
export function upload(
  port: number,
  head: string,
  bytes: number,
  options: UploadOptions = {},
): Promise<{ answer: RawAnswer; sent: number }> {
  const { chunked = false, finish = true, pieceBytes = 64 * 1024, untilAnswered = false, timeoutMs = 60_000 } = options;
  const piece = Buffer.alloc(pieceBytes, 0x7b);
  return new Promise((resolvePromise, reject) => {
    const connection = connectRaw(port, [head]);
    let sent = 0;
    let writing = true;
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      connection.close();
      reject(
        new Error(
          `no complete answer to the upload after ${sent} bytes; got: ${JSON.stringify(connection.received().toString("latin1").slice(0, 300))}`,
        ),
      );
    }, timeoutMs);
    const settle = () => {
      if (settled || (writing && !untilAnswered && !connection.isClosed())) return;
      const answer = connection.complete() ?? (connection.isClosed() ? connection.answer() : undefined);
      if (!answer) return;
      settled = true;
      clearTimeout(timer);
      connection.close();
      resolvePromise({ answer, sent });
    };
    connection.socket.on("data", () => settle());
    void connection.closed.then(() => {
      writing = false;
      settle();
    });
    void (async () => {
      while (sent < bytes && !settled && !connection.isClosed()) {
        const part = piece.subarray(0, Math.min(piece.length, bytes - sent));
        if (!(await connection.send(chunked ? chunkFrame(part) : part))) break;
        sent += part.length;
      }
      if (finish && chunked && !connection.isClosed() && !settled) connection.socket.write("0\r\n\r\n");
      writing = false;
      settle();
    })();
  });
}

/**
 * A connection that sends `head`, then `text` one byte at a time every `everyMs`, until closed (a slowloris
 * client). `answer()` is what the server sent back so far; `using slow = dribble(…)` closes it when the block ends.
 */
export function dribble(
  port: number,
  head: string,
  text: string,
  everyMs: number,
): { socket: Socket; sent: () => number; answer: () => RawAnswer; close: () => void } & Disposable {
  const connection = connectRaw(port, [head]);
  const { socket } = connection;
  let at = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || at >= text.length) return;
    socket.write(text[at++]!);
  }, everyMs);
  void connection.closed.then(() => clearInterval(timer));
  const close = () => {
    clearInterval(timer);
    connection.close();
  };
  return { socket, sent: () => at, answer: connection.answer, close, [Symbol.dispose]: close };
}
