/**
 * Deploys that start on a disk already full: a `.log` never takes the room a record needs, so their outcome
 * is kept; where not even a record fits, the history says the outcome is unknown, not that a file is corrupt.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lastLine, makeLocalRepo, post, readJson, runCli, SECRET, startServer } from "../_support/helpers.ts";
import { logDirOf } from "../_support/ops-helpers.ts";
import { canMount, mountTmpfs } from "../_support/tmpfs.ts";

const mountable = canMount();
if (!mountable)
  console.warn("full-disk tests skipped: mounting a tmpfs is not permitted here (they need root and mount)");

/** Prints 3 MB when the marker file `big` exists (once), else one line. */
const SCRIPT = "if [ -f big ]; then rm big; head -c 3000000 /dev/zero | tr '\\0' x; fi; echo small";

const listed = async (cwd: string) => JSON.parse((await runCli(["logs", "--json"], { cwd })).stdout) as any[];

describe('deploys that start on a full disk keep their outcome (docs/log-files.md "Reading the history: `service logs`")', () => {
  test.skipIf(!mountable)(
    "after a deploy's output filled the disk, the next deploys still get their records, and after a restart none is corrupt",
    async () => {
      const repo = makeLocalRepo();
      using logs = mountTmpfs(logDirOf(repo), "1m");
      const { dir } = logs;
      const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: SCRIPT };
      {
        await using server = await startServer(repo, env);
        writeFileSync(join(repo, "big"), "");
        for (let i = 0; i < 4; i++) {
          const text = await (await post(server.url, { secret: SECRET })).text();
          expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
        }
      }
      const records = readdirSync(dir).filter((name) => name.endsWith(".json"));
      expect(records).toHaveLength(4);
      for (const name of records) expect(readJson(join(dir, name))).toMatchObject({ status: "done" });
      await using _again = await startServer(repo, env);
      const entries = await listed(repo);
      expect(entries.map((entry) => [entry.status, entry.ok])).toEqual(Array(4).fill(["done", true]));
    },
    60_000,
  );

  test.skipIf(!mountable)(
    "a deploy with no room even for its record, after a stop: listed as outcome unknown (the disk was full), not corrupt",
    async () => {
      const repo = makeLocalRepo();
      using logs = mountTmpfs(logDirOf(repo), "256k");
      const { dir } = logs;
      const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo hello" };
      {
        await using server = await startServer(repo, env);
        // Something else filled the disk: nothing of the deploy's fits.
        Bun.spawnSync(["sh", "-c", `head -c 1000000 /dev/zero > ${join(dir, "filler")}`]);
        const text = await (await post(server.url, { secret: SECRET })).text();
        expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
      }
      const [entry] = await listed(repo);
      expect(entry).toMatchObject({ status: "unknown", problem: "outcome unknown (the disk was full)" });
      const table = await runCli(["logs"], { cwd: repo });
      expect(table.stdout).toContain("outcome unknown (the disk was full)");
      expect(table.stdout).not.toContain("corrupt");
    },
    60_000,
  );
});
