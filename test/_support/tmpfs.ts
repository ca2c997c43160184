/** A small tmpfs for the full-disk tests: needs root and `mount`; the tests skip themselves where it is not permitted. */
import { mkdirSync, rmSync } from "node:fs";
import { makeTempDir } from "./repo.ts";

/** Whether this process may mount a tmpfs (root, not in a restricted container). */
export function canMount(): boolean {
  const dir = makeTempDir("service-mount-probe-");
  try {
    if (Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir], { stderr: "pipe" }).exitCode !== 0)
      return false;
    Bun.spawnSync(["umount", dir]);
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `using fs = mountTmpfs(dir, size)`: a tmpfs of `size` (e.g. "1m") mounted at `dir`, unmounted when the block ends. */
export function mountTmpfs(dir: string, size: string): { dir: string } & Disposable {
  mkdirSync(dir, { recursive: true });
  const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stderr: "pipe" });
  if (mounted.exitCode !== 0) throw new Error(`mount failed: ${mounted.stderr.toString()}`);
  return { dir, [Symbol.dispose]: () => void Bun.spawnSync(["umount", "-l", dir]) };
}
