/**
 * docs/install.md "What the working directory holds": what an upgrade keeps and an uninstall removes. A server
 * with the admin listener, polling and the duplicate-delivery check on deploys, is paused and stopped; every file it
 * left is in the docs' table.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, lastLine, makeRepo, post, runCli, waitFor } from "../_support/helpers.ts";
import { startAdmin } from "../_support/admin-helpers.ts";

const SECTION = "What the working directory holds";

/** The paths in the first column of the section's table. */
function documentedPaths(): string[] {
  const text = readFileSync(join(ROOT, "docs", "install.md"), "utf8");
  const start = text.indexOf(`## ${SECTION}\n`);
  expect(start).toBeGreaterThan(-1);
  const section = text.slice(start).split(/\n## /)[0]!;
  return section
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .flatMap((line) => [...line.split(" | ")[0]!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!));
}

describe(`the files a service leaves are the ones the docs list (docs/install.md "${SECTION}")`, () => {
  test("after a deploy, a poll, a pause and a stop, every file under the working directory is documented", async () => {
    const repo = makeRepo();
    const env = {
      SERVICE_RUN_SCRIPT: "echo deployed",
      SERVICE_POLL_INTERVAL_MS: "60000",
      SERVICE_DEDUPE_DELIVERIES: "1",
    };
    // The webhook secret and the admin token generated, as on a first start.
    const { server } = await startAdmin(repo.clone, {
      ...env,
      SERVICE_SECRET: undefined,
      SERVICE_ADMIN_TOKEN: undefined,
    });
    await using _server = server;
    const secret = readFileSync(join(repo.clone, ".service.secret"), "utf8").trim();
    repo.push({ "a.txt": "1\n" });
    const delivery = { "x-github-event": "push", "x-github-delivery": "delivery-1" };
    expect(lastLine(await (await post(server.url, { secret, headers: delivery })).text())).toBe(
      "[done] ok=true exitCode=0",
    );
    await waitFor(() => existsSync(join(repo.clone, ".service", "poll", "default.json")), "the first poll's state");
    expect(
      (await runCli(["pause", "--reason", "upgrade"], { cwd: repo.clone, env: { ...env, SERVICE_SECRET: secret } }))
        .code,
    ).toBe(0);
    await server.stop();

    const documented = documentedPaths();
    const left = [
      ...readdirSync(repo.clone).filter((name) => name.startsWith(".service") && name !== ".service"),
      ...readdirSync(join(repo.clone, ".service")).map((name) => `.service/${name}`),
      ...readdirSync(join(repo.clone, ".git"))
        .filter((name) => name.startsWith("service"))
        .map((name) => `<repoPath>/.git/${name}`),
    ];
    expect(left).toEqual(
      expect.arrayContaining([
        ".service.secret",
        ".service/admin.token",
        ".service/logs",
        ".service/paused",
        ".service/deliveries",
      ]),
    );
    const undocumented = left.filter(
      (path) => !documented.some((doc) => doc === path || doc.startsWith(`${path}/`) || doc === `${path}/`),
    );
    expect(undocumented).toEqual([]);
  });
});
