/**
 * An app's history for the DORA figures: real deploys through the CLI of commits with chosen committer dates (an ok
 * one with a lead, a failed one, the ok one that restores it), and handmade records written beside them.
 */
import { expect } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { logStem } from "../../src/history/record.ts";
import { baseEnv, git, makeRepo, type Repo, runCli, tempDir } from "./helpers.ts";
import { writeServiceYaml } from "./webhook-fixtures.ts";

const DAY = 86_400;

/** Commits `files` in the pushing clone, committed at `date` (seconds since the epoch), and pushes. */
export function pushAt(repo: Repo, files: Record<string, string>, date: number): string {
  const pusher = join(repo.dir, "pusher");
  for (const [name, content] of Object.entries(files)) writeFileSync(join(pusher, name), content);
  git(pusher, "add", "-A");
  const env = baseEnv({ GIT_COMMITTER_DATE: `@${date} +0000` });
  const made = Bun.spawnSync(["git", "commit", "--quiet", "--allow-empty", "-m", "dated"], { cwd: pusher, env });
  if (made.exitCode !== 0) throw new Error(made.stderr.toString());
  git(pusher, "push", "--quiet", "origin", "main");
  return git(pusher, "rev-parse", "HEAD");
}

/**
 * App `web`: a first deploy (nothing new: not counted), then a commit of two days ago deployed ok (its lead about two
 * days), a broken one that fails, and the fix that restores it (committed an hour ago). Counted 3, failed 1.
 */
export async function doraHistory(): Promise<{ cwd: string; repo: Repo }> {
  const repo = makeRepo({ "build.sh": "exit 0\n" });
  const cwd = tempDir("service-dora-");
  writeServiceYaml(cwd, {
    apps: [{ name: "web", host: "web.example.com", path: "/hook", repoPath: repo.clone, runScript: "sh build.sh" }],
  });
  const deploy = async (code: number) => expect((await runCli(["deploy", "--app", "web"], { cwd })).code).toBe(code);
  const now = Math.floor(Date.now() / 1000);
  await deploy(0);
  pushAt(repo, { "a.txt": "a\n" }, now - 2 * DAY);
  await deploy(0);
  pushAt(repo, { "build.sh": "exit 1\n" }, now - DAY);
  await deploy(1);
  pushAt(repo, { "build.sh": "exit 0\n" }, now - 3600);
  await deploy(0);
  return { cwd, repo };
}

/** Handmade records of ok deploys of `app` with a lead of `leadSeconds`, an hour apart from `hoursAgo` back. */
export function addOkRecords(cwd: string, app: string, count: number, leadSeconds: number, hoursAgo = 100): void {
  const dir = join(cwd, ".service", "logs");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (let i = 0; i < count; i++) {
    const start = new Date(Date.now() - (hoursAgo - i) * 3_600_000);
    const id = crypto.randomUUID();
    const record = {
      status: "done",
      id,
      app,
      trigger: "webhook",
      startedAt: start.toISOString(),
      finishedAt: new Date(start.getTime() + 1000).toISOString(),
      result: {
        ok: true,
        rolledBack: false,
        run: { exitCode: 0 },
        commit: { sha: `${i + 1}`.padStart(40, "a") },
        previousCommit: { sha: `${i}`.padStart(40, "a") },
        lead: { commits: 1, medianSeconds: leadSeconds, oldestSeconds: leadSeconds },
      },
    };
    const stem = logStem(start, id);
    writeFileSync(join(dir, `${stem}.json`), `${JSON.stringify(record)}\n`, { mode: 0o600 });
    writeFileSync(join(dir, `${stem}.log`), "", { mode: 0o600 });
  }
}
