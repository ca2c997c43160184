/**
 * A deploy that changed what is live records how long its commits waited (docs/log-files.md "DORA figures"): the
 * committer dates of the commits between the commit live before and the new one, against the deploy's end. They are
 * read after the `[done]` line, so a record gets its lead a moment after the answer ended: these tests wait for the
 * record's field, and look for a lead that must not be there once a later deploy of the queue has started.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  baseEnv,
  git,
  lastLine,
  makeRepo,
  post,
  type Repo,
  runCli,
  SECRET,
  startServer,
  tempDir,
  waitFor,
} from "../_support/helpers.ts";
import { deployStreamed, makeReleasesSite, recordOf } from "../_support/release-helpers.ts";

const DAY = 86_400;

/** Commits (empty) in the pushing clone with these committer dates (seconds since the epoch), then pushes. */
function pushDated(repo: Repo, dates: number[]): string {
  const pusher = join(repo.dir, "pusher");
  for (const [i, date] of dates.entries()) {
    const env = baseEnv({ GIT_COMMITTER_DATE: `@${date} +0000`, GIT_AUTHOR_DATE: `@${date} +0000` });
    const made = Bun.spawnSync(["git", "commit", "--quiet", "--allow-empty", "-m", `dated ${i}`], {
      cwd: pusher,
      env,
    });
    if (made.exitCode !== 0) throw new Error(made.stderr.toString());
  }
  git(pusher, "push", "--quiet", "origin", "main");
  return git(pusher, "rev-parse", "HEAD");
}

/** Pushes `count` commits at once (git fast-import), committed at `date`. */
function pushMany(repo: Repo, count: number, date: number): void {
  const pusher = join(repo.dir, "pusher");
  const parent = git(pusher, "rev-parse", "HEAD");
  let stream = "";
  for (let i = 0; i < count; i++) {
    const message = `bulk ${i}`;
    stream += `commit refs/heads/main\ncommitter T <t@example.com> ${date} +0000\ndata ${message.length}\n${message}\n`;
    stream += i === 0 ? `from ${parent}\n\n` : "\n";
  }
  const imported = Bun.spawnSync(["git", "fast-import", "--quiet", "--force"], {
    cwd: pusher,
    env: baseEnv(),
    stdin: new TextEncoder().encode(stream),
  });
  if (imported.exitCode !== 0) throw new Error(imported.stderr.toString());
  git(pusher, "reset", "--quiet", "--hard", "main");
  git(pusher, "push", "--quiet", "origin", "main");
}

/** What the lead of commits dated `dates` is at a record's end. */
function expectedLead(record: { finishedAt: string }, dates: number[]) {
  const end = Math.round(Date.parse(record.finishedAt) / 1000);
  const waits = dates.map((d) => end - d).sort((a, b) => a - b);
  const middle = Math.floor(waits.length / 2);
  const median = waits.length % 2 ? waits[middle]! : Math.round((waits[middle - 1]! + waits[middle]!) / 2);
  return { commits: waits.length, medianSeconds: median, oldestSeconds: waits[waits.length - 1] };
}

/** The record's lead, once the deploy (its transcript `text`) has it in its record. */
function leadOnceRecorded(cwd: string, text: string) {
  return waitFor(() => recordOf(cwd, text).result.lead, "the lead in the record");
}

