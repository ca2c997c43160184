/** Switching `current` to a release (docs/releases.md): one rename of a new link over it, synced to disk. */
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, renameSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import type { ReleaseLayout } from "./files.ts";

/**
 * Points `current` at the release in one rename(2) of a new link over it: a reader finds the old release or the
 * new one, never none and never a half-built one. Throws.
 */
export function switchCurrent(layout: ReleaseLayout, id: string): void {
  const temp = join(layout.root, `current.${process.pid}.${randomBytes(8).toString("hex")}.tmp`);
  symlinkSync(join("releases", id), temp);
  try {
    renameSync(temp, layout.current);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  syncDir(layout.root);
}

/** The rename on disk before the deploy goes on (a power cut must not bring back the old link unannounced). */
function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {}
}
