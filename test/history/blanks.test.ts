/**
 * Blank files (history/blanks.ts): the server makes a deploy's record and `.log` ahead of need, after the deploy
 * before it, so the way to a deploy's first line makes no new file. A blank never replaces a file, and the blanks of
 * a process that is gone do not stay.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeBlanks, openBlank } from "../../src/history/blanks.ts";
import {
  lastLine,
  logFiles,
  makeRepo,
  post,
  runCli,
  SECRET,
  startServer,
  tempDir,
  waitFor,
} from "../_support/helpers.ts";

const blanksOf = (cwd: string) => {
  const dir = join(cwd, ".service", "blanks");
  return existsSync(dir) ? readdirSync(dir).map((name) => join(dir, name)) : [];
};
const inodes = (files: string[]) => files.map((file) => statSync(file).ino);

describe("blank files for a deploy's log files", () => {
  test("the server's deploy gets its record and .log from the blanks made after the deploy before it; service deploy makes none", async () => {
    const repo = makeRepo();
    const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo ran" };
    const cli = await runCli(["deploy"], { cwd: repo.clone, env });
    expect(cli.code).toBe(0);
    expect(blanksOf(repo.clone)).toEqual([]);

    await using server = await startServer(repo.clone, env);
    expect(lastLine(await (await post(server.url, { secret: SECRET })).text())).toBe("[done] ok=true exitCode=0");
    const blanks = await waitFor(
      () => (blanksOf(repo.clone).length === 2 ? blanksOf(repo.clone) : undefined),
      "two blanks",
    );
    const made = inodes(blanks);
    const before = new Set(logFiles(repo.clone));

    const text = await (await post(server.url, { secret: SECRET })).text();
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
    const id = /\[deploy\] (\S+) started/.exec(text)![1]!;
    const files = logFiles(repo.clone).filter((name) => !before.has(name));
    expect(files.sort()).toEqual([
      expect.stringMatching(new RegExp(`${id}\\.json$`)),
      expect.stringMatching(new RegExp(`${id}\\.log$`)),
    ]);
    const dir = join(repo.clone, ".service", "logs");
    expect(inodes(files.map((name) => join(dir, name))).sort()).toEqual([...made].sort());
    // Whole: the record parses and says how the deploy ended, the .log holds its lines.
    expect(JSON.parse(readFileSync(join(dir, files[0]!), "utf8"))).toMatchObject({ id, status: "done" });
    expect(readFileSync(join(dir, files[1]!), "utf8")).toContain("[done] ok=true exitCode=0");
    // Made again for the next one.
    await waitFor(
      () => blanksOf(repo.clone).length === 2 && inodes(blanksOf(repo.clone)).every((ino) => !made.includes(ino)),
      "two new blanks",
    );
  });

  test("a file already at a .log's name is never replaced by a blank: the deploy's own create says why", () => {
    const logs = join(tempDir(), ".service", "logs");
    mkdirSync(logs, { recursive: true });
    const taken = join(logs, "taken.log");
    writeFileSync(taken, "kept\n");
    makeBlanks(logs);
    expect(openBlank(taken)).toBeUndefined();
    expect(readFileSync(taken, "utf8")).toBe("kept\n");
    expect(readdirSync(join(logs, "..", "blanks"))).toHaveLength(1);
  });

  test("the blanks of a server killed with -9 are removed at the next start", async () => {
    const repo = makeRepo();
    const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo ran" };
    const first = await startServer(repo.clone, env);
    expect(lastLine(await (await post(first.url, { secret: SECRET })).text())).toBe("[done] ok=true exitCode=0");
    const left = await waitFor(
      () => (blanksOf(repo.clone).length === 2 ? blanksOf(repo.clone) : undefined),
      "two blanks",
    );
    first.proc.kill("SIGKILL");
    await first.proc.exited;

    await using _second = await startServer(repo.clone, env);
    expect(left.filter(existsSync)).toEqual([]);
  });
});
