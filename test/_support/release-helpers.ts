/** Fixtures of the releases tests (docs/releases.md): a repository, a releases directory, counters outside both. */
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { basename, join } from "node:path";
import { logFiles, makeRepo, post, readJson, type Repo, SECRET, tempDir } from "./helpers.ts";

export interface ReleasesSite {
  repo: Repo;
  /** The service's working directory (its logs), apart from the clone. */
  cwd: string;
  /** releases.path */
  site: string;
  /** A file each build appends `<release id> <pwd>` to. */
  builds: string;
  /** A file each activation appends `<release id> <pwd>` to. */
  activations: string;
  /** The service's environment: the releases settings, the run and activate scripts that count. */
  env: Record<string, string>;
}

/** A repository with `files`, an empty releases directory, and scripts that record each build and activation. */
export function makeReleasesSite(
  files: Record<string, string> = { "public/index.html": "v1\n" },
  env: Record<string, string> = {},
): ReleasesSite {
  const repo = makeRepo(files);
  const dir = tempDir("service-releases-");
  const cwd = join(dir, "service");
  const site = join(dir, "site");
  mkdirSync(cwd);
  mkdirSync(site);
  const builds = join(dir, "builds");
  const activations = join(dir, "activations");
  return {
    repo,
    cwd,
    site,
    builds,
    activations,
    env: {
      SERVICE_SECRET: SECRET,
      SERVICE_REPO_PATH: repo.clone,
      SERVICE_RELEASES_PATH: site,
      SERVICE_RUN_SCRIPT: `sh -c 'echo "$SERVICE_RELEASE_ID $PWD" >> ${builds}'`,
      SERVICE_ACTIVATE_SCRIPT: `sh -c 'echo "$SERVICE_RELEASE_ID $PWD" >> ${activations}'`,
      ...env,
    },
  };
}

/** The release `<site>/current` names, or null. */
export function currentRelease(site: string): string | null {
  try {
    return basename(readlinkSync(join(site, "current")));
  } catch {
    return null;
  }
}

/** The release directories in `<site>/releases`, oldest first (two made in one second sort by their records). */
export function releaseDirs(site: string): string[] {
  const dir = join(site, "releases");
  const created = (id: string) => {
    try {
      return String(readJson(join(dir, `${id}.json`)).createdAt);
    } catch {
      return "";
    }
  };
  return existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort((a, b) => created(a).localeCompare(created(b)) || a.localeCompare(b))
    : [];
}

/** The lines of a counter file (builds, activations): the release ids, in order. */
export function counted(file: string): string[] {
  return existsSync(file)
    ? readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split(" ")[0]!)
    : [];
}

/** A streamed deploy: its text and its JSON record's result. */
export async function deployStreamed(url: string, cwd: string): Promise<{ text: string; result: any }> {
  const text = await (await post(url, { secret: SECRET })).text();
  return { text, result: recordOf(cwd, text).result };
}

/** The JSON record of the deploy a transcript is of (its `[deploy] <id> started` line). */
export function recordOf(cwd: string, text: string): any {
  const id = /\[deploy\] ([0-9a-f-]{36}) started/.exec(text)?.[1];
  const file = logFiles(cwd).find((name) => id && name.endsWith(`${id}.json`));
  if (!file) throw new Error(`no record of the deploy in:\n${text}`);
  return readJson(join(cwd, ".service", "logs", file));
}
