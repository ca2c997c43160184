/**
 * Gotify, against a stand-in of its REST API as its documentation (gotify.net/docs/pushmsg, gotify.net/api-docs
 * "createMessage") gives it: `POST {server}/message`, the application's token in the `X-Gotify-Key` header, a JSON
 * body with `message` (required), `title`, `priority` and `extras` (`client::display.contentType`).
 */
import { describe, expect, test } from "bun:test";
import { makeRepo, tempDir } from "../../_support/helpers.ts";
import { fakeApi } from "../../_support/outbound-fixtures.ts";
import { outcomes } from "../../_support/outbound-outcomes.ts";
import { deployNotifying, secretFile, told } from "../../_support/channel-fixtures.ts";

const TOKEN = "AbCdEfGhIjKlMnO";

describe("gotify", () => {
  test("a failed deploy: POST /message with X-Gotify-Key, a title, the message as plain text, priority 8", async () => {
    const api = fakeApi([200]);
    const repo = makeRepo();
    const cwd = tempDir();
    const result = await deployNotifying(
      repo.clone,
      [{ url: `${api.url}/gotify`, format: "gotify", tokenFile: secretFile(cwd, "gotify", TOKEN) }],
      { cwd, app: "web", runScript: "echo broken; exit 1" },
    );
    const [outcome] = await outcomes(result.log.json, 1);
    expect(outcome).toMatchObject({ target: "gotify", what: "failed", ok: true });
    const call = api.seen[0]!;
    expect(call.method).toBe("POST");
    expect(call.path).toBe("/gotify/message");
    expect(call.headers["x-gotify-key"]).toBe(TOKEN);
    expect(call.headers["content-type"]).toBe("application/json");
    const body = call.json();
    expect(body).toMatchObject({
      title: "deploy web failed",
      priority: 8,
      extras: { "client::display": { contentType: "text/plain" } },
    });
    expect(body.message).toStartWith("deploy of web FAILED");
    expect(body.message).toContain("broken");
    expect(told.find((t) => t.id === result.id)).toMatchObject({ format: "gotify", ok: true });
  });

  test("a 503: three tries (0.5 s, then 1 s apart), then failed, counted", async () => {
    const api = fakeApi([503]);
    const repo = makeRepo();
    const cwd = tempDir();
    const result = await deployNotifying(
      repo.clone,
      [{ url: api.url, format: "gotify", tokenFile: secretFile(cwd, "gotify", TOKEN) }],
      { cwd },
    );
    const [outcome] = await outcomes(result.log.json, 1);
    expect(outcome.ok).toBe(false);
    expect(outcome.detail).toStartWith("503");
    expect(api.seen).toHaveLength(3);
    expect(told.find((t) => t.id === result.id)).toMatchObject({ format: "gotify", ok: false });
  });
});
