/**
 * docs/watch.md: the watch after the health check, against a real Prometheus scraping every second an app whose
 * error counters the test drives (one series per test). Each test waits for the stream's lines, never for a time.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { StreamReader } from "../_support/gate.ts";
import {
  git,
  lastLine,
  logFiles,
  makeRepo,
  post,
  readJson,
  runCli,
  SECRET,
  startServer,
  tempDir,
  waitFor,
} from "../_support/helpers.ts";
import { scrapedApp, startPrometheus } from "../_support/prometheus.ts";
import { spawnDeploy } from "../_support/queueing.ts";
import { currentRelease, makeReleasesSite, releaseDirs } from "../_support/release-helpers.ts";

const scraped = scrapedApp();
const { series } = scraped;

/** A config file (outside the repository) with `watch` as YAML lines under the key, and the environment naming it. */
function configWith(watch: string, env: Record<string, string> = {}): Record<string, string> {
  const dir = tempDir("service-watch-config-");
  const file = join(dir, "service.yaml");
  writeFileSync(file, `watch:\n${watch.replace(/^/gm, "  ")}\n`);
  return { SERVICE_CONFIG: file, SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "true", ...env };
}

const prometheusWatch = (query: string, forMs: number, more = "") =>
  `forMs: ${forMs}\nintervalMs: 200\nfailures: 2\nprometheus:\n  url: ${scraped.prometheus.url}\n  query: '${query}'\n  max: 0${more ? `\n${more}` : ""}`;

/** The record of deploy `id` in the service directory `cwd`. */
function recordOf(cwd: string, id: string) {
  const name = logFiles(cwd).find((file) => file.endsWith(`_${id}.json`));
  return name ? readJson(join(cwd, ".service", "logs", name)) : undefined;
}

const idOf = (text: string) => /\[deploy\] ([0-9a-f-]{36}) started/.exec(text)?.[1];

