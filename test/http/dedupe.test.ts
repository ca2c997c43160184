/**
 * Duplicate deliveries (docs/forges.md "Duplicate deliveries"): with `dedupeDeliveries`, a delivery id an app
 * already deployed in the last 24 hours is answered 200 `[skipped] duplicate delivery …` and runs nothing, also
 * after a restart; checked only once the request is authenticated. Off by default: every authorized POST deploys.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DEDUPE_WINDOW_MS, DeliveryLog, MAX_DELIVERIES } from "../../src/http/dedupe.ts";
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
    expect(Object.keys(stored)).toEqual(["d-1", "d-2"]);
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
});

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
