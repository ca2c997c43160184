/**
 * Signed commits only, for every way a deploy starts (docs/security.md "Signed commits"): the webhook (with the
 * commit status and notification naming the commit and the reason), `service rollback`, polling, and what
 * `service check` says of the file and of HEAD. Real keys, the real CLI, a local API playing the forge.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createConsola } from "consola";
import { createServiceServer } from "../../src/server.ts";
import { defaultConfig } from "../../src/config/schema-resolved.ts";
import { listDeploys, readDeployRecord } from "../../src/history/read.ts";
import { readPollState } from "../../src/control/poll.ts";
import { git, lastLine, makeRepo, post, runCli, SECRET, startServer, tempDir, waitFor } from "../_support/helpers.ts";
import { fakeApi } from "../_support/outbound-fixtures.ts";
import { makeKeys, noSshKeygen, pushSigned, pushTag } from "../_support/signing.ts";
import { ADMIN_TOKEN, startAdmin } from "../_support/admin-helpers.ts";

const keys = noSshKeygen ? (undefined as never) : makeKeys();
const short = (commit: string) => commit.slice(0, 12);

/** A service directory deploying `clone`, its script leaving a mark in `marker`; `extra` is more YAML. */
function serviceDir(clone: string, extra = ""): { dir: string; marker: string } {
  const dir = tempDir("service-dir-");
  const marker = join(dir, "ran");
  writeFileSync(join(dir, "service.yaml"), `repoPath: ${clone}\nrunScript: echo ran >> ${marker}\n${extra}`);
  return { dir, marker };
}

