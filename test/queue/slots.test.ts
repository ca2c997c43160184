/**
 * docs/deploy-control.md "Build slots": at most `maxConcurrentDeploys` deploys of a service directory do their work at
 * once, across its apps and the `service deploy` run there; handed out in the order asked, freed by a dead holder,
 * never held at a gate, ended by a cancel; said by `service status`, the admin API and /metrics.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { bearer, startAdmin } from "../_support/admin-helpers.ts";
import { hasBrowser, hasText, launchBrowser, loggedIn } from "../_support/browser.ts";
import { StreamReader } from "../_support/gate.ts";
import { gatedService } from "../_support/github-checks.ts";
import { defer, lastLine, post, runCli, SECRET, startServer, tempDir, waitFor } from "../_support/helpers.ts";
import { spawnDeploy } from "../_support/queueing.ts";
import { TOKEN_VALUES, writeToken } from "../_support/token-fixtures.ts";
import { aRunsBWaits, slotService } from "../_support/slots.ts";

const browser = hasBrowser("the dashboard's slots line");

const series = (text: string, name: string) =>
  text
    .split("\n")
    .find((line) => line.startsWith(`${name} `))
    ?.split(" ")
    .pop();

describe("build slots", () => {
  test("with maxConcurrentDeploys: 2, two apps run, the others wait naming the holders and start in the order asked", async () => {
    const s = slotService(["a", "b", "c", "d"], ["maxConcurrentDeploys: 2"]);
    await using server = await startServer(s.cwd, s.env);
    using _ = defer(s.openAll);
    const push = (name: string) => post(`${server.url}${s.apps[name]!.path}`, { secret: SECRET });
    const a = new StreamReader(await push("a"));
    await waitFor(() => s.started().includes("a"), "a's script");
    const b = new StreamReader(await push("b"));
    await waitFor(() => s.started().includes("b"), "b's script");
    const c = new StreamReader(await push("c"));
    await waitFor(() => c.text.includes("[slot] waiting for a build slot (2 of 2 in use: a, b)"), "c's wait");
    const d = new StreamReader(await push("d"));
    await waitFor(() => d.text.includes("[slot] waiting for a build slot (2 of 2 in use: a, b)"), "d's wait");

    const status = await runCli(["status", "--cwd", s.cwd], { cwd: s.cwd });
    expect(status.stdout).toContain("slots: 2 of 2 in use: a, b\n");
    expect(status.stdout).toMatch(/app c [^\n]*\n(?:.*\n)*?\s+running:\s+\S+ .*waiting for a build slot/);
    const json = JSON.parse((await runCli(["status", "--json", "--cwd", s.cwd], { cwd: s.cwd })).stdout);
    expect(json[0].slots.inUse).toBe(2);
    expect(json[0].slots.limit).toBe(2);
    expect(json[0].slots.holders.map((h: { app: string }) => h.app)).toEqual(["a", "b"]);
    expect(json.find((app: { app: string }) => app.app === "c").running.waiting).toBe("slot");

    expect(s.started()).toEqual(["a", "b"]);
    s.apps.b!.gate.open();
    await b.done;
    await waitFor(() => s.started().includes("c"), "c's script, the first to ask");
    expect(c.text).toMatch(/\[slot\] got a build slot after \d+\.\d s/);
    expect(s.started()).toEqual(["a", "b", "c"]);
    s.apps.a!.gate.open();
    await a.done;
    await waitFor(() => s.started().includes("d"), "d's script");
    s.apps.c!.gate.open();
    s.apps.d!.gate.open();
    for (const out of [a, b, c, d]) expect(lastLine(await out.done)).toBe("[done] ok=true exitCode=0");
    expect(a.text).not.toContain("[slot]");
  });

  test("a service deploy in the same working directory counts against the same slots", async () => {
    const s = slotService(["a", "b"], ["maxConcurrentDeploys: 1"]);
    await using server = await startServer(s.cwd, s.env);
    using _ = defer(s.openAll);
    const a = new StreamReader(await post(`${server.url}/a`, { secret: SECRET }));
    await waitFor(() => s.started().includes("a"), "a's script");
    await using cli = spawnDeploy(s.cwd, {}, ["deploy", "--app", "b", "--cwd", s.cwd]);
    await waitFor(() => cli.out.text.includes("[slot] waiting for a build slot (1 of 1 in use: a)"), "the CLI's wait");
    expect(s.started()).toEqual(["a"]);
    s.apps.a!.gate.open();
    await a.done;
    await waitFor(() => s.started().includes("b"), "b's script");
    s.apps.b!.gate.open();
    expect(await cli.proc.exited).toBe(0);
  });

  test("a service rollback takes a build slot too", async () => {
    const s = slotService(["a", "b"], ["maxConcurrentDeploys: 1"]);
    await using server = await startServer(s.cwd, s.env);
    using _ = defer(s.openAll);
    s.apps.b!.gate.open();
    for (const n of ["1", "2"]) {
      s.apps.b!.repo.push({ "b.txt": n });
      expect(lastLine(await (await post(`${server.url}/b`, { secret: SECRET })).text())).toBe(
        "[done] ok=true exitCode=0",
      );
    }
    const a = new StreamReader(await post(`${server.url}/a`, { secret: SECRET }));
    await waitFor(() => s.started().includes("a"), "a's script");
    await using cli = spawnDeploy(s.cwd, {}, ["rollback", "--app", "b", "--cwd", s.cwd]);
    await waitFor(
      () => cli.out.text.includes("[slot] waiting for a build slot (1 of 1 in use: a)"),
      "the rollback's wait",
    );
    expect(s.apps.b!.gate.starts()).toHaveLength(2);
    s.apps.a!.gate.open();
    expect(await cli.proc.exited).toBe(0);
    expect(s.apps.b!.gate.starts()).toHaveLength(3);
    expect(lastLine(await a.done)).toBe("[done] ok=true exitCode=0");
  });

  test("a server killed -9 while it holds a slot frees it once what it ran is gone: a service deploy waiting on it proceeds", async () => {
    const s = slotService(["a", "b"], ["maxConcurrentDeploys: 1"]);
    const server = await startServer(s.cwd, s.env);
    using _ = defer(s.openAll);
    void post(`${server.url}/a`, { secret: SECRET }).then((res) => res.text().catch(() => ""));
    await waitFor(() => s.started().includes("a"), "a's script");
    await using cli = spawnDeploy(s.cwd, {}, ["deploy", "--app", "b", "--cwd", s.cwd]);
    await waitFor(() => cli.out.text.includes("[slot] waiting for a build slot (1 of 1 in use: a)"), "the CLI's wait");
    server.proc.kill("SIGKILL");
    await server.proc.exited;
    // a's script runs on in its own group: the slot stays a's until it ends (two builds never run at once).
    expect(s.started()).toEqual(["a"]);
    s.apps.a!.gate.open();
    await waitFor(() => s.started().includes("b"), "b's script once the holder and its script are gone");
    s.apps.b!.gate.open();
    expect(await cli.proc.exited).toBe(0);
    expect(cli.out.text).toContain("[slot] got a build slot");
  });

  test("a deploy waiting at its gate holds no slot", async () => {
    const s = gatedService("{ checks: [ci/build] }", ["maxConcurrentDeploys: 1"]);
    const sha = s.repo.push({ "a.txt": "1" });
    await using server = await startServer(s.cwd, s.env);
    const out = new StreamReader(await post(`${server.url}/`, { secret: SECRET }));
    await waitFor(() => out.text.includes("[gate] waiting for ci/build (missing)"), "the wait at the gate");
    const status = JSON.parse((await runCli(["status", "--json", "--cwd", s.cwd], { cwd: s.cwd })).stdout);
    expect(status[0].running.waiting).toBe("checks");
    expect(status[0].slots).toEqual({ inUse: 0, limit: 1, holders: [] });
    s.forge.status(sha, "ci/build", "success");
    expect(lastLine(await out.done)).toBe("[done] ok=true exitCode=0");
    expect(out.text).not.toContain("[slot]");
  });

  test("maxConcurrentDeploys: 0 sets no limit: three apps run at once", async () => {
    const s = slotService(["a", "b", "c"], ["maxConcurrentDeploys: 0"]);
    await using server = await startServer(s.cwd, s.env);
    using _ = defer(s.openAll);
    const outs = await Promise.all(
      ["a", "b", "c"].map(async (name) => new StreamReader(await post(`${server.url}/${name}`, { secret: SECRET }))),
    );
    await waitFor(() => s.started().length === 3, "three scripts at once");
    s.openAll();
    for (const out of outs) expect(lastLine(await out.done)).toBe("[done] ok=true exitCode=0");
    expect(outs.map((out) => out.text).join("")).not.toContain("[slot]");
    const check = await runCli(["check", "--cwd", s.cwd], { cwd: s.cwd });
    expect(check.stdout).toContain("build slots: no limit");
  });

  test("a bad maxConcurrentDeploys is a config error; service check prints the slots", async () => {
    const s = slotService(["a"], ["maxConcurrentDeploys: -1"]);
    const bad = await runCli(["check", "--cwd", s.cwd], { cwd: s.cwd });
    expect(bad.code).not.toBe(0);
    expect(bad.stdout + bad.stderr).toContain(
      `key "maxConcurrentDeploys": expected a whole number (0 or more), got -1`,
    );
    const env = await runCli(["check", "--cwd", s.cwd], {
      cwd: s.cwd,
      env: { SERVICE_MAX_CONCURRENT_DEPLOYS: "many" },
    });
    expect(env.stdout + env.stderr).toContain("SERVICE_MAX_CONCURRENT_DEPLOYS");
    expect(env.code).not.toBe(0);
    const file = join(s.cwd, "service.yaml");
    writeFileSync(file, (await Bun.file(file).text()).replace("maxConcurrentDeploys: -1\n", ""));
    const ok = await runCli(["check", "--cwd", s.cwd], { cwd: s.cwd });
    expect(ok.stdout).toMatch(/build slots: \d+ \(the CPUs of this machine\)/);
    const three = await runCli(["check", "--cwd", s.cwd], { cwd: s.cwd, env: { SERVICE_MAX_CONCURRENT_DEPLOYS: "3" } });
    expect(three.stdout).toContain("build slots: 3\n");
    writeFileSync(
      file,
      (await Bun.file(file).text()).replace("    secret:", "    maxConcurrentDeploys: 2\n    secret:"),
    );
    const perApp = await runCli(["check", "--cwd", s.cwd], { cwd: s.cwd });
    expect(perApp.code).not.toBe(0);
    expect(perApp.stdout + perApp.stderr).toContain("maxConcurrentDeploys");
  });

  test("service cancel ends a wait for a build slot: the deploy ends cancelled and nothing of it runs", async () => {
    const s = slotService(["a", "b"], ["maxConcurrentDeploys: 1"]);
    await using server = await startServer(s.cwd, s.env);
    using _ = defer(s.openAll);
    const { a, b } = await aRunsBWaits(s, server.url);
    const cancel = await runCli(["cancel", b.id()!, "--cwd", s.cwd], { cwd: s.cwd });
    expect(cancel.code).toBe(0);
    expect(lastLine(await b.done)).toBe("[done] ok=false exitCode=null");
    expect(b.text).not.toContain("[pull]");
    expect(s.started()).toEqual(["a"]);
    const status = JSON.parse((await runCli(["status", "--json", "--cwd", s.cwd], { cwd: s.cwd })).stdout);
    expect(status[0].slots.holders).toEqual([{ app: "a", id: a.id() }]);
    s.apps.a!.gate.open();
    expect(lastLine(await a.done)).toBe("[done] ok=true exitCode=0");
  });

  test("the admin API and /metrics show the slots and a deploy waiting for one", async () => {
    const s = slotService(["a", "b"], ["maxConcurrentDeploys: 1"]);
    await using server = await startAdmin(s.cwd, s.env);
    using _ = defer(s.openAll);
    const { a, b } = await aRunsBWaits(s, server.url);
    const apps = await (await fetch(`${server.admin}/api/apps`, { headers: bearer() })).json();
    expect(apps.apps.find((app: { name: string }) => app.name === "b").running.waiting).toBe("slot");
    expect(apps.slots).toEqual({ inUse: 1, limit: 1, holders: [{ app: "a", id: a.id() }] });
    const metrics = await (await fetch(`${server.admin}/metrics`, { headers: bearer() })).text();
    expect(series(metrics, "service_build_slots_in_use")).toBe("1");
    expect(series(metrics, "service_build_slots_limit")).toBe("1");
    expect(series(metrics, 'service_deploys_waiting_for_slot{app="b"}')).toBe("1");
    expect(series(metrics, 'service_deploys_waiting_for_slot{app="a"}')).toBe("0");
    s.apps.a!.gate.open();
    s.apps.b!.gate.open();
    for (const out of [a, b]) expect(lastLine(await out.done)).toBe("[done] ok=true exitCode=0");
  });

  test("a token scoped to one app is told how many slots are in use, and the names of its apps only", async () => {
    const tokenFile = join(tempDir("service-slot-token-"), "ci-b");
    writeToken(tokenFile, TOKEN_VALUES["ci-web"]);
    const s = slotService(
      ["a", "b"],
      ["maxConcurrentDeploys: 1", "tokens:", `  - { name: ci-b, role: deploy, apps: [b], file: ${tokenFile} }`],
    );
    await using server = await startAdmin(s.cwd, s.env);
    using _ = defer(s.openAll);
    const a = new StreamReader(await post(`${server.url}/a`, { secret: SECRET }));
    await waitFor(() => s.started().includes("a"), "a's script");
    const slotsFor = async (token?: string) =>
      (await (await fetch(`${server.admin}/api/apps`, { headers: bearer(token) })).json()).slots;
    expect(await slotsFor()).toEqual({ inUse: 1, limit: 1, holders: [{ app: "a", id: a.id() }] });
    expect(await slotsFor(TOKEN_VALUES["ci-web"])).toEqual({ inUse: 1, limit: 1, holders: [] });
    s.apps.a!.gate.open();
    expect(lastLine(await a.done)).toBe("[done] ok=true exitCode=0");
  });

  test.skipIf(!browser)("the dashboard says the slots in use and whose, and an app waiting for one", async () => {
    const s = slotService(["a", "b"], ["maxConcurrentDeploys: 1"]);
    await using server = await startAdmin(s.cwd, s.env);
    using _ = defer(s.openAll);
    const { a, b } = await aRunsBWaits(s, server.url);
    await using context = await launchBrowser();
    const page = await loggedIn(context, server.admin);
    await hasText(page.locator("p.slots"), (text) => text === "Build slots: 1 of 1 in use (a)");
    await hasText(page.getByRole("region", { name: "b" }), (text) => text.includes("waiting for a build slot"));
    s.apps.a!.gate.open();
    await hasText(page.locator("p.slots"), (text) => text === "Build slots: 1 of 1 in use (b)");
    s.apps.b!.gate.open();
    for (const out of [a, b]) expect(lastLine(await out.done)).toBe("[done] ok=true exitCode=0");
  });
});
