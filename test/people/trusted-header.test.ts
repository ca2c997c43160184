/**
 * docs/admin.md "A header from a trusted proxy": `adminTrustedHeader` believes the user a proxy names only from an
 * address in `from` that sends the proxy's secret; any other request naming someone is refused 401 and counted like
 * a wrong token; the role comes from the groups header through `roles`; the secret stays out of every output and of
 * the run script's environment, and a run script that forges the headers is refused.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startAdmin } from "../_support/admin-helpers.ts";
import { hasEnded, makeRepo, tempDir, waitFor } from "../_support/helpers.ts";
import { writeToken } from "../_support/token-fixtures.ts";

const PROXY_SECRET = "proxy-secret-0123456789abcdef";

/** A service whose admin listener believes a proxy on `from`; its run script is `runScript`. */
function proxySetup(from: string, runScript = "true") {
  const cwd = tempDir("service-proxy-");
  const secretFile = join(tempDir("service-proxy-secret-"), "proxy");
  writeToken(secretFile, PROXY_SECRET);
  const repo = makeRepo();
  writeFileSync(
    join(cwd, "service.yaml"),
    [
      `repoPath: ${repo.clone}`,
      `runScript: ${JSON.stringify(runScript)}`,
      "adminTrustedHeader:",
      "  header: Remote-User",
      "  groupsHeader: Remote-Groups",
      `  from: [${from}]`,
      `  secretFile: ${secretFile}`,
      "  roles: { admin: [ops], deploy: { default: [web-team] }, read: [engineering] }",
      "",
    ].join("\n"),
  );
  return { cwd, secretFile };
}

/** The proxy's headers naming `user`; `secret: null` sends none. */
const as = (user: string, groups: string, secret: string | null = PROXY_SECRET) => ({
  "remote-user": user,
  "remote-groups": groups,
  ...(secret === null ? {} : { "x-service-proxy-secret": secret }),
});

describe("adminTrustedHeader: the user a trusted proxy names", () => {
  test("from its address with its secret: the role its groups give; no matching group: 403 naming the user", async () => {
    const { cwd } = proxySetup("127.0.0.1/32");
    await using server = await startAdmin(cwd);
    const whoami = async (headers: Record<string, string>) => {
      const res = await fetch(`${server.admin}/api/whoami`, { headers });
      return { status: res.status, body: await res.json() };
    };
    expect(await whoami(as("alice", "engineering, ops"))).toEqual({
      status: 200,
      body: { name: "proxy:alice", role: "admin", apps: null },
    });
    expect(await whoami(as("bob", "web-team,engineering"))).toEqual({
      status: 200,
      body: { name: "proxy:bob", role: "deploy", apps: ["default"] },
    });
    expect(await whoami(as("carol", "engineering"))).toEqual({
      status: 200,
      body: { name: "proxy:carol", role: "read", apps: null },
    });
    const none = await whoami(as("dave", "sales"));
    expect(none.status).toBe(403);
    expect(none.body.message).toBe("signed in as dave, who has no role here");
    // A read user may not deploy: the scope's refusal names the person.
    const refused = await fetch(`${server.admin}/api/apps/default/deploy`, {
      method: "POST",
      headers: as("carol", "engineering"),
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toBe("proxy:carol (read) may not deploy");
    // What an admin does is recorded under the proxy's user.
    const deployed = await fetch(`${server.admin}/api/apps/default/deploy`, {
      method: "POST",
      headers: as("alice", "ops"),
    });
    const { id } = (await deployed.json()) as { id: string };
    const record = await waitFor(async () => {
      const res = await fetch(`${server.admin}/api/deploys/${id}`, { headers: as("alice", "ops") });
      const body = (await res.json()) as { status: string; actor: string };
      return hasEnded(body.status) ? body : undefined;
    }, "the deploy's end");
    expect(record.actor).toBe("proxy:alice@127.0.0.1");
  });

  test("a wrong or missing secret, or an address outside `from`: 401, counted like a wrong token (then 429)", async () => {
    const { cwd } = proxySetup("127.0.0.1/32");
    await using server = await startAdmin(cwd);
    for (const secret of [null, "wrong-secret-0123456789abcdef"]) {
      const res = await fetch(`${server.admin}/api/whoami`, { headers: as("alice", "ops", secret) });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { message: string }).message).toContain("trusted proxy");
    }
    // A page too: the user named without the secret is no one.
    expect((await fetch(`${server.admin}/`, { headers: as("alice", "ops", null) })).status).toBe(401);
    let status = 0;
    for (let i = 0; i < 40 && status !== 429; i++)
      status = (await fetch(`${server.admin}/api/whoami`, { headers: as("alice", "ops", "x") })).status;
    expect(status).toBe(429);

    const elsewhere = proxySetup("10.0.0.0/8");
    await using other = await startAdmin(elsewhere.cwd);
    const res = await fetch(`${other.admin}/api/whoami`, { headers: as("alice", "ops") });
    expect(res.status).toBe(401);
  });

  test("a run script that calls the admin listener with forged headers gets 401; the secret is not in its environment and is masked in its output", async () => {
    const probe = join(tempDir("service-probe-"), "probe.mjs");
    const urlFile = join(tempDir("service-probe-url-"), "admin-url");
    const { cwd, secretFile } = proxySetup("127.0.0.1/32", `node ${probe}`);
    writeFileSync(
      probe,
      [
        'import { readFileSync } from "node:fs";',
        `const admin = readFileSync(${JSON.stringify(urlFile)}, "utf8").trim();`,
        `const secret = readFileSync(${JSON.stringify(secretFile)}, "utf8").split("\\n")[0];`,
        'const res = await fetch(`${admin}/api/apps/default/pause`, { method: "POST", headers: { "remote-user": "root", "remote-groups": "ops" } });',
        "console.log(`forged: ${res.status}`);",
        "console.log(`in env: ${Object.values(process.env).some((v) => v?.includes(secret))}`);",
        "console.log(`the secret: ${secret}`);",
      ].join("\n"),
    );
    await using server = await startAdmin(cwd);
    writeFileSync(urlFile, server.admin);
    const deployed = await fetch(`${server.admin}/api/apps/default/deploy`, {
      method: "POST",
      headers: as("alice", "ops"),
    });
    const { id } = (await deployed.json()) as { id: string };
    const log = await waitFor(async () => {
      const res = await fetch(`${server.admin}/api/deploys/${id}/log?follow=1`, { headers: as("alice", "ops") });
      const text = await res.text();
      return text.includes("[done]") && text;
    }, "the deploy's log");
    expect(log).toContain("forged: 401");
    expect(log).toContain("in env: false");
    expect(log).toContain("the secret: ***");
    expect(log).not.toContain(PROXY_SECRET);
    // Nothing was paused by the forged request.
    const apps = await fetch(`${server.admin}/api/apps`, { headers: as("alice", "ops") });
    expect(((await apps.json()) as { apps: { paused: unknown }[] }).apps[0]!.paused).toBe(false);
  });
});
