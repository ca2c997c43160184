/**
 * Duplicate deliveries (docs/forges.md "Duplicate deliveries"): with `dedupeDeliveries`, a delivery id an app
 * already deployed in the last 24 hours is answered 200 `[skipped] duplicate delivery …` and runs nothing, also
 * after a restart; checked only once the request is authenticated. Off by default: every authorized POST deploys.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEDUPE_WINDOW_MS, DeliveryLog, deliveryKey, MAX_DELIVERIES, MAX_STORE_BYTES } from "../../src/http/dedupe.ts";
import { makeRepo, post, SECRET, startServer, tempDir } from "../_support/helpers.ts";
import {
  bitbucketHeaders,
  bitbucketPush,
  deployRecords,
  githubHeaders,
  githubPush,
  gitlabHeaders,
  gitlabPush,
  hmacHex,
  writeServiceYaml,
} from "../_support/webhook-fixtures.ts";

const body = JSON.stringify(githubPush());
/** GitHub's delivery, signed, with the delivery id `delivery`. */
const github = (delivery: string, secret = SECRET) => ({
  headers: {
    ...githubHeaders(),
    "x-github-delivery": delivery,
    "x-hub-signature-256": `sha256=${hmacHex(secret, body)}`,
  },
  body,
});

describe('duplicate deliveries (docs/forges.md "Duplicate deliveries")', () => {
  test("a GitHub delivery sent again, before and after a restart, is answered [skipped] naming the deploy that served it; another id deploys; a wrong signature is 401 first", async () => {
    const repo = makeRepo();
    writeServiceYaml(repo.clone, { dedupeDeliveries: true, runScript: "true" });
    const env = { SERVICE_SECRET: SECRET };
    let firstId: string;
    {
      await using server = await startServer(repo.clone, env);
      const first = await (await post(`${server.url}/?format=json`, github("d-1"))).json();
      expect(first.ok).toBe(true);
      firstId = first.id;
      const again = await post(server.url, github("d-1"));
      expect(again.status).toBe(200);
      expect(await again.text()).toBe(`[skipped] duplicate delivery d-1: deploy ${firstId} (ok)\n`);
      // Authentication comes first: a copy without the right signature is refused, not answered "duplicate".
      expect((await post(server.url, github("d-1", "not-the-secret-0000"))).status).toBe(401);
    }
    await using server = await startServer(repo.clone, env);
    const json = await (await post(`${server.url}/?format=json`, github("d-1"))).json();
    expect(json).toMatchObject({
      skipped: true,
      ok: true,
      event: "push",
      delivery: "d-1",
      duplicateOf: firstId,
      state: "ok",
      message: `duplicate delivery d-1: deploy ${firstId} (ok)`,
    });
    expect((await (await post(`${server.url}/?format=json`, github("d-2"))).json()).ok).toBe(true);
    expect(deployRecords(repo.clone).map((r) => r.delivery)).toEqual(["d-1", "d-2"]);
    const stored = JSON.parse(readFileSync(join(repo.clone, ".service", "deliveries", "default.json"), "utf8"));
    expect(Object.keys(stored)).toEqual([deliveryKey("d-1"), deliveryKey("d-2")]);
  });

  test("GitLab and Bitbucket delivery ids too (SERVICE_DEDUPE_DELIVERIES); without the key the same delivery deploys twice", async () => {
    const repo = makeRepo();
    {
      await using server = await startServer(repo.clone, {
        SERVICE_SECRET: SECRET,
        SERVICE_RUN_SCRIPT: "true",
        SERVICE_DEDUPE_DELIVERIES: "1",
      });
      const gitlab = { headers: { ...gitlabHeaders(), "x-gitlab-token": SECRET }, body: JSON.stringify(gitlabPush()) };
      const bitbucket = {
        headers: { ...bitbucketHeaders(), "x-service-secret": SECRET },
        body: JSON.stringify(bitbucketPush()),
      };
      for (const delivery of [gitlab, bitbucket]) {
        expect((await (await post(`${server.url}/?format=json`, delivery)).json()).ok).toBe(true);
        expect(await (await post(server.url, delivery)).text()).toStartWith("[skipped] duplicate delivery ");
      }
      expect(deployRecords(repo.clone)).toHaveLength(2);
    }
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "true" });
    for (let i = 0; i < 2; i++)
      expect((await (await post(`${server.url}/?format=json`, github("d-9"))).json()).ok).toBe(true);
    expect(deployRecords(repo.clone)).toHaveLength(4);
  });

  test("two long delivery ids that differ only at their end are two deliveries: both deploy, and the store keeps their hashes", async () => {
    const repo = makeRepo();
    writeServiceYaml(repo.clone, { dedupeDeliveries: true, runScript: "true" });
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET });
    const long = "x".repeat(300);
    for (const delivery of [`${long}-a`, `${long}-b`])
      expect((await (await post(`${server.url}/?format=json`, github(delivery))).json()).ok).toBe(true);
    expect(await (await post(server.url, github(`${long}-b`))).text()).toStartWith("[skipped] duplicate delivery ");
    expect(deployRecords(repo.clone)).toHaveLength(2);
    const stored = readFileSync(join(repo.clone, ".service", "deliveries", "default.json"), "utf8");
    expect(Object.keys(JSON.parse(stored))).toEqual([deliveryKey(`${long}-a`), deliveryKey(`${long}-b`)]);
    expect(stored).not.toContain(long);
  });

  test("a store file over the cap: the next delivery reads only its last part, keeps the newest entries that fit, and says so", async () => {
    const repo = makeRepo();
    writeServiceYaml(repo.clone, { dedupeDeliveries: true, runScript: "true" });
    const dir = join(repo.clone, ".service", "deliveries");
    mkdirSync(dir, { recursive: true });
    // About 25 MB of entries, oldest first as the service writes them, all within the window.
    const count = 200_000;
    const now = Date.now();
    const entries: string[] = [];
    for (let i = 0; i < count; i++)
      entries.push(`${JSON.stringify(deliveryKey(`old-${i}`))}:{"deploy":"${"0".repeat(36)}","at":${now - count + i}}`);
    const file = join(dir, "default.json");
    writeFileSync(file, `{${entries.join(",")}}\n`);
    expect(statSync(file).size).toBeGreaterThan(20 * MAX_STORE_BYTES);
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET });
    const readBefore = bytesRead(server.proc.pid);
    expect((await (await post(`${server.url}/?format=json`, github("new-1"))).json()).ok).toBe(true);
    expect(bytesRead(server.proc.pid) - readBefore).toBeLessThan(4 * MAX_STORE_BYTES);
    expect(server.stdout.text + server.stderr.text).toMatch(
      /the delivery ids of app "default" \(.*default\.json, \d+ MB\) are more than the 1 MiB read: kept the newest 1000, forgot the older ones/,
    );
    // The newest entry is still a duplicate; the oldest is forgotten and deploys.
    expect(await (await post(server.url, github(`old-${count - 1}`))).text()).toStartWith(
      `[skipped] duplicate delivery old-${count - 1}: `,
    );
    expect((await (await post(`${server.url}/?format=json`, github("old-0"))).json()).ok).toBe(true);
    expect(statSync(file).size).toBeLessThan(MAX_STORE_BYTES);
    expect(Object.keys(JSON.parse(readFileSync(file, "utf8")))).toHaveLength(MAX_DELIVERIES);
  });
});

