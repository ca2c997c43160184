/**
 * docs/watch.md: what the forge and the notifications are told of a watch. The commit status stays `pending`
 * ("Watching…") until the watch passes, so a second server whose gate pins it waits; a breach is a `failure` with
 * its value, and the notifications name it. Contract tests against a local server that takes the forge's calls.
 */
import { describe, expect, test } from "bun:test";
import { defaultConfig } from "../../src/config/schema-resolved.ts";
import type { NotifyTarget } from "../../src/config/schema-notify.ts";
import type { WatchSettings } from "../../src/config/watch.ts";
import { runDeploy } from "../../src/deploy/pipeline.ts";
import { OutboundCalls } from "../../src/notify/outbound.ts";
import { outboundSinks } from "../../src/notify/sink.ts";
import { baseEnv, makeRepo, tempDir } from "../_support/helpers.ts";
import { fakeApi } from "../_support/outbound-fixtures.ts";
import { outcomes } from "../_support/outbound-outcomes.ts";

const TOKEN = "forge-token-abcdef123456";
const calls = new OutboundCalls();

async function deploy(repoPath: string, watch: WatchSettings, apiUrl: string, notify: NotifyTarget[] = []) {
  const cwd = tempDir();
  const config = {
    ...defaultConfig(cwd),
    repoPath,
    runScript: "true",
    status: { provider: "github" as const, repo: "acme/web", apiUrl, token: TOKEN },
    notify,
    watch,
  };
  return runDeploy({
    id: crypto.randomUUID(),
    outbound: outboundSinks(calls),
    config,
    trigger: "cli",
    cwd,
    env: baseEnv(),
  });
}

const statuses = (api: ReturnType<typeof fakeApi>) =>
  api.seen
    .filter((s) => s.path.includes("/statuses/"))
    .map((s) => [s.json().state, s.json().description] as [string, string]);

describe("watch: statuses and notifications (docs/watch.md)", () => {
  test("the status stays pending (Watching…) until the watch passes, then success", async () => {
    const api = fakeApi([201]);
    const repo = makeRepo();
    repo.push({ "v2.txt": "2\n" });
    const result = await deploy(repo.clone, { forMs: 300, intervalMs: 100, failures: 2, command: "true" }, api.url);
    expect(result.ok).toBe(true);
    await outcomes(result.log.json, 3);
    const seen = statuses(api);
    expect(seen.slice(0, 2)).toEqual([
      ["pending", "Deploying…"],
      ["pending", "Watching…"],
    ]);
    expect(seen[2]![0]).toBe("success");
    expect(seen[2]![1]).toEndWith("; watch passed");
  });

  test("a breach rolled back: failure with the value; the notification names the breach", async () => {
    const api = fakeApi([201]);
    const hook = fakeApi([200]);
    const repo = makeRepo();
    const before = repo.head();
    repo.push({ "v2.txt": "2\n" });
    const result = await deploy(
      repo.clone,
      { forMs: 60_000, intervalMs: 100, failures: 2, command: "false" },
      api.url,
      [{ url: `${hook.url}/hook` }],
    );
    expect(result).toMatchObject({ ok: true, rolledBack: true, watch: { breach: true, value: 1, threshold: 0 } });
    await outcomes(result.log.json, 4);
    const final = statuses(api).at(-1)!;
    expect(final).toEqual(["failure", `Watch breached: exit code 1; rolled back to ${before.slice(0, 7)}`]);
    const payload = hook.seen[0]!.json();
    expect(payload).toMatchObject({ outcome: "rolled_back", watch: { breach: true, value: 1 } });
    expect(payload.error).toStartWith("watch breached: exit code 1 at ");
  });

  test("onBreach notify: outcome ok, the status a failure, and a notification to whoever wants failures", async () => {
    const api = fakeApi([201]);
    const hook = fakeApi([200]);
    const repo = makeRepo();
    const pushed = repo.push({ "v2.txt": "2\n" });
    const result = await deploy(
      repo.clone,
      { forMs: 60_000, intervalMs: 100, failures: 2, command: "false", onBreach: "notify" },
      api.url,
      [{ url: `${hook.url}/hook` }],
    );
    expect(result).toMatchObject({ ok: true, rolledBack: false, commit: { sha: pushed }, watch: { breach: true } });
    await outcomes(result.log.json, 4);
    expect(statuses(api).at(-1)).toEqual(["failure", "Watch breached: exit code 1; not rolled back"]);
    expect(hook.seen[0]!.json()).toMatchObject({ outcome: "succeeded", ok: true, watch: { breach: true, value: 1 } });
  });
});
