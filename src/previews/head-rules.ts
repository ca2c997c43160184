/**
 * The app's rules that look at the fetched head (docs/previews.md "Trust"): `paths` against the diff from the merge
 * base with the pull request's base branch to the head, `allowedSigners` on the head. Each refusal says why.
 */
import { resolve } from "node:path";
import type { ResolvedApp } from "../config/apps.ts";
import { gitQuery } from "../system/git.ts";
import { matchingFiles } from "../triggers/paths.ts";
import { refusal, verifyCommit } from "../verify/signatures.ts";
import { baseRef } from "./checkout.ts";
import type { PullRequestEvent } from "./types.ts";

type Env = Record<string, string | undefined>;

/** Why the head may not be previewed by the app's rules, or undefined. */
export async function headRefusal(
  app: Pick<ResolvedApp, "repoPath" | "paths" | "allowedSigners">,
  event: Pick<PullRequestEvent, "number" | "head">,
  cwd: string,
  env: Env,
): Promise<{ reason: "paths" | "signature"; text: string } | undefined> {
  if (app.paths?.length) {
    const base = await gitQuery(
      app.repoPath,
      ["merge-base", "--end-of-options", baseRef(event.number), event.head],
      env,
    );
    if (base.code !== 0 || !/^[0-9a-f]{40,64}$/.test(base.stdout))
      return { reason: "paths", text: "no merge base with the pull request's base branch: paths cannot be matched" };
    const diff = await gitQuery(
      app.repoPath,
      ["diff", "--name-only", "-z", "--no-renames", base.stdout, event.head],
      env,
    );
    const files = diff.stdout.split("\0").filter(Boolean);
    if (diff.code !== 0 || matchingFiles(files, app.paths).length === 0)
      return { reason: "paths", text: `it touches no file of paths (${app.paths.join(", ")})` };
  }
  if (app.allowedSigners) {
    const verdict = await verifyCommit(app.repoPath, event.head, resolve(cwd, app.allowedSigners), env);
    if (!verdict.ok) return { reason: "signature", text: refusal(verdict) };
  }
  return undefined;
}
