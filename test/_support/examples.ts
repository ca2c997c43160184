/**
 * The scenarios of docs/examples/, run as written: each example's service.yaml with its paths (`/srv/…`) and
 * endpoints replaced by the test's, its scripts committed to the repository as its README says, and stubs on PATH
 * for what a test machine lacks or must not touch (`systemctl`, `docker`), recording their arguments.
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { git, ROOT, type Repo, tempDir } from "./helpers.ts";

export const EXAMPLES = join(ROOT, "docs", "examples");

/** An example's file as text, each `[from, to]` replaced in one pass (the first that matches at a place wins). */
export function exampleText(path: string, replace: [string, string][] = []): string {
  const text = readFileSync(join(EXAMPLES, path), "utf8");
  for (const [from] of replace)
    if (!text.includes(from)) throw new Error(`${path} has no ${from}: the example and its test drifted apart`);
  if (replace.length === 0) return text;
  const pattern = new RegExp(replace.map(([from]) => from.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")).join("|"), "g");
  return text.replace(pattern, (found) => replace.find(([from]) => from === found)![1]);
}

/** Writes an example's service.yaml (`path` inside docs/examples) into `cwd`, replaced as `exampleText` does. */
export function installConfig(path: string, cwd: string, replace: [string, string][] = []): void {
  mkdirSync(cwd, { recursive: true });
  writeFileSync(join(cwd, "service.yaml"), exampleText(path, replace));
}

/** The example's `scripts/` as files of a commit: `{ "scripts/deploy.sh": … }`. */
export function exampleScripts(example: string): Record<string, string> {
  const dir = join(EXAMPLES, example, "scripts");
  return Object.fromEntries(readdirSync(dir).map((name) => [`scripts/${name}`, readFileSync(join(dir, name), "utf8")]));
}

/** Stubs of `names` in a directory to put first on PATH: each appends `<name> <args>` to `log`. */
export function stubs(names: string[]) {
  const dir = tempDir("service-stubs-");
  const log = join(dir, "calls.log");
  writeFileSync(log, "");
  for (const name of names) {
    const file = join(dir, name);
    writeFileSync(file, `#!/bin/sh\nprintf '%s\\n' "${name} $*" >> '${log}'\n`);
    chmodSync(file, 0o755);
  }
  return {
    PATH: `${dir}:${process.env.PATH}`,
    calls: () => readFileSync(log, "utf8").split("\n").filter(Boolean),
  };
}

/** Tags the pushing clone's HEAD (after `repo.push`) with `tag` and pushes the tag. */
export function pushTag(repo: Repo, tag: string): void {
  const pusher = join(repo.dir, "pusher");
  git(pusher, "tag", tag);
  git(pusher, "push", "--quiet", "origin", tag);
}
