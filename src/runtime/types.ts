/**
 * The one seam between runtimes: how the server listens and how a process is started. Everything else is
 * web-standard Request/Response and streams. `#runtime` (package.json "imports") picks the implementation:
 * Bun.serve (behind a Bun.listen relay when bounded), and Bun.spawn, under Bun; node:http / node:child_process
 * under Node.js. Both bound the connections a bounded port holds (connections.ts).
 */
export interface ServeOptions {
  port: number;
  hostname: string;
  /** Connections idle this long are closed (a request may opt out with `noTimeout`). */
  idleTimeoutSeconds: number;
  /**
   * Count the connections as they are accepted and close the ones past the bounds (connections.ts), for a port
   * clients reach directly. Unbounded, the port is the HTTP server itself: what reaches it is requests.
   */
  bounded: boolean;
  maxRequestBodySize: number;
  fetch: (request: Request, control: RequestControl) => Response | Promise<Response>;
  error: (error: Error) => Response;
}

/** What a handler may ask of the server about one of its requests (one object for all of them under Bun). */
export interface RequestControl {
  /** `request` may stay silent as long as it likes (a deploy stream). */
  noTimeout(request: Request): void;
  /** The peer's IP address ("" when unknown); asked only when needed, it costs a system call under Bun. */
  remoteAddress(request: Request): string;
}

export interface Listener {
  port: number;
  stop(): Promise<void>;
}

export interface SpawnOptions {
  cwd: string;
  env: Record<string, string | undefined>;
}

/** A started process: its own process group (pid = pgid), stdin closed, stdout and stderr piped. */
export interface Child {
  pid: number;
  stdout: ReadableStream<Uint8Array>;
  stderr: ReadableStream<Uint8Array>;
  /** Settles when the process exits (not when its pipes close: children it left may hold them). */
  exited: Promise<{ exitCode: number | null; signal: string | null }>;
}

export interface Runtime {
  serve(options: ServeOptions): Promise<Listener>;
  /** Rejects with the errno error (ENOENT, EACCES, ENOEXEC…) when the process cannot be started. */
  spawn(argv: string[], options: SpawnOptions): Promise<Child>;
  /**
   * Runs a process to its end, its stdout and stderr written to the files `into` names (no pipe is read, so no
   * stream is made: ops/start-check.ts); its exit code, null when a signal ended it. Rejects as `spawn` does.
   */
  runWritingFiles(
    argv: string[],
    options: SpawnOptions & { into: { stdout: string; stderr: string } },
  ): Promise<number | null>;
}
