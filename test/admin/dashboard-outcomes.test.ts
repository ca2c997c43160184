/**
 * docs/admin.md "The dashboard": a deploy's page says how it ended, from real deploys, in a real browser: ok green,
 * failed red naming the failing step, rolled back amber naming the commit that stays live, and cancelled,
 * interrupted and refused (by its signature, the gate, a freeze) grey with the reason. The panel's colour is its
 * class; its outcome, `data-outcome`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { bearer, startAdmin } from "../_support/admin-helpers.ts";
import { hasBrowser, launchBrowser, loggedIn } from "../_support/browser.ts";
import { StreamReader } from "../_support/gate.ts";
import { gatedService } from "../_support/github-checks.ts";
import { baseEnv, CLI, makeRepo, post, SECRET, tempDir, waitFor } from "../_support/helpers.ts";
import { makeKeys, noSshKeygen, pushSigned } from "../_support/signing.ts";
import { deployRecords } from "../_support/webhook-fixtures.ts";

const browser = hasBrowser("the dashboard's outcome panels test");

let shared: (BrowserContext & AsyncDisposable) | undefined;
/** The listeners the browser has logged in to. */
const sessions = new Map<string, Page>();
afterAll(async () => {
  await shared?.close();
});

/** The outcome panel of deploy `id` on the dashboard at `admin`, once the page has said it. */
async function panel(admin: string, id: string) {
  shared ??= await launchBrowser({ viewport: { width: 1300, height: 800 } });
  const page = sessions.get(admin) ?? (await loggedIn(shared, admin));
  sessions.set(admin, page);
  await page.goto(`${admin}/deploys/${id}`);
  const outcome = page.locator("#outcome");
  await waitFor(async () => (await outcome.getAttribute("data-outcome")) !== null, "the outcome panel");
  return {
    outcome: await outcome.getAttribute("data-outcome"),
    tone: await outcome.getAttribute("class"),
    text: (await outcome.textContent()) ?? "",
  };
}

/** A run script that waits for the file `go` in `dir` (no busy loop: a short sleep between looks). */
const waitingScript = (dir: string) => `while [ ! -e ${join(dir, "go")} ]; do sleep 0.05; done`;