describe('lead time in the record (docs/log-files.md "DORA figures")', () => {
  test("a deploy that changed what is live records its commits' lead from their committer dates; one that changed nothing, failed or rolled back records none", async () => {
    const repo = makeRepo();
    const now = Math.floor(Date.now() / 1000);
    const env = {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "sh -c 'test ! -e fail'",
      SERVICE_ROLLBACK_ON_FAILURE: "true",
    };
    await using server = await startServer(repo.clone, env);
    const first = await deployStreamed(server.url, repo.clone);
    expect(first.result.ok).toBe(true);

    const dates = [now - 10 * DAY, now - 5 * DAY, now - 2 * DAY];
    pushDated(repo, dates);
    const second = await deployStreamed(server.url, repo.clone);
    expect(lastLine(second.text)).toBe("[done] ok=true exitCode=0");
    const lead = await leadOnceRecorded(repo.clone, second.text);
    expect(lead).toEqual(expectedLead(recordOf(repo.clone, second.text).result, dates));
    expect(lead.medianSeconds).toBeGreaterThanOrEqual(5 * DAY);
    // The first deploy's queue turn was over when the second started: its record is final, without a lead.
    expect(recordOf(repo.clone, first.text).result.lead).toBeUndefined();

    // Nothing new: nothing changed what is live.
    const again = await deployStreamed(server.url, repo.clone);

    // A failed deploy rolled back: the live commit did not change.
    repo.push({ fail: "1" }, "breaks");
    const failed = await deployStreamed(server.url, repo.clone);
    expect(failed.result.rolledBack).toBe(true);
    expect(recordOf(repo.clone, again.text).result.lead).toBeUndefined();

    // A rollback to an older commit: no commit of its own went live (the CLI exits once its record is final).
    const back = await runCli(["rollback", second.result.log.id], { cwd: repo.clone, env });
    expect(lastLine(back.stdout)).toBe("[done] ok=true exitCode=0");
    expect(recordOf(repo.clone, failed.text).result.lead).toBeUndefined();
    expect(recordOf(repo.clone, back.stdout).result.lead).toBeUndefined();
  });

  test("the lead is read after the `[done]` line: the answer ends without waiting for its git call, and the record gets it then", async () => {
    const repo = makeRepo();
    // A git that holds `git log --format=%ct` (the lead's one call) until the file `open` exists (30 s at most).
    const bin = tempDir("service-git-");
    const open = join(bin, "open");
    const realGit = Bun.which("git")!;
    writeFileSync(
      join(bin, "git"),
      `#!/bin/sh\ncase "$*" in *--format=%ct*) i=0; while [ ! -e '${open}' ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done;; esac\nexec '${realGit}' "$@"\n`,
    );
    chmodSync(join(bin, "git"), 0o755);
    const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "true", PATH: `${bin}:${process.env.PATH}` };
    await using server = await startServer(repo.clone, env);
    await deployStreamed(server.url, repo.clone);
    const dates = [Math.floor(Date.now() / 1000) - DAY];
    pushDated(repo, dates);
    const text = await (await post(server.url, { secret: SECRET })).text();
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
    // The answer has ended while the lead's git call is still held: the record is final but for its lead.
    const record = recordOf(repo.clone, text);
    expect(record.status).toBe("done");
    expect(record.result.lead).toBeUndefined();
    writeFileSync(open, "");
    expect(await leadOnceRecorded(repo.clone, text)).toEqual(expectedLead(record.result, dates));
  });

  test("at most 1000 commits are read: a deploy of a long history says the newest 1000", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "true" });
    await deployStreamed(server.url, repo.clone);
    const now = Math.floor(Date.now() / 1000);
    pushMany(repo, 1001, now - DAY);
    const deploy = await deployStreamed(server.url, repo.clone);
    expect(deploy.result.ok).toBe(true);
    const lead = await leadOnceRecorded(repo.clone, deploy.text);
    expect(lead.commits).toBe(1000);
    expect(lead).toEqual(expectedLead(deploy.result, new Array(1000).fill(now - DAY)));
  });

  test("with releases, the deploy that switched to a new release records the lead of its commits", async () => {
    const s = makeReleasesSite();
    await using server = await startServer(s.cwd, s.env);
    const first = await deployStreamed(server.url, s.cwd);
    expect(first.result.ok).toBe(true);
    const now = Math.floor(Date.now() / 1000);
    const dates = [now - 3 * 3600, now - 3600];
    pushDated(s.repo, dates);
    const second = await deployStreamed(server.url, s.cwd);
    expect(second.result.release.live).toBe(true);
    expect(await leadOnceRecorded(s.cwd, second.text)).toEqual(expectedLead(second.result, dates));
  });
});