describe.skipIf(noSshKeygen)('signed commits on every trigger (docs/security.md "Signed commits")', () => {
  test("webhook: an unsigned push is refused and its commit status and notification name the commit and the reason; a signed one deploys", async () => {
    const repo = makeRepo();
    const api = fakeApi([201]);
    const status = `status: { provider: github, apiUrl: "${api.url}", repo: acme/web, token: forge-token-0123456789 }`;
    const notify = `notify: [{ url: "${api.url}/notify", on: [refused, succeeded] }]`;
    const { dir, marker } = serviceDir(repo.clone, `${status}\n${notify}\n`);
    await using server = await startServer(dir, { SERVICE_SECRET: SECRET, SERVICE_ALLOWED_SIGNERS: keys.allowed });
    const before = repo.head();
    const unsigned = pushSigned(repo, null);
    const refused = await (await post(server.url, { secret: SECRET })).text();
    expect(refused).toContain(`[verify] commit ${short(unsigned)} refused: it is not signed; nothing runs`);
    expect(lastLine(refused)).toBe("[done] ok=false exitCode=null");
    expect(existsSync(marker)).toBe(false);
    expect(repo.head()).toBe(before);
    const failure = await waitFor(
      () => api.seen.find((seen) => seen.path.endsWith(`/statuses/${unsigned}`) && seen.json().state === "failure"),
      "the failure status of the refused commit",
    );
    expect(failure.json().description).toContain(`commit ${short(unsigned)} refused: it is not signed`);
    const notified = await waitFor(
      () => api.seen.find((seen) => seen.path === "/notify" && seen.json().outcome === "refused"),
      "the refused notification",
    );
    expect(notified.json()).toMatchObject({
      commit: { after: unsigned },
      error: `commit ${short(unsigned)} refused: it is not signed`,
    });

    const signed = pushSigned(repo, keys.alice);
    const deployed = await (await post(server.url, { secret: SECRET })).text();
    expect(deployed).toContain(`[verify] ${short(signed)} signed by alice@example.com`);
    expect(lastLine(deployed)).toBe("[done] ok=true exitCode=0");
    expect(existsSync(marker)).toBe(true);
  });

  test("service rollback: to an unsigned commit it is refused (exit 1, the clone unchanged); to a signed one it runs", async () => {
    const repo = makeRepo();
    const unsigned = repo.head();
    const signed = pushSigned(repo, keys.alice);
    const newest = pushSigned(repo, keys.alice);
    const { dir, marker } = serviceDir(repo.clone, `allowedSigners: ${keys.allowed}\n`);
    expect((await runCli(["deploy"], { cwd: dir })).code).toBe(0);
    const refused = await runCli(["rollback", unsigned], { cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain(`[verify] commit ${short(unsigned)} refused: it is not signed; nothing runs`);
    expect(repo.head()).toBe(newest);
    const back = await runCli(["rollback", signed], { cwd: dir });
    expect(back.code).toBe(0);
    expect(back.stdout).toContain(`[verify] ${short(signed)} signed by alice@example.com`);
    expect(repo.head()).toBe(signed);
    expect(existsSync(marker)).toBe(true);
  });

  test("service deploy --ref <tag> and the API: a lightweight tag is refused; an SSH-signed annotated tag deploys, the tag fetched and checked with its commit", async () => {
    const repo = makeRepo();
    const { dir, marker } = serviceDir(repo.clone, `allowedSigners: ${keys.allowed}\n`);
    const signed = pushSigned(repo, keys.alice);
    expect((await runCli(["deploy"], { cwd: dir })).code).toBe(0);
    // Tagged after the commit was deployed: the clone has the commit, not the tags.
    pushTag(repo, "v1.0-light", "light");
    pushTag(repo, "v1.0", keys.alice);
    const light = await runCli(["deploy", "--ref", "v1.0-light"], { cwd: dir });
    expect(light.code).toBe(1);
    expect(light.stdout).toContain(
      `[verify] commit ${short(signed)} refused: tag v1.0-light: it is a lightweight tag: only an annotated tag carries a signature; nothing runs`,
    );
    expect(readFileSync(marker, "utf8")).toBe("ran\n");
    const tag = await runCli(["deploy", "--ref", "v1.0"], { cwd: dir });
    expect(tag.code).toBe(0);
    // The deploy of the tag fetched it into the clone before the check (git describe names it there too).
    expect(git(repo.clone, "cat-file", "-t", "refs/tags/v1.0")).toBe("tag");
    expect(tag.stdout).toContain("[verify] tag v1.0 signed by alice@example.com");
    expect(tag.stdout).toContain(`[verify] ${short(signed)} signed by alice@example.com`);
    expect(readFileSync(marker, "utf8")).toBe("ran\nran\n");

    const { server, admin } = await startAdmin(dir, {});
    await using _server = server;
    const res = await fetch(`${admin}/api/apps/default/deploy`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ ref: "v1.0-light" }),
    });
    const { id } = (await res.json()) as { id: string };
    const record = await waitFor(() => {
      const found = listDeploys(dir).find((entry) => entry.id === id && entry.status === "refused");
      return found && readDeployRecord(found.jsonPath);
    }, "the API's deploy of the lightweight tag");
    expect((record.result as any).verify).toMatchObject({ ok: false, tag: { name: "v1.0-light", signer: null } });
    expect(readFileSync(marker, "utf8")).toBe("ran\nran\n");
  });

  test("service rollback <tag>: the tag is checked with its commit; a lightweight tag is refused, a signed one runs", async () => {
    const repo = makeRepo();
    const first = pushSigned(repo, keys.alice);
    pushTag(repo, "v1", keys.alice);
    pushTag(repo, "v1-light", "light");
    const newest = pushSigned(repo, keys.alice);
    const { dir } = serviceDir(repo.clone, `allowedSigners: ${keys.allowed}\n`);
    expect((await runCli(["deploy"], { cwd: dir })).code).toBe(0);
    const light = await runCli(["rollback", "v1-light"], { cwd: dir });
    expect(light.code).toBe(1);
    expect(light.stdout).toContain(`refused: tag v1-light: it is a lightweight tag`);
    expect(repo.head()).toBe(newest);
    const back = await runCli(["rollback", "v1"], { cwd: dir });
    expect(back.code).toBe(0);
    expect(back.stdout).toContain("[verify] tag v1 signed by alice@example.com");
    expect(repo.head()).toBe(first);
  });

  test("polling: an unsigned commit is refused once (not retried at every poll); a signed one pushed after it deploys", async () => {
    const repo = makeRepo();
    const logger = createConsola({ level: 0 });
    const server = createServiceServer(
      {
        ...defaultConfig(repo.clone),
        port: 0,
        hostname: "127.0.0.1",
        secret: SECRET,
        runScript: "true",
        pollIntervalMs: 5000,
        allowedSigners: keys.allowed,
      },
      { cwd: repo.clone, logger, pollEveryMs: 100 },
    );
    await server.start();
    try {
      await waitFor(() => readPollState(repo.clone, undefined)?.result === "unchanged", "a first poll");
      const unsigned = pushSigned(repo, null);
      // The refused commit's record is `refused` (docs/deploy-control.md "Outcomes and triggers"), the signed one's done.
      const done = () => listDeploys(repo.clone).filter((entry) => ["done", "refused"].includes(entry.status));
      const [first] = await waitFor(() => (done().length === 1 ? done() : undefined), "the poll's deploy");
      const record = readDeployRecord(first!.jsonPath)!;
      expect(record.trigger).toBe("poll");
      expect(record.status).toBe("refused");
      expect((record.result as any).verify).toMatchObject({ ok: false, commit: unsigned, reason: "it is not signed" });
      await waitFor(
        () => readPollState(repo.clone, undefined)?.result === "unchanged",
        "a poll that does not deploy the refused commit again",
      );
      expect(done().length).toBe(1);
      const signed = pushSigned(repo, keys.alice);
      await waitFor(() => done().length === 2, "the signed commit's deploy");
      expect(repo.head()).toBe(signed);
      expect(done()[0]!.ok).toBe(true);
    } finally {
      await server.stop();
    }
  });
});