/** Bytes the process `pid` has read so far (files and pipes), from /proc/<pid>/io. */
function bytesRead(pid: number): number {
  return Number(/^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"))![1]);
}

describe("the delivery ids kept", () => {
  const quiet = { warn() {}, info() {}, error() {} } as never;

  test(`at most ${MAX_DELIVERIES} per app, the oldest forgotten first; none older than 24 hours; per app`, () => {
    const cwd = tempDir();
    const log = new DeliveryLog(cwd, quiet);
    const start = Date.now();
    for (let i = 0; i <= MAX_DELIVERIES; i++) log.remember("web", `d-${i}`, `deploy-${i}`, start + i);
    const stored = new DeliveryLog(cwd, quiet);
    expect(stored.seen("web", "d-0", start + MAX_DELIVERIES)).toBeUndefined();
    expect(stored.seen("web", "d-1", start + MAX_DELIVERIES)?.deploy).toBe("deploy-1");
    expect(stored.seen("api", "d-1", start + MAX_DELIVERIES)).toBeUndefined();
    const file = JSON.parse(readFileSync(join(cwd, ".service", "deliveries", "web.json"), "utf8"));
    expect(Object.keys(file)).toHaveLength(MAX_DELIVERIES);
    expect(stored.seen("web", "d-5", start + 5 + DEDUPE_WINDOW_MS)).toBeUndefined();
    expect(stored.seen("web", `d-${MAX_DELIVERIES}`, start + 5 + DEDUPE_WINDOW_MS)?.deploy).toBe(
      `deploy-${MAX_DELIVERIES}`,
    );
  });
});
