/**
 * `service check`'s view of an app's previews (docs/previews.md): the refusals of the key against the rest of the
 * config (config/previews.ts), and what a pull request's code could reach: without `user` a warning, with it every
 * file of the service that user can read.
 */
import { resolve } from "node:path";
import { previewsProblems, type PreviewsKey } from "../config/previews.ts";
import { readableBy } from "./user.ts";

export const NO_USER_WARNING =
  "previews run as the service's user: a pull request's code can read this server's secrets; give previews only to authors who may already push";

interface CheckedApp {
  previews?: PreviewsKey;
  repoPath: string;
  releases?: { path: string };
  envFile?: string;
  ageIdentityFile?: string;
  status?: { tokenFile?: string };
  gate?: unknown;
}

/** The problems and warnings of one app's previews; `label` prefixes each (`app "web": `). */
export function previewsFindings(
  label: string,
  app: CheckedApp,
  service: { cwd: string; ports: number[] },
): { problems: string[]; warnings: string[] } {
  const previews = app.previews;
  if (!previews) return { problems: [], warnings: [] };
  const problems = previewsProblems(previews, app, service).map((p) => `${label}${p}`);
  const warnings: string[] = [];
  if (previews.gate && !app.gate)
    problems.push(`${label}previews: gate is true but the app has no gate (set gate.checks)`);
  if (!app.status)
    warnings.push(
      `${label}previews: without status (a forge and its token) only user: entries and GitHub's author association can pass authors, closed pull requests are found by ttlDays only, and refusals are told in the answer, the log, service previews and /metrics alone`,
    );
  if (!previews.user) warnings.push(`${label}${NO_USER_WARNING}`);
  else {
    const files = [resolve(service.cwd, ".service"), resolve(service.cwd, ".service.secret"), app.repoPath];
    for (const file of [app.envFile, app.ageIdentityFile, app.status?.tokenFile])
      if (file) files.push(resolve(service.cwd, file));
    const readable = readableBy(previews.user, files);
    if (readable === undefined)
      warnings.push(`${label}previews: cannot tell what user ${previews.user} can read (run check as root)`);
    else if (readable.length > 0)
      problems.push(`${label}previews: user ${previews.user} can read the service's files: ${readable.join(", ")}`);
  }
  return { problems, warnings };
}
