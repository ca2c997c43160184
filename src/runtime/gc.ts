/**
 * Each chunk a pipe or a socket delivers is a new buffer, freed only by a garbage collection, and the
 * collector's own pacing does not see them: at hundreds of MB/s of output tens of MB of read chunks piled up
 * before it ran (a 100 MB deploy took the server from 47 to about 120 MB). So output read from children,
 * bodies read from clients and the bytes the port relays (bun.ts) ask for a concurrent collection after every
 * COLLECT_EVERY_BYTES (the main thread does not wait for it) and a full one after every
 * FULL_COLLECT_EVERY_BYTES (1 to 5 ms each), which keeps the peak at 70 to 80 MB. The counts are the process's:
 * the garbage is. A chunk under SMALL_CHUNK_BYTES is not counted: it comes with JavaScript objects of its own (its
 * event, the request it carries) that pace the collector as it is, and counting a flood of small requests made
 * collections run for nothing (about a tenth of the relay's CPU time, bun.ts).
 */
const SMALL_CHUNK_BYTES = 1024;
const COLLECT_EVERY_BYTES = 1024 * 1024;
const FULL_COLLECT_EVERY_BYTES = 8 * 1024 * 1024;
let sinceCollect = 0;
let sinceFullCollect = 0;

export function collectGarbage(bytes: number): void {
  if (bytes < SMALL_CHUNK_BYTES || typeof Bun === "undefined") return;
  sinceCollect += bytes;
  sinceFullCollect += bytes;
  if (sinceFullCollect >= FULL_COLLECT_EVERY_BYTES) {
    sinceFullCollect = 0;
    sinceCollect = 0;
    Bun.gc(true);
  } else if (sinceCollect >= COLLECT_EVERY_BYTES) {
    sinceCollect = 0;
    Bun.gc(false);
  }
}

/** How long after the last deploy's end the server is taken to be idle, and how long its shrink is given. */
const IDLE_AFTER_MS = 5000;
const SHRINK_MS = 3000;
let idleTimer: ReturnType<typeof setTimeout> | undefined;

/**
 * Called as each deploy ends: once no deploy has ended for IDLE_AFTER_MS, the memory the deploys freed is given back
 * to the system. A collection alone leaves it with the allocators (200 deploys at once left 8 MB of anonymous memory
 * an idle server kept for good); a collection, the engine's shrink (done when it is next idle) and a second
 * collection once that is over give it back (docs/performance.md "Memory after load"). Nothing under Node.js; the
 * timers never hold a process that is otherwise done.
 */
export function releaseWhenIdle(): void {
  if (typeof Bun === "undefined") return;
  clearTimeout(idleTimer);
  idleTimer = setTimeout(() => {
    Bun.gc(true);
    Bun.shrink();
    idleTimer = setTimeout(() => Bun.gc(true), SHRINK_MS);
    idleTimer.unref?.();
  }, IDLE_AFTER_MS);
  idleTimer.unref?.();
}

/**
 * Once the server listens: the normal JIT policy (the binary starts with it reluctant, scripts/build.ts: code that
 * runs once at start stays in the interpreter, so its compiled code is not part of the idle memory), then the start's
 * garbage collected and given back to the system as after a burst of deploys (`releaseWhenIdle`), at once: 0.6 MB
 * of a server's idle memory. Nothing under Node.js.
 */
export function afterStart(): void {
  if (typeof Bun === "undefined") return;
  (Bun as { unsafe: { setJITPolicy?: (scale: number) => void } }).unsafe.setJITPolicy?.(1);
  Bun.gc(true);
  Bun.shrink();
  idleTimer = setTimeout(() => Bun.gc(true), SHRINK_MS);
  idleTimer.unref?.();
}
