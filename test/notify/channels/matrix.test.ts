/**
 * Matrix, against a stand-in of the client-server API as the specification (spec.matrix.org, "PUT
 * /_matrix/client/v3/rooms/{roomId}/send/{eventType}/{txnId}") gives it: the room id URL-encoded in the path, a
 * transaction id the client makes (the same one again makes the homeserver answer with the first event, not post a
 * second), `Authorization: Bearer <access token>`, an `m.room.message` content with `msgtype` and `body`, and for
 * HTML `format: "org.matrix.custom.html"` with `formatted_body`.
 */
import { describe, expect, test } from "bun:test";
import { makeRepo, tempDir } from "../../_support/helpers.ts";
import { fakeApi } from "../../_support/outbound-fixtures.ts";
import { outcomes } from "../../_support/outbound-outcomes.ts";
import { deployNotifying, secretFile } from "../../_support/channel-fixtures.ts";

const TOKEN = "syt_ZGVwbG95cw_abcdefghijklmnopqrst_0a1b2c";
const ROOM = "!deploys:example.org";

describe("matrix", () => {
  test("a failed deploy: PUT m.room.message to the room with a transaction id, plain body and escaped HTML", async () => {
    const api = fakeApi([200]);
    const repo = makeRepo();
    const cwd = tempDir();
    repo.push({ "v.txt": "2\n" }, "Ship <img src=x onerror=alert(1)>");
    const result = await deployNotifying(
      repo.clone,
      [{ url: api.url, format: "matrix", tokenFile: secretFile(cwd, "mx", TOKEN), roomId: ROOM }],
      { cwd, app: "web", runScript: "echo 'a < b'; exit 1" },
    );
    const [outcome] = await outcomes(result.log.json, 1);
    expect(outcome).toMatchObject({ target: "matrix", what: "failed", ok: true });
    const call = api.seen[0]!;
    expect(call.method).toBe("PUT");
    const match = /^\/_matrix\/client\/v3\/rooms\/([^/]+)\/send\/m\.room\.message\/([^/]+)$/.exec(call.path);
    expect(match).not.toBeNull();
    expect(match![1]).toBe(encodeURIComponent(ROOM));
    expect(match![2]).toMatch(/^[A-Za-z0-9._~-]+$/);
    expect(call.headers.authorization).toBe(`Bearer ${TOKEN}`);
    const content = call.json();
    expect(content).toMatchObject({ msgtype: "m.notice", format: "org.matrix.custom.html" });
    expect(content.body).toStartWith("deploy of web FAILED");
    expect(content.body).toContain("<img src=x onerror=alert(1)>");
    expect(content.formatted_body).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(content.formatted_body).not.toContain("<img");
    expect(content.formatted_body).toContain("<pre>");
    expect(content.formatted_body).toContain("a &lt; b");
  });

  test("a 5xx is tried again with the same transaction id: the homeserver posts the message once", async () => {
    const api = fakeApi([502, 502, 200]);
    const repo = makeRepo();
    const cwd = tempDir();
    const result = await deployNotifying(
      repo.clone,
      [{ url: api.url, format: "matrix", tokenFile: secretFile(cwd, "mx", TOKEN), roomId: ROOM }],
      { cwd },
    );
    const [outcome] = await outcomes(result.log.json, 1);
    expect(outcome.ok).toBe(true);
    expect(api.seen).toHaveLength(3);
    expect(new Set(api.seen.map((s) => s.path)).size).toBe(1);
  });
});