describe("the outcome panel of a deploy's page", () => {
  test.skipIf(!browser)(
    "an ok deploy is green; a failing script's is red and names the step it failed at",
    async () => {
      const repo = makeRepo({ "build.sh": "exit 0\n" });
      await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: "sh build.sh" });
      const good = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
      expect(await panel(server.admin, good.id)).toEqual({
        outcome: "ok",
        tone: "done ok",
        text: "Succeeded (exit code 0)",
      });
      repo.push({ "build.sh": "echo building; exit 3\n" }, "Break the build");
      const bad = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
      expect(bad.ok).toBe(false);
      expect(await panel(server.admin, bad.id)).toEqual({
        outcome: "failed",
        tone: "done failed",
        text: "Failed at run: the run script exited with 3",
      });
    },
  );

  test.skipIf(!browser)(
    "a failed deploy that was rolled back is amber and names the commit that stays live",
    async () => {
      const repo = makeRepo({ "build.sh": "exit 0\n" });
      await using server = await startAdmin(repo.clone, {
        SERVICE_RUN_SCRIPT: "sh build.sh",
        SERVICE_ROLLBACK_ON_FAILURE: "true",
      });
      const live = (await (await post(`${server.url}/?format=json`, { secret: SECRET })).json()).commit.sha as string;
      repo.push({ "build.sh": "exit 3\n" }, "Break the build");
      const rolled = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
      expect(rolled.rolledBack).toBe(true);
      const shown = await panel(server.admin, rolled.id);
      expect(shown.outcome).toBe("rolled_back");
      expect(shown.tone).toBe("done rolled-back");
      expect(shown.text).toStartWith(`Rolled back: ${live.slice(0, 8)}`);
      expect(shown.text).toEndWith("stays live: the run script exited with 3");
    },
  );

  test.skipIf(!browser)("a cancelled deploy is grey and says who cancelled it", async () => {
    const repo = makeRepo();
    const dir = tempDir("service-go-");
    await using server = await startAdmin(repo.clone, { SERVICE_RUN_SCRIPT: waitingScript(dir) });
    const started = await fetch(`${server.admin}/api/apps/default/deploy`, { method: "POST", headers: bearer() });
    const { id } = (await started.json()) as { id: string };
    await waitFor(() => deployRecords(repo.clone)[0]?.status === "running", "the deploy to run");
    const cancel = await fetch(`${server.admin}/api/deploys/${id}/cancel`, { method: "POST", headers: bearer() });
    expect(cancel.status).toBe(200);
    await cancel.text();
    await waitFor(() => deployRecords(repo.clone)[0]?.status === "cancelled", "the record to say cancelled");
    const shown = await panel(server.admin, id);
    expect(shown.outcome).toBe("cancelled");
    expect(shown.tone).toBe("done stopped");
    expect(shown.text).toStartWith("Cancelled by admin@");
  });

  test.skipIf(!browser)("a deploy whose process was killed -9 is grey: interrupted", async () => {
    const repo = makeRepo();
    const dir = tempDir("service-go-");
    const env = { SERVICE_RUN_SCRIPT: waitingScript(dir) };
    const proc = Bun.spawn([...CLI, "deploy"], {
      cwd: repo.clone,
      env: baseEnv(env),
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    try {
      const running = await waitFor(() => {
        const [record] = deployRecords(repo.clone);
        return record?.status === "running" && record.phases?.some((p: { name: string }) => p.name === "pull")
          ? record
          : undefined;
      }, "the deploy's script to run");
      proc.kill("SIGKILL");
      await proc.exited;
      // The next start marks the record interrupted (and stops the script it left).
      await using server = await startAdmin(repo.clone, env);
      expect(deployRecords(repo.clone)[0].status).toBe("interrupted");
      expect(await panel(server.admin, running.id)).toEqual({
        outcome: "interrupted",
        tone: "done stopped",
        text: "Interrupted: the service stopped while it ran",
      });
    } finally {
      writeFileSync(join(dir, "go"), "");
    }
  });

  test.skipIf(!browser)("a deploy the gate refused is grey and says why", async () => {
    const s = gatedService("{ checks: [ci/build] }");
    const sha = s.repo.push({ "a.txt": "1" });
    await using server = await startAdmin(s.cwd, s.env);
    const out = new StreamReader(await post(`${server.url}/`, { secret: SECRET }));
    await waitFor(() => out.text.includes("[gate] waiting for ci/build (missing)"), "the wait");
    s.forge.status(sha, "ci/build", "failure");
    await out.done;
    const shown = await panel(server.admin, out.id()!);
    expect(shown.outcome).toBe("refused");
    expect(shown.tone).toBe("done stopped");
    expect(shown.text).toStartWith("Refused by the gate: shut: ci/build failure");
  });

  test.skipIf(!browser)("a deploy that waited into a freeze is grey and says the freeze", async () => {
    const repo = makeRepo();
    const dir = tempDir("service-go-");
    const iso = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;
    const begins = Date.now() + 6_000;
    const window = { from: iso(begins), to: iso(begins + 3_600_000), timeZone: "UTC", reason: "release review" };
    await using server = await startAdmin(repo.clone, {
      SERVICE_RUN_SCRIPT: waitingScript(dir),
      SERVICE_FREEZE: JSON.stringify([window]),
    });
    const first = new StreamReader(await post(`${server.url}/`, { secret: SECRET }));
    await waitFor(() => first.text.includes("[run]"), "the first deploy to run");
    const second = new StreamReader(await post(`${server.url}/`, { secret: SECRET }));
    await waitFor(() => second.text.includes("[queued]"), "the second deploy to queue");
    await waitFor(() => Date.now() > begins + 1000, "the freeze to begin", 30_000);
    writeFileSync(join(dir, "go"), "");
    await first.done;
    await second.done;
    const shown = await panel(server.admin, second.id()!);
    expect(shown.outcome).toBe("refused");
    expect(shown.tone).toBe("done stopped");
    expect(shown.text).toMatch(/^Refused by a freeze: frozen until .*: release review$/);
  });

  test.skipIf(!browser || noSshKeygen)("a deploy of an unsigned commit is grey: refused by its signature", async () => {
    const keys = makeKeys();
    const repo = makeRepo();
    await using server = await startAdmin(repo.clone, { SERVICE_ALLOWED_SIGNERS: keys.allowed });
    pushSigned(repo, null, { "a.txt": "unsigned" }, "Unsigned change");
    const refused = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
    expect(refused.verify.ok).toBe(false);
    const shown = await panel(server.admin, refused.id);
    expect(shown.outcome).toBe("refused");
    expect(shown.tone).toBe("done stopped");
    expect(shown.text).toBe(`Refused by its signature: ${refused.verify.reason}`);
  });
});
