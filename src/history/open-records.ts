/**
 * This process's records still being written: the deploys whose log is open (retention never removes their files,
 * `service status` knows them running), and the final records that did not fit for want of room, held in memory
 * (a bounded few) and written at the next chance.
 */

/** This process's deploys whose log is still open, by .json path, with their start time in ms. */
const active = new Map<string, number>();
/** Final records this process could not write for want of room, written at the next chance (a bounded few). */
const pending = new Map<string, { startedAt: number; retry: () => boolean }>();
const MAX_PENDING = 100;

/** Whether `jsonPath` belongs to a deploy this process is running now: retention never removes its files. */
export function isActiveHere(jsonPath: string): boolean {
  return active.has(jsonPath);
}

/** The start time (ms) of a deploy of this process whose record may not be on disk (running, or pending). */
export function startKnownHere(jsonPath: string): number | undefined {
  return active.get(jsonPath) ?? pending.get(jsonPath)?.startedAt;
}

/** Tries again to write the final records that did not fit; called when room may have come back. */
export function retryPendingRecords(): void {
  for (const [jsonPath, entry] of pending) if (entry.retry()) pending.delete(jsonPath);
}

/** Drops the pending record of a deploy whose files retention removed. */
export function forgetPendingRecord(jsonPath: string): void {
  pending.delete(jsonPath);
}

/** A deploy's log is open (its start time in ms); a final record held back may fit now. */
export function markOpen(jsonPath: string, startedAt: number): void {
  active.set(jsonPath, startedAt);
  retryPendingRecords();
}

export function markClosed(jsonPath: string): void {
  active.delete(jsonPath);
}

/** A final record that did not fit: `retry` writes it (true once done); the newest MAX_PENDING are kept. */
export function holdPending(jsonPath: string, startedAt: number, retry: () => boolean): void {
  if (pending.size >= MAX_PENDING) pending.delete(pending.keys().next().value!);
  pending.set(jsonPath, { startedAt, retry });
}
