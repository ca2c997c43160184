/** The watch's part of a deploy's record (docs/watch.md): how it ended, and how it goes while it runs. */

/** The watch after the health check (docs/watch.md): how it ended and what it saw last. */
export interface WatchResult {
  /** The Prometheus query as sent (placeholders filled in), or the command. */
  query?: string;
  command?: string;
  /** The last value read (a command's exit code); null when the last check gave none. */
  value: number | null;
  /** The bound the value was held to (`max`, else `min`; 0 for a command). */
  threshold: number | null;
  /** Milliseconds into the watch when it ended. */
  at: number;
  /** Checks made. */
  checks: number;
  /** Failed checks in a row made a breach. */
  breach?: true;
  /** Why the last failed check failed, when it had no value (Prometheus down, no sample). */
  reason?: string;
  /** `service cancel` ended it: what was live stayed. */
  cancelled?: true;
  /** A stop of the service ended it: what was live stayed, the watch not finished. */
  interrupted?: true;
}

/** A running watch as its running record keeps it (`service status`, `/api/apps` add the deploy and the time so far). */
export interface WatchProgress {
  startedAt: string;
  forMs: number;
  /** The commit watched, and the one live before it. */
  commit: string | null;
  previousCommit: string | null;
  /** The query as sent, or the command, and the bound the value is held to (as the record's `watch` says them). */
  query?: string;
  command?: string;
  threshold: number | null;
  checks: number;
  /** Failed checks in a row now. */
  failures: number;
  lastValue: number | null;
}
