import { join } from "node:path";
import type { Repo } from "./repo.ts";

/** Commits the removal of the file `name` (and `changes`) in the fixture's pushing clone and pushes it; the new commit. */
export function pushWithout(
  repo: Repo,
  name: string,
  changes: Record<string, string> = {},
  message = `removes ${name}`,
): string {
  Bun.spawnSync(["git", "rm", "-q", name], { cwd: join(repo.dir, "pusher") });
  return repo.push(changes, message);
}
