/**
 * docs/configuration.md "gate": a deploy waits until the forge's checks named in `gate.checks` are success on the
 * commit it will deploy; nothing live moves while it waits; it shuts on a failed check, a refusing forge, a cancel,
 * and when `waitMs` passes. The forge is a local server playing GitHub's documented status and check run APIs.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, lstatSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { git, lastLine, makeRepo, post, runCli, SECRET, startServer, tempDir, waitFor } from "../_support/helpers.ts";
import { StreamReader } from "../_support/gate.ts";
import { GATE_TOKEN as TOKEN, gatedService } from "../_support/github-checks.ts";
import { spawnDeploy } from "../_support/queueing.ts";
import { closedUrl } from "../_support/outbound-fixtures.ts";
import { deployRecords } from "../_support/webhook-fixtures.ts";

describe("the gate", () => {
  test("a push deploys only once its required checks are success on the commit, and nothing moves while it waits", async () => {
    const s = gatedService("{ checks: [ci/build, 'test (*)'] }");
    const before = s.repo.head();
    const sha = s.repo.push({ "a.txt": "1" });
    s.forge.status(sha, "ci/build", "pending");
    await using server = await startServer(s.cwd, s.env);
    const out = new StreamReader(await post(`${server.url}/`, { secret: SECRET }));
    await waitFor(() => out.text.includes("[gate] waiting for ci/build (pending), test (*) (missing)"), "the wait");
    // Nothing live moved: the clone is where it was and the script has not run.
    expect(s.repo.head()).toBe(before);
    expect(existsSync(s.ran)).toBe(false);
    const status = JSON.parse((await runCli(["status", "--json"], { cwd: s.cwd, env: s.env })).stdout);
    expect(status[0].running.waiting).toBe("checks");
    expect((await runCli(["status"], { cwd: s.cwd, env: s.env })).stdout).toContain("waiting for checks");
    const reads = s.forge.reads();
    s.forge.status(sha, "ci/build", "success");
    s.forge.checkRun(sha, "test (unit)", "completed", "success");
    await out.done;
    expect(s.forge.reads()).toBeGreaterThan(reads);
    expect(out.text).toContain(`[gate] ci/build, test (unit) success on ${sha.slice(0, 12)}`);
    expect(lastLine(out.text)).toBe("[done] ok=true exitCode=0");
    expect(s.repo.head()).toBe(sha);
    const [record] = deployRecords(s.cwd);
    expect(record.result.gate).toMatchObject({ ok: true, outcome: "open", commit: sha });
    expect(record.result.gate.checks.map((c: { name: string }) => c.name)).toEqual(["ci/build", "test (unit)"]);
    expect(s.forge.refused).toEqual([]);
  });

  test("a check run re-run and still queued holds the gate, though an older run of it succeeded: the newest run by id decides", async () => {
    const s = gatedService("{ checks: ['test (unit)'] }");
    const sha = s.repo.push({ "a.txt": "1" });
    s.forge.checkRun(sha, "test (unit)", "completed", "success");
    s.forge.rerun(sha, "test (unit)");
    await using server = await startServer(s.cwd, s.env);
    const out = new StreamReader(await post(`${server.url}/`, { secret: SECRET }));
    await waitFor(() => out.text.includes("[gate] waiting for test (unit) (pending)"), "the wait for the re-run");
    expect(existsSync(s.ran)).toBe(false);
    s.forge.checkRun(sha, "test (unit)", "completed", "success");
    await out.done;
    expect(lastLine(out.text)).toBe("[done] ok=true exitCode=0");
    expect(s.repo.head()).toBe(sha);
  });

  test("the commit gated is the commit deployed: a push made while it waits is not deployed by it", async () => {
    const s = gatedService("{ checks: [ci/build] }", ["pull: reset"]);
    const gated = s.repo.push({ "a.txt": "1" });
    await using server = await startServer(s.cwd, s.env);
    const out = new StreamReader(await post(`${server.url}/`, { secret: SECRET }));
    await waitFor(() => out.text.includes("[gate] waiting for ci/build (missing)"), "the wait");
    const newer = s.repo.push({ "a.txt": "2" });
    s.forge.status(newer, "ci/build", "success");
    s.forge.status(gated, "ci/build", "success");
    await out.done;
    expect(lastLine(out.text)).toBe("[done] ok=true exitCode=0");
    expect(s.repo.head()).toBe(gated);
    expect(out.text).toContain(`git reset --hard ${gated.slice(0, 12)} (the commit the gate passed)`);
  });

  test("a failed check shuts the gate: nothing runs, and the stream, the record and the commit status name it", async () => {
    const s = gatedService("{ checks: [ci/build] }");
    const before = s.repo.head();
    const sha = s.repo.push({ "a.txt": "1" });
    s.forge.status(sha, "ci/build", "failure");
    await using server = await startServer(s.cwd, s.env);
    const text = await (await post(`${server.url}/`, { secret: SECRET })).text();
    expect(text).toMatch(
      /\[gate\] shut: ci\/build failure \(https:\/\/ci\.example\/ci%2Fbuild\/\d+\) on [0-9a-f]{12}; nothing runs/,
    );
    expect(lastLine(text)).toBe("[done] ok=false exitCode=null");
    expect(s.repo.head()).toBe(before);
    expect(existsSync(s.ran)).toBe(false);
    const [record] = deployRecords(s.cwd);
    expect(record.result.gate).toMatchObject({ ok: false, outcome: "shut", commit: sha });
    expect(record.result.gate.checks[0]).toMatchObject({ name: "ci/build", state: "failure" });
    expect(record.result.gate.checks[0].url).toStartWith("https://ci.example/");
    // The server's own status goes on the commit it refused, naming the check.
    const own = await waitFor(() => s.forge.written.find((w) => w.sha === sha && w.state === "failure"), "the status");
    expect(own.context).toBe("deploy");
  });

  test("a gate whose checks stay pending times out after waitMs, and nothing runs", async () => {
    const s = gatedService("{ checks: [ci/build], waitMs: 1000 }");
    const sha = s.repo.push({ "a.txt": "1" });
    s.forge.status(sha, "ci/build", "pending");
    await using server = await startServer(s.cwd, s.env);
    const text = await (await post(`${server.url}/`, { secret: SECRET })).text();
    expect(text).toContain("[gate] timed out: waited 1 s: waiting for ci/build (pending)");
    expect(lastLine(text)).toBe("[done] ok=false exitCode=null");
    expect(deployRecords(s.cwd)[0].result.gate.outcome).toBe("timeout");
    expect(existsSync(s.ran)).toBe(false);
  });

  test("a forge that answers 401 shuts the gate at once, with that reason", async () => {
    const s = gatedService("{ checks: [ci/build] }");
    s.repo.push({ "a.txt": "1" });
    s.forge.failWith = 401;
    await using server = await startServer(s.cwd, s.env);
    const text = await (await post(`${server.url}/`, { secret: SECRET })).text();
    expect(text).toMatch(/\[gate\] shut: .*401.*; nothing runs/);
    expect(text).not.toContain(TOKEN);
    expect(lastLine(text)).toBe("[done] ok=false exitCode=null");
    expect(deployRecords(s.cwd)[0].result.gate.outcome).toBe("shut");
  });

  test("a forge that cannot be reached is asked again until waitMs, then shuts the gate with the last error", async () => {
    const s = gatedService("{ checks: [ci/build], waitMs: 1500 }", [], closedUrl());
    s.repo.push({ "a.txt": "1" });
    await using server = await startServer(s.cwd, s.env);
    const text = await (await post(`${server.url}/`, { secret: SECRET })).text();
    expect(text).toContain("[gate] the forge cannot be read:");
    expect(text).toContain("[gate] timed out: the forge could not be read within 2 s:");
    expect(lastLine(text)).toBe("[done] ok=false exitCode=null");
    expect(existsSync(s.ran)).toBe(false);
  });

  test("service cancel ends a deploy waiting at the gate; nothing runs", async () => {
    const s = gatedService("{ checks: [ci/build] }");
    const before = s.repo.head();
    s.repo.push({ "a.txt": "1" });
    await using server = await startServer(s.cwd, s.env);
    const out = new StreamReader(await post(`${server.url}/`, { secret: SECRET }));
    await waitFor(() => out.text.includes("[gate] waiting for ci/build (missing)"), "the wait");
    const cancelled = await runCli(["cancel", out.id()!], { cwd: s.cwd, env: s.env });
    expect(cancelled.code).toBe(0);
    await out.done;
    expect(lastLine(out.text)).toBe("[done] ok=false exitCode=null");
    const [record] = deployRecords(s.cwd);
    expect(record.status).toBe("cancelled");
    expect(record.result.gate.outcome).toBe("cancelled");
    expect(s.repo.head()).toBe(before);
    expect(existsSync(s.ran)).toBe(false);
  });

  test("Ctrl-C of a service deploy waiting at the gate ends the wait, and the deploy is cancelled", async () => {
    const s = gatedService("{ checks: [ci/build] }");
    const before = s.repo.head();
    s.repo.push({ "a.txt": "1" });
    await using cli = spawnDeploy(s.cwd, s.env);
    await waitFor(() => cli.out.text.includes("[gate] waiting for ci/build (missing)"), "the wait");
    cli.proc.kill("SIGINT");
    expect(await cli.proc.exited).toBe(1);
    expect(lastLine(await cli.out.done)).toBe("[done] ok=false exitCode=null");
    const [record] = deployRecords(s.cwd);
    expect(record.status).toBe("cancelled");
    expect(record.result.gate.outcome).toBe("cancelled");
    expect(s.repo.head()).toBe(before);
  });

  test("--skip-gate deploys without reading the checks, and the record says so; --force does not skip it", async () => {
    const s = gatedService("{ checks: [ci/build] }");
    const sha = s.repo.push({ "a.txt": "1" });
    s.forge.status(sha, "ci/build", "failure");
    const forced = await runCli(["deploy", "--force"], { cwd: s.cwd, env: s.env });
    expect(forced.code).toBe(1);
    expect(forced.stdout).toContain("[gate] shut: ci/build failure");
    const reads = s.forge.reads();
    const skipped = await runCli(["deploy", "--skip-gate"], { cwd: s.cwd, env: s.env });
    expect(skipped.code).toBe(0);
    expect(skipped.stdout).toMatch(/\[gate\] skipped on request \(cli:[^)]+\): the checks are not read/);
    expect(s.forge.reads()).toBe(reads);
    expect(s.repo.head()).toBe(sha);
    const last = deployRecords(s.cwd).at(-1);
    expect(last.result.gate).toMatchObject({ ok: true, outcome: "skipped" });
  });

  test("a deploy of a ref (a tag here) waits at the gate for the commit the ref names, not the branch's tip", async () => {
    const s = gatedService("{ checks: [ci/build] }");
    const before = s.repo.head();
    const named = s.repo.push({ "a.txt": "1" });
    const tip = s.repo.push({ "a.txt": "2" });
    s.forge.status(tip, "ci/build", "success");
    s.forge.status(named, "ci/build", "failure");
    const pusher = join(s.repo.dir, "pusher");
    git(pusher, "tag", "v1", named);
    git(pusher, "push", "--quiet", "origin", "v1");
    const refused = await runCli(["deploy", "--ref", "v1"], { cwd: s.cwd, env: s.env });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(`[gate] shut: ci/build failure (https://ci.example/`);
    expect(refused.stdout).toContain(`on ${named.slice(0, 12)}; nothing runs`);
    expect(s.repo.head()).toBe(before);
    s.forge.status(named, "ci/build", "success");
    const deployed = await runCli(["deploy", "--ref", "v1"], { cwd: s.cwd, env: s.env });
    expect(deployed.code).toBe(0);
    expect(s.repo.head()).toBe(named);
  });

  test("a rollback never waits at the gate", async () => {
    const s = gatedService("{ checks: [ci/build] }");
    const first = s.repo.head();
    s.forge.status(first, "ci/build", "success");
    expect((await runCli(["deploy"], { cwd: s.cwd, env: s.env })).code).toBe(0);
    const sha = s.repo.push({ "a.txt": "1" });
    s.forge.status(sha, "ci/build", "success");
    expect((await runCli(["deploy"], { cwd: s.cwd, env: s.env })).code).toBe(0);
    // The first commit's check fails now: a rollback to it does not ask.
    s.forge.status(first, "ci/build", "failure");
    const reads = s.forge.reads();
    const rolled = await runCli(["rollback"], { cwd: s.cwd, env: s.env });
    expect(rolled.stdout).not.toContain("[gate]");
    expect(rolled.code).toBe(0);
    expect(s.forge.reads()).toBe(reads);
    expect(s.repo.head()).toBe(first);
  });

  test("with releases, current does not change while a deploy waits, and the release is made of the commit gated", async () => {
    const releases = tempDir("service-gate-releases-");
    const s = gatedService("{ checks: [ci/build] }", ["releases:", `  path: ${releases}`]);
    expect((await runCli(["deploy", "--skip-gate"], { cwd: s.cwd, env: s.env })).code).toBe(0);
    const current = join(releases, "current");
    const live = readlinkSync(current);
    const sha = s.repo.push({ "a.txt": "1" });
    await using server = await startServer(s.cwd, s.env);
    const out = new StreamReader(await post(`${server.url}/`, { secret: SECRET }));
    await waitFor(() => out.text.includes("[gate] waiting for ci/build (missing)"), "the wait");
    expect(readlinkSync(current)).toBe(live);
    expect(lstatSync(current).isSymbolicLink()).toBe(true);
    s.forge.status(sha, "ci/build", "success");
    await out.done;
    expect(lastLine(out.text)).toBe("[done] ok=true exitCode=0");
    expect(readlinkSync(current)).not.toBe(live);
    expect(deployRecords(s.cwd).at(-1).result.release.commit).toBe(sha);
  });
});

describe("the gate's configuration", () => {
  test("a gate without status settings is a configuration error at start and in check", async () => {
    const repo = makeRepo();
    const cwd = tempDir();
    writeFileSync(
      join(cwd, "service.yaml"),
      `repoPath: ${repo.clone}\nrunScript: "true"\ngate: { checks: [ci/build] }\n`,
    );
    const env = { SERVICE_SECRET: SECRET };
    const checked = await runCli(["check"], { cwd, env });
    expect(checked.code).not.toBe(0);
    expect(checked.stdout + checked.stderr).toContain("gate: reads the checks through the forge of status: set status");
    const started = await runCli(["serve"], { cwd, env: { ...env, SERVICE_PORT: "0" }, timeoutMs: 20_000 });
    expect(started.code).not.toBe(0);
    expect(started.stdout + started.stderr).toContain("set status (provider, token)");
  });

  test("a gate in the repository's own config file neither adds nor drops a gate", async () => {
    const s = gatedService("{ checks: [ci/build] }");
    const sha = s.repo.push({ "service.yaml": "gate: { checks: [never] }\nrunScript: echo from-repo\n" });
    s.forge.status(sha, "ci/build", "success");
    const deployed = await runCli(["deploy"], { cwd: s.cwd, env: s.env });
    expect(deployed.code).toBe(0);
    expect(deployed.stdout).toContain("[gate] ci/build success on");
    expect(deployed.stdout).not.toContain("never");
  });

  test("SERVICE_GATE_CHECKS, SERVICE_GATE_WAIT_MS and SERVICE_GATE_BAKE_MS set the gate", async () => {
    const s = gatedService("{ checks: [other] }");
    const sha = s.repo.push({ "a.txt": "1" });
    s.forge.status(sha, "ci/build", "pending");
    const env = { ...s.env, SERVICE_GATE_CHECKS: "ci/build", SERVICE_GATE_WAIT_MS: "1000", SERVICE_GATE_BAKE_MS: "0" };
    const deployed = await runCli(["deploy"], { cwd: s.cwd, env });
    expect(deployed.stdout).toContain("[gate] timed out: waited 1 s: waiting for ci/build (pending)");
    expect(deployed.code).toBe(1);
  });
});
