/**
 * One list of the secrets a deploy must not show (docs/security.md "What stays out of the output"), built the same
 * way for the server, `service deploy` and `service rollback`: the admin token, the status and notification
 * credentials, the webhook secret; and the forms in which the service sends a credential (HTTP Basic).
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultConfig } from "../../src/config/schema-resolved.ts";
import { runDeploy } from "../../src/deploy/pipeline.ts";
import { OutboundCalls } from "../../src/notify/outbound.ts";
import { outboundSinks } from "../../src/notify/sink.ts";
import {
  baseEnv,
  lastLine,
  makeRepo,
  post,
  readJson,
  runCli,
  SECRET,
  startServer,
  tempDir,
  waitFor,
} from "../_support/helpers.ts";
import { deployIdOf, logDirOf, stemOf } from "../_support/ops-helpers.ts";
import { fakeApi } from "../_support/outbound-fixtures.ts";

const ADMIN_TOKEN = "admin-token-0123456789abcdef";
const STATUS_TOKEN = "status-token-0123456789abcdef";
const HOOK_PATH = "/hook/T000/B000/notify-part-0123456789";
const BASIC = Buffer.from("hookuser:hook-password-0123").toString("base64");

/**
 * A service directory whose config has an admin token file, a status token file and a notification URL with an
 * Authorization header; its run script prints every one of them.
 */
function leakyService() {
  const repo = makeRepo();
  const api = fakeApi([201]);
  const dir = tempDir("service-dir-");
  mkdirSync(join(dir, ".service"), { mode: 0o700 });
  writeFileSync(join(dir, ".service", "admin.token"), `${ADMIN_TOKEN}\n`, { mode: 0o600 });
  const tokenFile = join(dir, "status.token");
  writeFileSync(tokenFile, `${STATUS_TOKEN}\n`, { mode: 0o600 });
  const script = join(dir, "leak.sh");
  writeFileSync(
    script,
    [
      `echo "admin: $(cat ${join(dir, ".service", "admin.token")})"`,
      `echo "status: $(cat ${tokenFile})"`,
      `echo "hook: ${api.url}${HOOK_PATH}"`,
      `echo "basic: ${BASIC}"`,
    ].join("\n"),
  );
  writeFileSync(
    join(dir, "service.yaml"),
    [
      `repoPath: ${repo.clone}`,
      `runScript: sh ${script}`,
      `status: { provider: github, apiUrl: "${api.url}", repo: acme/web, tokenFile: ${tokenFile} }`,
      `notify: [{ url: "${api.url}${HOOK_PATH}", headers: { Authorization: "Basic ${BASIC}" } }]`,
    ].join("\n"),
  );
  return { repo, dir };
}

const LEAKS = [ADMIN_TOKEN, STATUS_TOKEN, HOOK_PATH, BASIC];

/** The transcript, both log files and `service logs <id>` of a deploy: none may carry a secret. */
async function expectRedacted(dir: string, printed: string) {
  const id = deployIdOf(printed);
  const stem = stemOf(dir, id);
  const logs = await runCli(["logs", id.slice(0, 8)], { cwd: dir });
  const texts = {
    printed,
    log: readFileSync(join(logDirOf(dir), `${stem}.log`), "utf8"),
    json: readFileSync(join(logDirOf(dir), `${stem}.json`), "utf8"),
    logs: logs.stdout,
  };
  for (const [where, text] of Object.entries(texts))
    for (const leak of LEAKS) expect({ where, leaked: text.includes(leak) }).toEqual({ where, leaked: false });
  expect(printed).toContain("admin: ***");
  expect(printed).toContain("status: ***");
}

describe('one list of the secrets a deploy must not show (docs/security.md "What stays out of the output")', () => {
  test("service deploy and service rollback redact the admin token, the status token and the notification credentials", async () => {
    const { repo, dir } = leakyService();
    const deployed = await runCli(["deploy"], { cwd: dir });
    expect(lastLine(deployed.stdout)).toBe("[done] ok=true exitCode=0");
    await expectRedacted(dir, deployed.stdout);
    const rolled = await runCli(["rollback", repo.head()], { cwd: dir });
    expect(lastLine(rolled.stdout)).toBe("[done] ok=true exitCode=0");
    await expectRedacted(dir, rolled.stdout);
  });

  test("the server redacts the same list (no admin listener needed for its token file)", async () => {
    const { dir } = leakyService();
    await using server = await startServer(dir, { SERVICE_SECRET: SECRET });
    const streamed = await (await post(server.url, { secret: SECRET })).text();
    expect(lastLine(streamed)).toBe("[done] ok=true exitCode=0");
    await expectRedacted(dir, streamed);
  });
});

describe('credentials in the forms they are sent (docs/security.md "What stays out of the output")', () => {
  test("Bitbucket's user:app-password echoed back base64-encoded by the API is *** in the .log and the .json", async () => {
    const token = "deploy-bot:app-password-0123456789";
    const encoded = Buffer.from(token).toString("base64");
    const api = fakeApi([401]);
    api.errorBody = `{"error":"denied","request":{"headers":{"Authorization":"Basic ${encoded}"}}}`;
    const repo = makeRepo();
    const cwd = tempDir();
    const result = await runDeploy({
      id: crypto.randomUUID(),
      outbound: outboundSinks(new OutboundCalls()),
      config: {
        ...defaultConfig(cwd),
        repoPath: repo.clone,
        runScript: "true",
        status: { provider: "bitbucket", apiUrl: api.url, repo: "acme/web", token },
      },
      trigger: "cli",
      cwd,
      env: baseEnv(),
    });
    const outcomes = await waitFor(() => {
      const list = readJson(result.log.json).outbound ?? [];
      return list.length >= 2 ? list : undefined;
    }, "both status outcomes");
    expect(api.seen[0]!.headers.authorization).toBe(`Basic ${encoded}`);
    expect(outcomes[0].detail).toContain('"Authorization":"Basic ***"');
    for (const text of [readFileSync(result.log.log, "utf8"), readFileSync(result.log.json, "utf8")]) {
      expect(text).not.toContain(encoded);
      expect(text).not.toContain(token);
    }
  });
});