describe("watch (docs/watch.md)", () => {
  test("a watch that holds passes: a line per check, `passed`, ok, and the record's watch", async () => {
    const query = await series("pass");
    const repo = makeRepo();
    repo.push({ "v2.txt": "2\n" });
    const env = configWith(prometheusWatch(query, 1200));
    const { code, stdout } = await runCli(["deploy"], { cwd: repo.clone, env });
    expect(stdout).toContain(
      `[watch] watching for 1.2 s: ${query} ≤ 0, every 0.2 s; 2 failed checks in a row roll back`,
    );
    expect(stdout).toMatch(/\[watch\] [\d.]+ of 1\.2 s: 0 ≤ 0\n/);
    expect(stdout).toMatch(/\[watch\] passed: \d+ checks over 1\.2 s; last 0 ≤ 0/);
    expect(lastLine(stdout)).toBe("[done] ok=true exitCode=0");
    expect(code).toBe(0);
    const record = recordOf(repo.clone, idOf(stdout)!);
    expect(record.status).toBe("done");
    expect(record.result).toMatchObject({ ok: true, rolledBack: false, watch: { query, value: 0, threshold: 0 } });
    expect(record.result.watch.checks).toBeGreaterThanOrEqual(2);
    expect(record.result.watch.breach).toBeUndefined();
    expect(record.result.phases.map((p: { name: string }) => p.name)).toContain("watch");
  });

  test("a breach rolls back in place: the reset and the script, `[done] ok=true exitCode=0`, outcome rolled_back, exit 3", async () => {
    const query = await series("in-place");
    const repo = makeRepo();
    const before = repo.head();
    const pushed = repo.push({ "v2.txt": "2\n" });
    const env = configWith(prometheusWatch(query, 120_000));
    await using deploy = spawnDeploy(repo.clone, env);
    await waitFor(() => /\[watch\] [\d.]+ of 2 min: 0 ≤ 0/.test(deploy.out.text), "the first check");
    scraped.app.set("in-place", 3);
    const code = await deploy.proc.exited;
    const text = await deploy.out.done;
    expect(text).toContain("[watch] ");
    expect(text).toMatch(/\[watch\] [\d.]+ of 2 min: 3 > 0 \(1 of 2 failed\)/);
    expect(text).toContain(`[rollback] git reset --hard ${before.slice(0, 7)}`);
    expect(text).toMatch(/\[watch\] breach: 3 > 0 at [\d.]+ of 2 min \(2 checks\); rolled back\n/);
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
    expect(code).toBe(3);
    expect(repo.head()).toBe(before);
    const record = recordOf(repo.clone, idOf(text)!);
    expect(record.result).toMatchObject({
      ok: true,
      rolledBack: true,
      commit: { sha: before },
      target: { sha: pushed },
      watch: { query, value: 3, threshold: 0, breach: true },
    });
    expect(record.result.error).toStartWith("watch breached: 3 > 0 at ");
    const logs = await runCli(["logs"], { cwd: repo.clone, env });
    expect(logs.stdout).toContain("rolled back");
  });

  test("a breach with releases switches `current` back to the release it replaced", async () => {
    const query = await series("releases");
    const site = makeReleasesSite();
    const { repo, cwd } = site;
    // The first deploy without a watch: a release to go back to.
    const first = await runCli(["deploy"], { cwd, env: site.env });
    expect(first.code).toBe(0);
    const [r1] = releaseDirs(site.site);
    repo.push({ "public/index.html": "v2\n" });
    const env = {
      ...site.env,
      ...configWith(prometheusWatch(query, 120_000)),
      SERVICE_RUN_SCRIPT: site.env.SERVICE_RUN_SCRIPT!,
    };
    await using deploy = spawnDeploy(cwd, env);
    await waitFor(() => /\[watch\] [\d.]+ of 2 min: 0 ≤ 0/.test(deploy.out.text), "the first check");
    const r2 = currentRelease(site.site);
    expect(r2).not.toBe(r1);
    scraped.app.set("releases", 1);
    const code = await deploy.proc.exited;
    const text = await deploy.out.done;
    expect(text).toContain(`[rollback] switching current back to release ${r1}`);
    expect(text).toMatch(/\[watch\] breach: 1 > 0 at .*; rolled back\n/);
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
    expect(code).toBe(3);
    expect(currentRelease(site.site)).toBe(r1!);
    const record = recordOf(cwd, idOf(text)!);
    expect(record.result).toMatchObject({ ok: true, rolledBack: true, switchedBack: true, watch: { breach: true } });
    // The release a rollback may need again is kept (pruning came after the watch).
    expect(releaseDirs(site.site)).toContain(r2!);
  });

  test("Prometheus stopped: each check fails with its reason, and two in a row are a breach", async () => {
    const own = await startPrometheus(scraped.app.target);
    const query = "sum(app_errors_total)";
    await waitFor(async () => (await own.value(query)) !== undefined, "a sample in the second Prometheus", 30_000);
    const repo = makeRepo();
    const before = repo.head();
    repo.push({ "v2.txt": "2\n" });
    const env = configWith(
      `forMs: 120000\nintervalMs: 200\nprometheus:\n  url: ${own.url}\n  query: '${query}'\n  max: 1000000`,
    );
    await using deploy = spawnDeploy(repo.clone, env);
    await waitFor(() => /\[watch\] [\d.]+ of 2 min: \d+ ≤ 1000000/.test(deploy.out.text), "the first check");
    await own.stop();
    const code = await deploy.proc.exited;
    const text = await deploy.out.done;
    expect(text).toMatch(/\[watch\] [\d.]+ of 2 min: check failed: Prometheus: \S+ \(1 of 2 failed\)/);
    expect(text).toMatch(/\[watch\] breach: check failed: Prometheus: \S+ at .* \(2 checks\); rolled back/);
    expect(code).toBe(3);
    expect(repo.head()).toBe(before);
    const record = recordOf(repo.clone, idOf(text)!);
    expect(record.result.watch).toMatchObject({ breach: true, value: null });
    expect(record.result.watch.reason).toStartWith("Prometheus: ");
  });

  test("the command form: exit 0 passes; with onBreach notify a breach is said and nothing is rolled back", async () => {
    const repo = makeRepo();
    const flag = join(tempDir("service-watch-flag-"), "broken");
    const pushed = repo.push({ "v2.txt": "2\n" });
    const env = configWith(
      `forMs: 120000\nintervalMs: 200\nfailures: 2\nonBreach: notify\ncommand: sh -c 'echo "checking $SERVICE_DEPLOY_ID"; test ! -e ${flag}'`,
    );
    await using deploy = spawnDeploy(repo.clone, env);
    await waitFor(() => /\[watch\] [\d.]+ of 2 min: exit 0/.test(deploy.out.text), "the first check");
    writeFileSync(flag, "");
    const code = await deploy.proc.exited;
    const text = await deploy.out.done;
    const id = idOf(text)!;
    // The command's output is in the log, with the deploy's environment.
    expect(text).toContain(`checking ${id}`);
    expect(text).toMatch(/\[watch\] [\d.]+ of 2 min: exit code 1 \(1 of 2 failed\)/);
    expect(text).toMatch(
      new RegExp(
        `\\[watch\\] breach: exit code 1 at .* \\(2 checks\\); not rolled back \\(onBreach: notify\\): ${pushed.slice(0, 7)}[0-9a-f]* stays live`,
      ),
    );
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
    expect(code).toBe(0);
    expect(repo.head()).toBe(pushed);
    const record = recordOf(repo.clone, id);
    expect(record.status).toBe("done");
    expect(record.result).toMatchObject({
      ok: true,
      rolledBack: false,
      watch: { breach: true, value: 1, threshold: 0 },
    });
    expect(record.result.watch.command).toContain("test ! -e");
    // The DORA figures count it failed: it breached its watch, though its outcome is ok.
    const stats = JSON.parse((await runCli(["stats", "--json"], { cwd: repo.clone, env })).stdout);
    expect(stats[0]).toMatchObject({ counted: 1, failed: 1 });
  });

  test("`service cancel` ends the watch and keeps what is live: recorded ok with watch.cancelled", async () => {
    const query = await series("cancel");
    const repo = makeRepo();
    const pushed = repo.push({ "v2.txt": "2\n" });
    const env = configWith(prometheusWatch(query, 120_000));
    await using deploy = spawnDeploy(repo.clone, env);
    await waitFor(() => /\[watch\] [\d.]+ of 2 min: 0 ≤ 0/.test(deploy.out.text), "the first check");
    const id = idOf(deploy.out.text)!;
    const cancelled = await runCli(["cancel", id], { cwd: repo.clone, env });
    expect(cancelled.stderr + cancelled.stdout).toContain(`deploy ${id} cancelled`);
    expect(cancelled.code).toBe(0);
    const code = await deploy.proc.exited;
    const text = await deploy.out.done;
    expect(text).toMatch(/\[watch\] ended by a cancel by \S+ at [\d.]+ of 2 min: what is live stays\n/);
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
    expect(code).toBe(0);
    expect(repo.head()).toBe(pushed);
    const record = recordOf(repo.clone, id);
    expect(record.status).toBe("done");
    expect(record.result).toMatchObject({ ok: true, rolledBack: false, watch: { cancelled: true } });
  });

  test("the queue is held while it watches: a second deploy waits; `service status` says watching", async () => {
    const query = await series("queue");
    const repo = makeRepo();
    const service = tempDir("service-watch-server-");
    const env = configWith(prometheusWatch(query, 120_000), { SERVICE_REPO_PATH: repo.clone });
    await using server = await startServer(service, env);
    repo.push({ "v2.txt": "2\n" });
    const first = new StreamReader(await post(server.url, { secret: SECRET }));
    const checked = /\[watch\] [\d.]+ of 2 min: 0 ≤ 0/;
    await waitFor(() => checked.test(first.text), "the first deploy's first check");
    const status = await runCli(["status", "--json"], { cwd: service, env });
    const [watching] = JSON.parse(status.stdout);
    expect(watching.watching).toMatchObject({ deployId: first.id(), forMs: 120_000 });
    expect(watching.watching.checks).toBeGreaterThanOrEqual(1);
    expect((await runCli(["status"], { cwd: service, env })).stdout).toMatch(/, watching \([\d.]+ of 2 min\)/);
    const second = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => second.text.includes("[queued] waiting; position=1"), "the second deploy to queue");
    // The second starts only once the first's watch ends (here by a cancel, keeping what went live).
    expect((await runCli(["cancel", first.id()!], { cwd: service, env })).code).toBe(0);
    expect(lastLine(await first.done)).toBe("[done] ok=true exitCode=0");
    await waitFor(() => checked.test(second.text), "the second deploy's first check");
    expect((await runCli(["cancel", second.id()!], { cwd: service, env })).code).toBe(0);
    expect(lastLine(await second.done)).toBe("[done] ok=true exitCode=0");
    const one = recordOf(service, first.id()!);
    const two = recordOf(service, second.id()!);
    expect(Date.parse(two.startedAt)).toBeGreaterThanOrEqual(Date.parse(one.result.finishedAt));
  });

  test("a stop of the service ends the watch: recorded ok with watch.interrupted, what is live stays", async () => {
    const query = await series("sigterm");
    const repo = makeRepo();
    const service = tempDir("service-watch-stop-");
    const env = configWith(prometheusWatch(query, 120_000), { SERVICE_REPO_PATH: repo.clone });
    const server = await startServer(service, env);
    const pushed = repo.push({ "v2.txt": "2\n" });
    const first = new StreamReader(await post(server.url, { secret: SECRET }));
    await waitFor(() => /\[watch\] [\d.]+ of 2 min: 0 ≤ 0/.test(first.text), "the first check");
    expect(await server.stop()).toBe(0);
    const text = await first.done;
    expect(text).toMatch(
      /\[watch\] not finished: the service is stopping \(at [\d.]+ of 2 min\); what is live stays\n/,
    );
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
    expect(git(repo.clone, "rev-parse", "HEAD")).toBe(pushed);
    const record = recordOf(service, first.id()!);
    expect(record.status).toBe("done");
    expect(record.result).toMatchObject({ ok: true, watch: { interrupted: true } });
  });
});
