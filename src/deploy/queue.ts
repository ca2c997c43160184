import { realpathSync } from "node:fs";
import { resolve } from "node:path";

/** The queue key of a repository: its real path, so two spellings of one directory share a queue. */
export function queueKey(repoPath: string): string {
  try {
    return realpathSync(repoPath);
  } catch {
    return resolve(repoPath);
  }
}

interface Entry {
  start: () => void;
}

/**
 * One FIFO lane per repoPath: the first entry runs, the rest wait their turn. A lane disappears when it empties,
 * so the map holds only repositories with deploys in flight.
 */
export class DeployQueue {
  private readonly lanes = new Map<string, Entry[]>();

  /** How many deploys are running or waiting for this key. */
  size(key: string): number {
    return this.lanes.get(key)?.length ?? 0;
  }

  /**
   * Runs `task` when its turn comes. `onQueued(position)` is called at once when it has to wait (1 = next).
   */
  run<T>(key: string, task: () => Promise<T>, onQueued?: (position: number) => void): Promise<T> {
    let lane = this.lanes.get(key);
    if (!lane) this.lanes.set(key, (lane = []));
    const position = lane.length;
    return new Promise<T>((resolvePromise, reject) => {
      const entry: Entry = {
        start: () => {
          task()
            .then(resolvePromise, reject)
            .finally(() => this.next(key, entry));
        },
      };
      lane.push(entry);
      if (position === 0) entry.start();
      else onQueued?.(position);
    });
  }

  private next(key: string, done: Entry): void {
    const lane = this.lanes.get(key);
    if (!lane) return;
    const index = lane.indexOf(done);
    if (index >= 0) lane.splice(index, 1);
    if (lane.length === 0) this.lanes.delete(key);
    else lane[0]!.start();
  }
}
