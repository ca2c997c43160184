/**
 * Two apps of a monorepo deployed from one clone (`paths` each): deliveries of one push to both at once each learn
 * the tip by a fetch into the clone's private ref; the fetches never collide, so neither app falls back to
 * deploying a push that did not touch it.
 */
import { expect, test } from "bun:test";
import { SECRET, makeRepo, startServer } from "../_support/helpers.ts";
import { deployRecords, postAs, writeServiceYaml } from "../_support/webhook-fixtures.ts";
import { MONOREPO, serviceDir } from "./_fixtures.ts";

test("deliveries of one push to two apps of one clone, at once, are each decided by their own paths", async () => {
  const repo = makeRepo(MONOREPO);
  const cwd = serviceDir();
  const app = (name: string) => ({
    name,
    host: `${name}.test`,
    path: "/hook",
    repoPath: repo.clone,
    runScript: `echo ${name}`,
    secret: SECRET,
    paths: [`apps/${name}/**`],
  });
  writeServiceYaml(cwd, { hostname: "127.0.0.1", apps: [app("web"), app("api")] });
  await using server = await startServer(cwd);
  const hook = (name: string) =>
    postAs(server.url, `${name}.test`, "/hook?format=json", { secret: SECRET }).then((res) => res.json());
  // Each app's first push deploys (nothing of it is live yet).
  expect((await hook("web")).ok).toBe(true);
  expect((await hook("api")).ok).toBe(true);
  for (let round = 1; round <= 6; round++) {
    repo.push({ "apps/web/index.ts": `web ${round}\n` }, `web ${round}`);
    const [web, api] = await Promise.all([hook("web"), hook("api")]);
    expect({ round, web: web.ok, api: api.skipped ?? false, reason: api.reason ?? api.error }).toMatchObject({
      round,
      web: true,
      api: true,
    });
  }
  expect(deployRecords(cwd).filter((r) => r.app === "api")).toHaveLength(1);
});
