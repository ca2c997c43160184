/**
 * docs/deploy-control.md "Build slots": a slot is held from the pull to the end of the pruning of old releases (work
 * on the disk, after the `[done]` line), and a freeze that begins while a deploy waits for a slot refuses it as one
 * that began while it waited in the queue. Real repositories, the real server, real releases.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freezeAt } from "../../src/config/freeze.ts";
import { StreamReader } from "../_support/gate.ts";
import { defer, lastLine, makeRepo, post, SECRET, startServer, tempDir, waitFor } from "../_support/helpers.ts";
import { aRunsBWaits, slotService } from "../_support/slots.ts";
import { spawnDeploy } from "../_support/queueing.ts";

describe("what a build slot covers", () => {
  test("the pruning of old releases holds the slot: a deploy waiting for it starts once the old release is gone", async () => {
    const dir = tempDir("service-slot-prune-");
    const site = join(dir, "site");
    const hold = join(dir, "hold");
    const seen = join(dir, "seen");
    mkdirSync(site);
    const a = makeRepo({ "public/index.html": "v1\n" });
    const b = makeRepo();
    // a's build writes 20 000 files (a release slow to remove) and waits while `hold` exists; b's notes how many
    // releases of a it finds.
    const build = `mkdir -p node_modules && cd node_modules && seq 1 20000 | xargs touch && while [ -f '${hold}' ]; do sleep 0.02; done`;
    writeFileSync(
      join(dir, "service.yaml"),
      [
        "maxConcurrentDeploys: 1",
        "apps:",
        `  - { name: a, host: localhost, path: /a, repoPath: ${a.clone}, secret: ${SECRET},`,
        `      releases: { path: ${site}, keep: 2 }, runScript: "${build}" }`,
        `  - { name: b, host: localhost, path: /b, repoPath: ${b.clone}, secret: ${SECRET},`,
        `      runScript: "ls -d ${site}/releases/*/ | wc -l >> ${seen}" }`,
        "",
      ].join("\n"),
    );
    await using server = await startServer(dir, { SERVICE_HOSTNAME: "127.0.0.1" });
    const deploy = (app: string) => post(`${server.url}/${app}`, { secret: SECRET });
    expect(lastLine(await (await deploy("a")).text())).toBe("[done] ok=true exitCode=0");
    a.push({ "public/index.html": "v2\n" }, "v2");
    expect(lastLine(await (await deploy("a")).text())).toBe("[done] ok=true exitCode=0");
    writeFileSync(hold, "");
    a.push({ "public/index.html": "v3\n" }, "v3");
    const third = new StreamReader(await deploy("a"));
    await waitFor(() => third.text.includes("[run]"), "a's third build to run");
    const other = new StreamReader(await deploy("b"));
    await waitFor(() => other.text.includes("[slot] waiting for a build slot (1 of 1 in use: a)"), "b's wait");
    rmSync(hold);
    expect(lastLine(await third.done)).toBe("[done] ok=true exitCode=0");
    expect(lastLine(await other.done)).toBe("[done] ok=true exitCode=0");
    // b ran after a's first release was removed: two releases of a left (keep 2).
    expect(readFileSync(seen, "utf8").trim()).toBe("2");
  });

  test("a freeze that began while a deploy waited for a build slot refuses it when it gets the slot; nothing of it runs", async () => {
    const iso = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;
    const window = { from: iso(Date.now() + 10_000), to: iso(Date.now() + 3_600_000), timeZone: "UTC", reason: "late" };
    const s = slotService(["a", "b"], ["maxConcurrentDeploys: 1", `freeze: ${JSON.stringify([window])}`]);
    await using server = await startServer(s.cwd, s.env);
    using _ = defer(s.openAll);
    const { a, b } = await aRunsBWaits(s, server.url);
    await waitFor(() => freezeAt([window], new Date()), "the freeze to begin", 30_000);
    s.apps.a!.gate.open();
    expect(lastLine(await a.done)).toBe("[done] ok=true exitCode=0");
    const text = await b.done;
    expect(text).toContain("[slot] got a build slot");
    expect(text).toContain("not started: frozen until");
    expect(lastLine(text)).toStartWith("[done] ok=false");
    expect(text).not.toContain("[pull]");
    expect(s.apps.b!.gate.starts()).toEqual([]);
    expect(existsSync(join(s.cwd, ".service"))).toBe(true);
  });

  test("a service deploy killed with -9 keeps its build slot until its script's process group is gone", async () => {
    const s = slotService(["a", "b"], ["maxConcurrentDeploys: 1"]);
    await using server = await startServer(s.cwd, s.env);
    using _ = defer(s.openAll);
    const cli = spawnDeploy(s.cwd, {}, ["deploy", "--app", "a", "--cwd", s.cwd]);
    await waitFor(() => s.started().includes("a"), "a's script");
    cli.proc.kill("SIGKILL");
    await cli.proc.exited;
    // a's script runs on in its own group: the slot is still a's.
    const b = new StreamReader(await post(`${server.url}/b`, { secret: SECRET }));
    await waitFor(() => b.text.includes("[slot] waiting for a build slot (1 of 1 in use: a)"), "b's wait for a's slot");
    expect(s.started()).toEqual(["a"]);
    s.apps.a!.gate.open();
    await waitFor(() => s.started().includes("b"), "b's script, once a's is gone");
    // a's script ended before b's began: the two never ran at once.
    expect(s.apps.a!.gate.lines().at(-1)).toStartWith("end ");
    s.apps.b!.gate.open();
    expect(lastLine(await b.done)).toBe("[done] ok=true exitCode=0");
  });
});
