/**
 * A delivery sent again (docs/forges.md "Duplicate deliveries"): with `dedupeDeliveries`, a copy is skipped while
 * the deploy that served the delivery waits or runs, or when it ended ok or failed by its script; a delivery whose
 * deploy was cancelled, interrupted or refused before it ran deploys again, so "Redeliver" can retry it.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeGate } from "../_support/gate.ts";
import { makeRepo, post, runCli, SECRET, startServer, tempDir, waitFor } from "../_support/helpers.ts";
import {
  atCommit,
  deployRecords,
  githubHeaders,
  githubPush,
  hmacHex,
  writeServiceYaml,
} from "../_support/webhook-fixtures.ts";

/** GitHub's push delivery `delivery`, signed; `commit` is the pushed commit (by default one no repository has). */
function github(delivery: string, commit?: string) {
  const body = JSON.stringify(commit ? atCommit(githubPush(), commit) : githubPush());
  return {
    headers: {
      ...githubHeaders(),
      "x-github-delivery": delivery,
      "x-hub-signature-256": `sha256=${hmacHex(SECRET, body)}`,
    },
    body,
  };
}

/** The records of the deploys that served `delivery`, oldest first. */
const servedBy = (cwd: string, delivery: string) => deployRecords(cwd).filter((r) => r.delivery === delivery);

describe('a delivery sent again (docs/forges.md "Duplicate deliveries")', () => {
  test("deploys again when its deploy was refused before it ran (its variables, the pushed commit); is skipped when that deploy ended ok or failed by its script", async () => {
    const repo = makeRepo();
    const dir = tempDir("service-dir-");
    const envFile = join(dir, "app.env");
    const code = join(dir, "exit-code");
    writeFileSync(code, "0");
    writeServiceYaml(repo.clone, {
      dedupeDeliveries: true,
      branch: "main",
      envFile,
      runScript: `sh -c 'exit $(cat ${code})'`,
    });
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET });
    const head = repo.head();
    const deliver = async (delivery: string, commit?: string) =>
      (await post(`${server.url}/?format=json`, github(delivery, commit))).json();

    // Its variables cannot be read: refused before the pull, twice; once the file exists, it deploys.
    for (let i = 0; i < 2; i++)
      expect((await deliver("v-1", head)).error).toStartWith("the deploy's variables cannot be read");
    writeFileSync(envFile, "API_KEY=api-key-0123456789\n", { mode: 0o600 });
    const ok = await deliver("v-1", head);
    expect(ok.ok).toBe(true);
    expect(await deliver("v-1", head)).toMatchObject({ skipped: true, duplicateOf: ok.id, state: "ok" });
    expect(servedBy(repo.clone, "v-1").map((r) => r.result.ok)).toEqual([false, false, true]);

    // The pushed commit is not what was pulled: nothing ran, so a redelivery deploys (and is refused) again.
    for (let i = 0; i < 2; i++) expect((await deliver("p-1")).error).toContain("nothing was run");
    expect(servedBy(repo.clone, "p-1")).toHaveLength(2);

    // Its script ran and failed: a redelivery is a duplicate.
    writeFileSync(code, "3");
    const failed = await deliver("s-1", head);
    expect(failed).toMatchObject({ ok: false, run: { exitCode: 3 } });
    expect(await deliver("s-1", head)).toMatchObject({ skipped: true, duplicateOf: failed.id, state: "failed" });
    expect(servedBy(repo.clone, "s-1")).toHaveLength(1);
  });

  test("is skipped while its deploy runs; deploys again once that deploy was cancelled, or interrupted by a crash of the service", async () => {
    const repo = makeRepo();
    const gate = makeGate();
    const env = {
      SERVICE_SECRET: SECRET,
      SERVICE_DEDUPE_DELIVERIES: "1",
      SERVICE_RUN_SCRIPT: gate.script,
      ...gate.env,
    };
    const statusOf = (id: string) => deployRecords(repo.clone).find((r) => r.id === id)?.status;
    const acknowledged = async (url: string): Promise<string> => {
      const { id } = await (await post(`${url}/?ack=1&format=json`, github("c-1"))).json();
      await waitFor(() => gate.starts().includes(id), "the deploy's script to start");
      return id;
    };
    let interrupted: string;
    {
      await using server = await startServer(repo.clone, env);
      const first = await acknowledged(server.url);
      expect(await (await post(server.url, github("c-1"))).text()).toBe(
        `[skipped] duplicate delivery c-1: deploy ${first} (running)\n`,
      );
      expect((await runCli(["cancel", first], { cwd: repo.clone, env })).code).toBe(0);
      await waitFor(() => statusOf(first) === "cancelled", "the cancel");
      interrupted = await acknowledged(server.url);
      expect(interrupted).not.toBe(first);
      server.proc.kill("SIGKILL");
      await server.proc.exited;
    }
    gate.open();
    await using server = await startServer(repo.clone, env);
    await waitFor(() => statusOf(interrupted) === "interrupted", "the restart to mark the deploy interrupted");
    const again = await (await post(`${server.url}/?format=json`, github("c-1"))).json();
    expect(again.ok).toBe(true);
    expect(await (await post(server.url, github("c-1"))).text()).toBe(
      `[skipped] duplicate delivery c-1: deploy ${again.id} (ok)\n`,
    );
    expect(deployRecords(repo.clone).filter((r) => r.delivery === "c-1")).toHaveLength(3);
  });
});
