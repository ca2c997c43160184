/**
 * docs/agents.md: `POST /mcp` on the admin listener (`adminMcp`), driven by the MCP SDK's own client over HTTP: a read
 * token lists and reads logs and sees no write tool; a deploy token deploys its app only, another app refused; an
 * agent follows a deploy to its end; every call is in the audit trail; GET and DELETE are 405; no token, 401.
 */
import { describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { FAILURE_BURST } from "../../src/http/throttle.ts";
import { startAdmin } from "../_support/admin-helpers.ts";
import { waitFor } from "../_support/helpers.ts";
import { standardTokens, TOKEN_VALUES, tokenSetup } from "../_support/token-fixtures.ts";
import { readAudit } from "../../src/audit/read.ts";
import { auditDir } from "../../src/audit/trail.ts";

type Result = { content: { type: string; text: string }[]; isError?: boolean };

/** An MCP client of `admin`'s endpoint with `token`; `await using` closes it. */
async function agent(admin: string, token: string) {
  const client = new Client({ name: "test-agent", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${admin}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as Result;
  const tools = async () => (await client.listTools()).tools.map((tool) => tool.name).sort();
  return Object.assign(client, { call, tools, [Symbol.asyncDispose]: () => client.close() });
}

const READ_TOOLS = ["app_status", "get_deploy", "get_deploy_log", "list_apps", "list_deploys"];

async function mcpServer(mode: string) {
  const setup = tokenSetup();
  setup.config(standardTokens(setup.file), [`adminMcp: ${mode}`]);
  const server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
  return Object.assign(server, { cwd: setup.cwd });
}

describe("the MCP endpoint (docs/agents.md)", () => {
  test("a read token lists the apps and reads a deploy's log, and is offered no write tool", async () => {
    await using server = await mcpServer("write");
    // A deploy to read, asked through the API by the admin.
    const asked = await fetch(`${server.admin}/api/apps/web/deploy`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN_VALUES.ops}` },
    });
    const { id } = (await asked.json()) as { id: string };
    await using reader = await agent(server.admin, TOKEN_VALUES.grafana);
    expect(await reader.tools()).toEqual(READ_TOOLS);
    const apps = JSON.parse((await reader.call("list_apps")).content[0]!.text) as { apps: { name: string }[] };
    expect(apps.apps.map((a) => a.name)).toEqual(["web", "api"]);
    const status = JSON.parse((await reader.call("app_status", { app: "api" })).content[0]!.text);
    expect(status.name).toBe("api");
    const log = await waitFor(async () => {
      const found = await reader.call("get_deploy_log", { id, lines: 5 });
      return found.content[0]!.text.includes("[done]") ? found : undefined;
    }, "the deploy's log to end");
    expect(log.isError).toBeUndefined();
    expect(log.content[0]!.text.trim().split("\n").length).toBeLessThanOrEqual(6);
    // A write tool it was not offered is refused all the same.
    const refused = await reader.call("deploy", { app: "web" });
    expect(refused.isError).toBe(true);
    const lines = readAudit(auditDir(server.cwd)).filter((l) => l.via === "mcp");
    expect(lines.map((l) => [l.actor, l.action, l.target])).toContainEqual([
      "token:grafana",
      "mcp tool",
      "get_deploy_log",
    ]);
  }, 60_000);

  test("a deploy token deploys its app only, and its agent follows the deploy to its end", async () => {
    await using server = await mcpServer("write");
    await using ci = await agent(server.admin, TOKEN_VALUES["ci-web"]);
    expect(await ci.tools()).toEqual([...READ_TOOLS, "cancel", "deploy", "rollback"].sort());
    const other = await ci.call("deploy", { app: "api" });
    expect(other.isError).toBe(true);
    expect(other.content[0]!.text).toContain('may not deploy app \\"api\\"');
    const started = await ci.call("deploy", { app: "web" });
    expect(started.isError).toBeUndefined();
    const { id } = JSON.parse(started.content[0]!.text) as { id: string };
    const record = await waitFor(async () => {
      const got = JSON.parse((await ci.call("get_deploy", { id })).content[0]!.text) as {
        status?: string;
        result?: { ok: boolean };
      };
      return got.status === "done" ? got : undefined;
    }, "the deploy to end");
    expect(record.result?.ok).toBe(true);
    const lines = readAudit(auditDir(server.cwd)).filter((l) => l.action === "deploy asked");
    expect(lines.map((l) => [l.actor, l.app, l.outcome, l.via])).toEqual([
      ["token:ci-web", "api", "refused", "mcp"],
      ["token:ci-web", "web", "ok", "mcp"],
    ]);
    // An admin token's agent is offered pause and resume too.
    await using ops = await agent(server.admin, TOKEN_VALUES.ops);
    expect(await ops.tools()).toEqual([...READ_TOOLS, "cancel", "deploy", "pause", "resume", "rollback"].sort());
  }, 60_000);

  test("adminMcp read offers no write tool to any token; GET and DELETE are 405; no token 401; unset: 404", async () => {
    await using server = await mcpServer("read");
    await using ops = await agent(server.admin, TOKEN_VALUES.ops);
    expect(await ops.tools()).toEqual(READ_TOOLS);
    for (const method of ["GET", "DELETE"]) {
      const answer = await fetch(`${server.admin}/mcp`, {
        method,
        headers: { authorization: `Bearer ${TOKEN_VALUES.ops}` },
      });
      expect(answer.status).toBe(405);
      expect(answer.headers.get("allow")).toBe("POST");
    }
    const anonymous = await fetch(`${server.admin}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(anonymous.status).toBe(401);
    // Wrong tokens are counted as on the API: 401, then 429.
    const statuses: number[] = [];
    for (let i = 0; i < FAILURE_BURST * 3 && statuses.at(-1) !== 429; i++) {
      const guess = await fetch(`${server.admin}/mcp`, {
        method: "POST",
        headers: { authorization: "Bearer wrong-token-0123456789abcdef", "content-type": "application/json" },
        body: "{}",
      });
      await guess.text();
      statuses.push(guess.status);
    }
    expect(statuses[0]).toBe(401);
    expect(statuses.at(-1)).toBe(429);
    const setup = tokenSetup();
    await using plain = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
    const off = await fetch(`${plain.admin}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN_VALUES.ops}` },
    });
    expect(off.status).toBe(404);
  }, 60_000);
});
