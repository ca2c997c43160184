import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { git, type Repo } from "./repo.ts";

/**
 * Rewrites the remote's main as a force-push does: the pushing clone goes back to `onto` (default: the parent of
 * its HEAD), commits `files` there and pushes with --force. Returns the new tip.
 */
export function forcePush(repo: Repo, files: Record<string, string>, onto = "HEAD~1", message = "rewritten"): string {
  const pusher = join(repo.dir, "pusher");
  git(pusher, "reset", "--quiet", "--hard", onto);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(pusher, name)), { recursive: true });
    writeFileSync(join(pusher, name), content);
  }
  git(pusher, "add", "-A");
  git(pusher, "commit", "--quiet", "--allow-empty", "-m", message);
  git(pusher, "push", "--quiet", "--force", "origin", "main");
  return git(pusher, "rev-parse", "HEAD");
}

/** Pushes a commit of `files` on top of main to `ref` only (a pull request's head), leaving main as it is. */
export function pushToRef(repo: Repo, ref: string, files: Record<string, string>): string {
  const pusher = join(repo.dir, "pusher");
  const main = git(pusher, "rev-parse", "HEAD");
  for (const [name, content] of Object.entries(files)) writeFileSync(join(pusher, name), content);
  git(pusher, "add", "-A");
  git(pusher, "commit", "--quiet", "-m", `to ${ref}`);
  const made = git(pusher, "rev-parse", "HEAD");
  git(pusher, "push", "--quiet", "origin", `HEAD:${ref}`);
  git(pusher, "reset", "--quiet", "--hard", main);
  return made;
}