describe.skipIf(noSshKeygen)('service check and the allowed signers (docs/security.md "Signed commits")', () => {
  test("check says whether the live commit and the one the next pull would bring would deploy, and names a missing file as a problem", async () => {
    const repo = makeRepo();
    const { dir } = serviceDir(repo.clone, `allowedSigners: ${keys.allowed}\n`);
    const unsigned = await runCli(["check"], { cwd: dir });
    expect(unsigned.stdout).toContain(
      `allowedSigners: the live commit ${short(repo.head())} would be refused: it is not signed`,
    );
    expect(unsigned.code).toBe(0);
    const signedCommit = pushSigned(repo, keys.alice);
    expect((await runCli(["deploy"], { cwd: dir })).code).toBe(0);
    const signed = await runCli(["check"], { cwd: dir });
    expect(signed.stdout).toContain(
      `allowedSigners: the live commit ${short(signedCommit)} would deploy: signed by alice@example.com`,
    );
    expect(signed.stdout).not.toContain("the next pull");
    // An unsigned commit fetched but not pulled yet: the next pull would bring it, and it would be refused.
    const next = pushSigned(repo, null, { "next.txt": "next\n" }, "unsigned");
    git(repo.clone, "fetch", "--quiet");
    const fetched = await runCli(["check"], { cwd: dir });
    expect(fetched.stdout).toContain(
      `allowedSigners: the next pull would bring ${short(next)} (the upstream branch as last fetched), which would be refused: it is not signed`,
    );
    const missing = join(dir, "nowhere");
    const gone = await runCli(["check"], { cwd: dir, env: { SERVICE_ALLOWED_SIGNERS: missing } });
    expect(gone.code).toBe(1);
    expect(gone.stdout).toContain(
      `the allowedSigners file ${missing} cannot be read (ENOENT): every deploy would be refused`,
    );
  });
});
