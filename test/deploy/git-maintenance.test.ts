/**
 * git's automatic maintenance (docs/deploy-control.md "The deploy"): `git pull` would run `git maintenance run
 * --auto` inside itself, between the pull and the script; a deploy runs it after its `[done]` line instead, once,
 * and not at all where the clone's config turns it off, as git would.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { git, lastLine, makeRepo, post, SECRET, startServer, tempDir, waitFor } from "../_support/helpers.ts";

/** The lines of git's trace that name a maintenance run: run by git itself (run_command) or on its own (built-in). */
const maintenanceLines = (trace: string) => trace.split("\n").filter((line) => /git maintenance run/.test(line));

describe("git's automatic maintenance after a deploy", () => {
  test("a deploy's git pull does not run it; it runs after the [done] line, on its own, again only once HEAD moved", async () => {
    const repo = makeRepo();
    const trace = join(tempDir(), "git-trace");
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "true",
      GIT_TRACE: trace,
    });
    const deploy = async () =>
      expect(lastLine(await (await post(server.url, { secret: SECRET })).text())).toBe("[done] ok=true exitCode=0");
    const runs = (count: number) =>
      waitFor(() => {
        const found = existsSync(trace) ? maintenanceLines(readFileSync(trace, "utf8")) : [];
        return found.length >= count ? found : undefined;
      }, `maintenance run ${count} in git's trace`);
    await deploy();
    const [first] = await runs(1);
    expect(first).toContain("built-in: git maintenance run --auto --quiet");
    // Up to date: nothing new to pack, none within the hour.
    await deploy();
    repo.push({ "app.txt": "2\n" });
    await deploy();
    await runs(2);
    // The stop waits for the work after each deploy's [done] line: nothing more has run by then.
    await server.stop();
    const all = readFileSync(trace, "utf8");
    expect(maintenanceLines(all)).toHaveLength(2);
    // git pull ran, and ran no maintenance of its own (it would say `run_command: git maintenance run`).
    expect(all).toContain("run_command: git merge FETCH_HEAD");
    expect(all).not.toContain("run_command: git maintenance");
  });

  test("a clone whose config says maintenance.auto=false gets none", async () => {
    const repo = makeRepo();
    git(repo.clone, "config", "maintenance.auto", "false");
    const trace = join(tempDir(), "git-trace");
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "true",
      GIT_TRACE: trace,
    });
    expect(lastLine(await (await post(server.url, { secret: SECRET })).text())).toBe("[done] ok=true exitCode=0");
    // The server's stop waits for the work after each deploy's [done] line: what it would run has run by then.
    await server.stop();
    const all = readFileSync(trace, "utf8");
    expect(all).toContain("config --type=bool --get maintenance.auto");
    expect(maintenanceLines(all)).toEqual([]);
  });
});
