/**
 * docs/gates.md "Rolling out to several servers": two services on loopback against one forge. A (the canary)
 * deploys and reports its own status `deploy/web-1`; B, gated on it (pinned to A's login) with a bake time,
 * deploys only after A succeeded and the bake passed; when A fails, B refuses that commit.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { StreamReader } from "../_support/gate.ts";
import { githubChecks, OWNER_REPO } from "../_support/github-checks.ts";
import { git, lastLine, makeRepo, post, SECRET, startServer, tempDir, waitFor } from "../_support/helpers.ts";
import { deployRecords } from "../_support/webhook-fixtures.ts";

const TOKENS = { "token-of-web-1-0123456789": "web-1-bot", "token-of-web-2-0123456789": "web-2-bot" };

/** One server of the fleet: its own clone of the remote, its own directory, its own status context and token. */
function server(remote: string, apiUrl: string, name: string, token: string, gate: string[]) {
  const cwd = tempDir(`service-${name}-`);
  const clone = join(cwd, "app");
  git(cwd, "clone", "--quiet", remote, clone);
  writeFileSync(
    join(cwd, "service.yaml"),
    [
      `repoPath: ${clone}`,
      // A commit carrying broken.txt fails to deploy.
      "runScript: test ! -f broken.txt",
      "status:",
      "  provider: github",
      `  repo: ${OWNER_REPO}`,
      `  apiUrl: ${apiUrl}`,
      `  context: deploy/${name}`,
      ...gate,
      "",
    ].join("\n"),
  );
  const env = { SERVICE_SECRET: SECRET, SERVICE_STATUS_TOKEN: token, SERVICE_HOSTNAME: "127.0.0.1" };
  return { cwd, clone, env, head: () => git(clone, "rev-parse", "HEAD") };
}

describe("a staged rollout across two servers", () => {
  test("B deploys a commit only after A reported success on it and the bake passed; when A fails, B refuses it", async () => {
    const repo = makeRepo();
    const forge = githubChecks(TOKENS);
    const [tokenA, tokenB] = Object.keys(TOKENS) as [string, string];
    const a = server(repo.remote, forge.url, "web-1", tokenA, []);
    const b = server(repo.remote, forge.url, "web-2", tokenB, [
      "gate:",
      "  checks: [{ name: deploy/web-1, by: web-1-bot }]",
      "  bakeMs: 1000",
    ]);
    await using serverA = await startServer(a.cwd, a.env);
    await using serverB = await startServer(b.cwd, b.env);

    const good = repo.push({ "a.txt": "1" });
    // A status of the canary's name written by someone else is not the canary's.
    forge.status(good, "deploy/web-1", "success", "ci-bot");
    const streamB = new StreamReader(await post(`${serverB.url}/`, { secret: SECRET }));
    await waitFor(() => streamB.text.includes("[gate] waiting for deploy/web-1"), "B waiting for A").catch((e) => {
      console.log(streamB.text);
      throw e;
    });
    const textA = await (await post(`${serverA.url}/`, { secret: SECRET })).text();
    expect(lastLine(textA)).toBe("[done] ok=true exitCode=0");
    await waitFor(
      () => forge.written.some((w) => w.sha === good && w.by === "web-1-bot" && w.state === "success"),
      "A's status",
    );
    expect(b.head()).not.toBe(good);
    await streamB.done;
    expect(streamB.text).toMatch(/\[gate\] deploy\/web-1 by web-1-bot success on [0-9a-f]{12}; baked 1 s/);
    expect(lastLine(streamB.text)).toBe("[done] ok=true exitCode=0");
    expect(b.head()).toBe(good);
    const gated = deployRecords(b.cwd).at(-1).result.gate;
    expect(gated).toMatchObject({ ok: true, outcome: "open", commit: good, bakedMs: 1000 });
    // B reported its own status, which nothing gates on here.
    await waitFor(
      () => forge.written.some((w) => w.sha === good && w.by === "web-2-bot" && w.state === "success"),
      "B's status",
    );

    const bad = repo.push({ "broken.txt": "x" });
    const failingB = new StreamReader(await post(`${serverB.url}/`, { secret: SECRET }));
    await waitFor(
      () => failingB.text.includes("[gate] waiting for deploy/web-1 by web-1-bot (missing)"),
      "B waiting again",
    );
    const failedA = await (await post(`${serverA.url}/`, { secret: SECRET })).text();
    expect(lastLine(failedA)).toBe("[done] ok=false exitCode=1");
    await failingB.done;
    expect(failingB.text).toContain("[gate] shut: deploy/web-1 by web-1-bot failure");
    expect(lastLine(failingB.text)).toBe("[done] ok=false exitCode=null");
    expect(b.head()).toBe(good);
    expect(deployRecords(b.cwd).at(-1).result.gate).toMatchObject({ ok: false, outcome: "shut", commit: bad });
    expect(forge.refused).toEqual([]);
  });
});
