/**
 * One build or teardown of a preview at a time across processes (docs/previews.md "Operating"): the server's lane
 * and a `service preview deploy` or `teardown` run beside it take `.service/previews/<app>/pr-<n>.lock`, naming the
 * holder's pid and start time; a holder that died leaves it to the next one.
 */
import { closeSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createExclusive, readJsonRecord, writeAll } from "../system/files.ts";
import { OWN_START, processAlive } from "../system/liveness.ts";
import { previewsDir } from "./state.ts";

const LOOK_MS = 100;

/** Runs `work` holding the preview's lock; waits while a live process holds it (until `stopped` says to give up). */
export async function withPreviewLock<T>(
  cwd: string,
  app: string,
  number: number,
  stopped: () => boolean,
  work: () => Promise<T>,
): Promise<T | undefined> {
  const dir = join(previewsDir(cwd), app);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `pr-${number}.lock`);
  for (;;) {
    if (take(file)) break;
    const holder = readJsonRecord<{ pid: number; start: string }>(file, (v) => typeof v.pid === "number");
    if (holder && !processAlive(holder.pid, holder.start)) rmSync(file, { force: true });
    else if (stopped()) return undefined;
    else await new Promise((resolve) => setTimeout(resolve, LOOK_MS));
  }
  try {
    return await work();
  } finally {
    rmSync(file, { force: true });
  }
}

function take(file: string): boolean {
  let fd: number;
  try {
    fd = createExclusive(file, 0o600);
  } catch {
    return false;
  }
  try {
    writeAll(fd, Buffer.from(JSON.stringify({ pid: process.pid, start: OWN_START })));
  } finally {
    closeSync(fd);
  }
  return true;
}
