/**
 * `POST /mcp` on the admin listener (docs/agents.md): MCP's Streamable HTTP through the official SDK, stateless (a
 * server and a transport per request, JSON answers, no session), loaded only when `adminMcp` is set. The caller is
 * authorized by the listener with the admin API's tokens; the tools are those its role may call.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import pkg from "../../package.json" with { type: "json" };
import type { Acting } from "../admin/act.ts";
import { type AdminContext, apiError } from "../admin/api.ts";
import type { McpMode } from "../config/audit.ts";
import { readBody } from "../http/body.ts";
import { registerTools } from "./tools.ts";

/** Largest MCP message: within the admin listener's body limit (a tool call is a small JSON object). */
const MAX_MCP_BODY_BYTES = 4096;

export type McpHandler = (request: Request, acting: Acting, client: string) => Promise<Response>;

export function mcpEndpoint(mode: McpMode, context: AdminContext): McpHandler {
  return async (request, acting) => {
    const read = await readBody(request, { limit: MAX_MCP_BODY_BYTES, keep: true });
    if (!read.ok)
      return apiError(
        read.reason === "too large" ? 413 : 408,
        read.reason,
        `the message could not be read (${read.reason}; at most ${MAX_MCP_BODY_BYTES} bytes)`,
      );
    read.release();
    let parsedBody: unknown;
    try {
      parsedBody = JSON.parse(Buffer.from(read.body ?? new Uint8Array()).toString("utf8"));
    } catch {
      return apiError(400, "bad request", "the body must be a JSON-RPC message");
    }
    const server = new McpServer({ name: "service", version: pkg.version }, { capabilities: { tools: {} } });
    registerTools(server, mode, context, acting);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { parsedBody });
    } finally {
      await server.close();
    }
  };
}
