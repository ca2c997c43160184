/**
 * A full disk under `.service/logs` (a small tmpfs): every client still gets its whole stream and `[done]`, the
 * stream says once why the log files are incomplete, records end finished (or are repaired once there is room),
 * finished deploys stay prunable, no temp file is left, `logs --follow` ends, and a restart marks nothing
 * "interrupted" that ended. Needs `mount` (CI runs as root); skipped with a message where it is not permitted.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { logStem } from "../../src/history/record.ts";
import { lastLine, makeLocalRepo, post, readJson, runCli, SECRET, startServer, waitFor } from "../_support/helpers.ts";
import { logDirOf, stems } from "../_support/ops-helpers.ts";
import { canMount, mountTmpfs } from "../_support/tmpfs.ts";

const mountable = canMount();
if (!mountable)
  console.warn("full-disk tests skipped: mounting a tmpfs is not permitted here (they need root and mount)");

/** `using logs = smallLogDir(repo, size)`: a tmpfs of `size` as `<repo>/.service/logs` (`logs.dir`), unmounted when the block ends. */
const smallLogDir = (repo: string, size: string) => mountTmpfs(logDirOf(repo), size);

const BIG = 3_000_000;
/** One line through the shell: prints BIG bytes of x when the marker file `big` exists (once), else nothing. */
const SCRIPT = `if [ -f big ]; then rm big; head -c ${BIG} /dev/zero | tr '\\0' x; fi; echo small`;
const xs = (text: string) =>
  (text.match(/x+/g) ?? []).reduce((sum, run) => sum + (run.length >= 20 ? run.length : 0), 0);
const records = (dir: string) =>
  readdirSync(dir)
    .filter((n) => n.endsWith(".json"))
    .map((n) => readJson(join(dir, n)));
const temps = (dir: string) =>
  readdirSync(dir).filter((n) => !/^\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}Z_[0-9a-f-]{36}\.(json|log)$/.test(n));

