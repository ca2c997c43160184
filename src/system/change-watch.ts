import { type FSWatcher, watch } from "node:fs";

/**
 * How old a look at watched files may get before the next question looks again, whatever the watches said: it
 * covers what a watch cannot see (a file behind a symbolic link elsewhere, a file system without notifications,
 * the watch limit reached) and the moment between a write and its event.
 */
export const LOOK_AGAIN_MS = 250;

/**
 * Says when files in some directories must be looked at again (a stat, a read), so that a question asked on every
 * request costs no system call: a watch on each directory (inotify) marks a change as it happens, and the answer
 * is yes at least every `maxAgeMs`. Whoever must not act on a stale view (an authorized deploy) looks anyway.
 */
export class ChangeWatch {
  private changed = true;
  private lookedAt = 0;
  /** The watch of each directory; undefined while it cannot be watched (missing, no notifications). */
  private readonly watchers = new Map<string, FSWatcher | undefined>();

  constructor(private readonly maxAgeMs = LOOK_AGAIN_MS) {}

  /** Watches `dir` too; a directory that cannot be watched now is tried again at each look. */
  watch(dir: string): void {
    if (this.watchers.get(dir)) return;
    let watcher: FSWatcher | undefined;
    try {
      // Not persistent: a watch never keeps the process alive.
      watcher = watch(dir, { persistent: false }, this.mark);
      watcher.on("error", () => {
        watcher?.close();
        this.watchers.set(dir, undefined);
        this.changed = true;
      });
    } catch {}
    this.watchers.set(dir, watcher);
  }

  private readonly mark = () => {
    this.changed = true;
  };

  /** True when it is time to look again (and the look is counted from now): a change was seen, or the last look is old. */
  due(): boolean {
    const now = performance.now();
    if (!this.changed && now - this.lookedAt < this.maxAgeMs) return false;
    this.changed = false;
    this.lookedAt = now;
    for (const [dir, watcher] of this.watchers) if (!watcher) this.watch(dir);
    return true;
  }

  close(): void {
    for (const watcher of this.watchers.values()) watcher?.close();
    this.watchers.clear();
  }
}
