/** The one seam between runtimes: how the server listens. Everything else is web-standard Request/Response. */
export interface ServeOptions {
  port: number;
  hostname: string;
  /** Connections idle this long are closed (a request may opt out with `noTimeout`). */
  idleTimeoutSeconds: number;
  maxRequestBodySize: number;
  fetch: (request: Request, control: RequestControl) => Response | Promise<Response>;
  error: (error: Error) => Response;
}

export interface RequestControl {
  /** This request may stay silent as long as it likes (a deploy stream). */
  noTimeout(): void;
}

export interface Listener {
  port: number;
  stop(): Promise<void>;
}

export type Serve = (options: ServeOptions) => Listener;
