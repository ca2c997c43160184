/**
 * A notification that fails is never silent: a real service counts each one on /metrics
 * (`service_notifications_total{app,format,outcome}`), logs a failure with its reason, and keeps it in the deploy's
 * record (what its page shows); `service notify test` sends a test message to each channel and says each outcome.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { bearer, startAdmin } from "../../_support/admin-helpers.ts";
import { hasBrowser, hasText, launchBrowser, loggedIn } from "../../_support/browser.ts";
import { makeLocalRepo, makeRepo, post, runCli, SECRET, tempDir, waitFor } from "../../_support/helpers.ts";
import { fakeApi } from "../../_support/outbound-fixtures.ts";
import { secretFile } from "../../_support/channel-fixtures.ts";

const TOKEN = "bot-token-0123456789abcdef";
const browser = hasBrowser("the deploy page's notifications");

describe("never silently", () => {
  test("a failed deploy's notifications are counted on /metrics, a failure logged with its reason and kept in the record", async () => {
    const gotify = fakeApi([200]);
    const telegram = fakeApi([401]);
    const repo = makeRepo();
    const cwd = tempDir();
    const tokenFile = secretFile(cwd, "token", TOKEN);
    writeFileSync(
      join(cwd, "service.yaml"),
      `repoPath: ${repo.clone}
runScript: "false"
notify:
  - { format: gotify, url: "${gotify.url}", tokenFile: ${tokenFile} }
  - { format: telegram, url: "${telegram.url}", tokenFile: ${tokenFile}, chatId: 42 }
`,
    );
    await using server = await startAdmin(cwd);
    const res = await post(server.url, { secret: SECRET });
    await res.text();
    const counted = await waitFor(async () => {
      const body = await (await fetch(`${server.admin}/metrics`)).text();
      return body.includes('service_notifications_total{app="default",format="telegram",outcome="failed"} 1')
        ? body
        : undefined;
    }, "the notifications to be counted");
    expect(counted).toContain('service_notifications_total{app="default",format="gotify",outcome="sent"} 1');
    await waitFor(
      () =>
        server.stderr.text.includes("notification telegram failed: 401") ||
        server.stdout.text.includes("notification telegram failed: 401") ||
        undefined,
      "the failure in the service's log",
    );
    const logged = `${server.stdout.text}${server.stderr.text}`;
    expect(logged).not.toContain(TOKEN);
    const list = await (await fetch(`${server.admin}/api/deploys`, { headers: bearer() })).json();
    const id = (Array.isArray(list) ? list : list.deploys)[0].id;
    const record = await waitFor(async () => {
      const one = await (await fetch(`${server.admin}/api/deploys/${id}`, { headers: bearer() })).json();
      return (one.outbound ?? []).length === 2 ? one : undefined;
    }, "both outcomes in the record");
    const byTarget = Object.fromEntries(record.outbound.map((o: { target: string }) => [o.target, o]));
    expect(byTarget.gotify).toMatchObject({ kind: "notify", what: "failed", ok: true });
    expect(byTarget.telegram).toMatchObject({ kind: "notify", what: "failed", ok: false });
    expect(byTarget.telegram.detail).toStartWith("401 Unauthorized");
    if (!browser) return;
    // The deploy's page says it, in a real browser.
    await using context = await launchBrowser({ viewport: { width: 1300, height: 800 } });
    const page = await loggedIn(context, server.admin);
    await page.getByRole("link", { name: "Apps" }).waitFor();
    await page.goto(`${server.admin}/deploys/${id}`);
    const dl = page.locator("#content dl");
    await hasText(dl, (t) => t.includes("Notifications") && t.includes("gotify: sent (failed)"));
    await hasText(dl, (t) => t.includes("telegram: failed: 401 Unauthorized"));
    expect((await dl.textContent()) ?? "").not.toContain(TOKEN);
  });
});

describe("service notify test", () => {
  function serviceDir(notify: string): string {
    const dir = tempDir();
    writeFileSync(join(dir, "service.yaml"), `repoPath: ${makeLocalRepo()}\nsecret: ${SECRET}\nnotify:\n${notify}`);
    return dir;
  }

  test("sends a test message to each channel, prints each outcome, exits 1 when one failed", async () => {
    const gotify = fakeApi([200]);
    const teams = fakeApi([400]);
    const dir = serviceDir(
      `  - { format: gotify, url: "${gotify.url}", tokenFile: ${secretFile(tempDir(), "t", TOKEN)} }\n  - { format: teams, url: "${teams.url}/wf" }\n`,
    );
    const { code, stdout } = await runCli(["notify", "test"], { cwd: dir });
    expect(stdout).toMatch(/^notify entry 1 \(gotify to 127\.0\.0\.1:\d+\): sent: 200/m);
    expect(stdout).toMatch(/^notify entry 2 \(teams to 127\.0\.0\.1:\d+\): failed: 400/m);
    expect(code).toBe(1);
    expect(gotify.seen[0]!.json().message).toStartWith("Test notification: deploy FAILED");
    expect(teams.seen).toHaveLength(1);
  });

  test("a token file it cannot read: service check names it, and notify test sends nothing", async () => {
    const api = fakeApi([200]);
    const dir = serviceDir(`  - { format: gotify, url: "${api.url}", tokenFile: /nonexistent/gotify-token }\n`);
    const check = await runCli(["check"], { cwd: dir });
    expect(check.stdout).toContain("notify entry 1 (gotify): tokenFile: cannot read /nonexistent/gotify-token: ENOENT");
    expect(check.code).toBe(1);
    const sent = await runCli(["notify", "test"], { cwd: dir });
    expect(sent.code).toBe(1);
    expect(sent.stderr).toContain("tokenFile: cannot read /nonexistent/gotify-token");
    expect(api.seen).toHaveLength(0);
  });

  test("--format and --app choose the channels; an unknown one is an error, not a silent nothing", async () => {
    const gotify = fakeApi([200]);
    const teams = fakeApi([400]);
    const dir = serviceDir(
      `  - { format: gotify, url: "${gotify.url}", tokenFile: ${secretFile(tempDir(), "t", TOKEN)} }\n  - { format: teams, url: "${teams.url}/wf" }\n`,
    );
    const only = await runCli(["notify", "test", "--format", "gotify", "--app", "default"], { cwd: dir });
    expect(only.stdout.trim().split("\n")).toHaveLength(1);
    expect(only.code).toBe(0);
    expect(teams.seen).toHaveLength(0);
    const format = await runCli(["notify", "test", "--format", "irc"], { cwd: dir });
    expect(format.code).toBe(1);
    expect(format.stderr).toContain('unknown format "irc"');
    const app = await runCli(["notify", "test", "--app", "nope"], { cwd: dir });
    expect(app.code).toBe(1);
    expect(app.stderr).toContain('no app "nope"');
  });
});