describe("full disk", () => {
  test.skipIf(!mountable)(
    "a full disk: every client gets its whole stream and [done]; records end finished, the full deploy's files are pruned, no temp files, --follow ends, a restart marks nothing interrupted",
    async () => {
      const repo = makeLocalRepo();
      using logs = smallLogDir(repo, "1m");
      const { dir } = logs;
      const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: SCRIPT, SERVICE_KEEP_DEPLOYS: "1" };
      await using server = await startServer(repo, env);
      writeFileSync(join(repo, "big"), "");
      const first = await (await post(server.url, { secret: SECRET })).text();
      expect(lastLine(first)).toBe("[done] ok=true exitCode=0");
      expect(xs(first)).toBe(BIG);
      // Said once, with the reason.
      const notices = first.split("\n").filter((line) => line.startsWith("[log] "));
      expect(notices).toHaveLength(1);
      expect(notices[0]).toMatch(/no space left on device/i);
      // The record ended finished although its output could not be kept.
      const [record] = records(dir);
      expect(record.status).toBe("done");
      expect(record.result.ok).toBe(true);
      expect(record.result.run.exitCode).toBe(0);
      const follow = await runCli(["logs", "last", "--follow"], { cwd: repo, timeoutMs: 15_000 });
      expect(follow.code).toBe(0);

      const firstId = record.id as string;
      for (let i = 0; i < 5; i++) {
        const text = await (await post(server.url, { secret: SECRET })).text();
        expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
      }
      // keepDeploys 1: the full deploy's files are gone, the newest deploy has both files, all finished (retention
      // runs right after the `[done]` line, which never waits for it).
      await waitFor(() => stems(repo).length === 1, "retention after the last deploy");
      expect(stems(repo)[0]).not.toContain(firstId);
      expect(readdirSync(dir)).toHaveLength(2);
      expect(records(dir).map((r) => r.status)).toEqual(["done"]);
      expect(temps(dir)).toEqual([]);

      await server.stop();
      await using restarted = await startServer(repo, env);
      expect(restarted.stdout.text + restarted.stderr.text).not.toContain("interrupted");
      expect(records(dir).map((r) => r.status)).toEqual(["done"]);
    },
    60_000,
  );

  test.skipIf(!mountable)(
    "a deploy whose record cannot be written at all keeps it in memory and writes it at the next deploy's start once there is room",
    async () => {
      const repo = makeLocalRepo();
      using logs = smallLogDir(repo, "256k");
      const { dir } = logs;
      const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo hello" };
      await using server = await startServer(repo, env);
      // Something else filled the disk: nothing of the deploy's fits, and retention has nothing to remove.
      const filler = join(dir, "filler");
      Bun.spawnSync(["sh", "-c", `head -c 1000000 /dev/zero > ${filler}`]);
      const first = await (await post(server.url, { secret: SECRET })).text();
      expect(lastLine(first)).toBe("[done] ok=true exitCode=0");
      expect(first).toContain("hello");
      expect(first.split("\n").filter((line) => line.startsWith("[log] "))).toHaveLength(1);
      // Retention, right after the [done] line, tries the record again: its temp file goes when the write fails.
      await waitFor(() => temps(dir).join() === "filler", "no temp file but the filler");
      // --follow does not wait for a record that is not there: it ends, saying so (however slow the machine).
      const follow = await runCli(["logs", "last", "--follow"], { cwd: repo });
      expect(follow.stderr).toContain("cannot tell whether deploy");
      expect(follow.code).toBe(1);

      rmSync(filler);
      const second = await (await post(server.url, { secret: SECRET })).text();
      expect(lastLine(second)).toBe("[done] ok=true exitCode=0");
      expect(second).not.toContain("[log] ");
      await waitFor(() => temps(dir).length === 0, "no temp file left");
      const statuses = records(dir).map((r) => [r.status, r.result?.ok]);
      expect(statuses).toEqual([
        ["done", true],
        ["done", true],
      ]);
    },
    60_000,
  );

  test("a record left running by a service that stopped after the deploy ended: the next start takes the outcome from the .log's [done] line instead of marking it interrupted", async () => {
    const repo = makeLocalRepo();
    const dir = logDirOf(repo);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const gone = Bun.spawnSync(["true"]).pid;
    const ended = { id: crypto.randomUUID(), done: "[done] ok=false exitCode=3" };
    const cut = { id: crypto.randomUUID(), done: "" };
    for (const [index, deploy] of [ended, cut].entries()) {
      const startedAt = new Date(Date.now() - 3_600_000 + index * 1000);
      const stem = logStem(startedAt, deploy.id);
      const record = {
        status: "running",
        id: deploy.id,
        trigger: "webhook",
        repoPath: repo,
        runScript: "false",
        startedAt: startedAt.toISOString(),
        pid: gone,
        pidStart: "1",
      };
      writeFileSync(join(dir, `${stem}.json`), JSON.stringify(record));
      writeFileSync(
        join(dir, `${stem}.log`),
        `[deploy] ${deploy.id} started ${startedAt.toISOString()} (webhook) in ${repo}\n[run] $ false\n${deploy.done && `${deploy.done}\n`}`,
      );
    }
    // Before any repair, --follow ends on both: cleanly on the one that ended, with an error on the other.
    expect((await runCli(["logs", ended.id, "--follow"], { cwd: repo, timeoutMs: 15_000 })).code).toBe(0);
    expect((await runCli(["logs", cut.id, "--follow"], { cwd: repo, timeoutMs: 15_000 })).code).toBe(1);
    await using server = await startServer(repo, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "true" });
    const said = server.stdout.text + server.stderr.text;
    expect(said).not.toContain(`deploy ${ended.id} was interrupted`);
    expect(said).toContain(`deploy ${cut.id} was interrupted`);
    await server.stop();
    const listed = JSON.parse((await runCli(["logs", "--json"], { cwd: repo })).stdout);
    const byId = new Map(listed.map((entry: any) => [entry.id, entry]));
    expect(byId.get(ended.id)).toMatchObject({ status: "done", ok: false, exitCode: 3 });
    expect(byId.get(cut.id)).toMatchObject({ status: "interrupted" });
  });
});
