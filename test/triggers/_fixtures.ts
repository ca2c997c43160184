/** The monorepo of the paths and skip-marker tests: a bare remote, its clone, and a pusher that can revert. */
import { join } from "node:path";
import { git, makeTempDir, post, SECRET, type Repo } from "../_support/helpers.ts";

export const MONOREPO = {
  "apps/web/index.ts": "web 1\n",
  "apps/api/index.ts": "api 1\n",
  "packages/ui/button.ts": "ui 1\n",
  "README.md": "monorepo\n",
};

export const pusherOf = (repo: Repo) => join(repo.dir, "pusher");

/** Pushes a `git revert` of the pusher's HEAD; returns the new tip. */
export function pushRevert(repo: Repo): string {
  const pusher = pusherOf(repo);
  git(pusher, "revert", "--no-edit", "HEAD");
  git(pusher, "push", "--quiet", "origin", "main");
  return git(pusher, "rev-parse", "HEAD");
}

/** A directory for the service (its config, `.service/`), apart from the repository it deploys. */
export const serviceDir = () => makeTempDir("service-triggers-");

/** POSTs to `url` with SECRET and `?format=json`; the JSON answer (a skip, or the deploy's result). */
export async function hookJson(url: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const response = await post(`${url}/?format=json`, {
    secret: SECRET,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { "content-type": "application/json", ...headers } }),
  });
  if (response.status !== 200) throw new Error(`answered ${response.status}: ${await response.text()}`);
  return response.json();
}
