/**
 * Microsoft Teams, against a stand-in of a Workflows webhook ("Send webhook alerts to a channel") as Microsoft's
 * documentation gives the request it takes: `POST` of `{"type": "message", "attachments": [{"contentType":
 * "application/vnd.microsoft.card.adaptive", "contentUrl": null, "content": <an Adaptive Card>}]}`, the card with
 * `type: "AdaptiveCard"`, its `$schema`, a `version` and `body` elements; the webhook answers 202 Accepted.
 */
import { describe, expect, test } from "bun:test";
import { makeRepo } from "../../_support/helpers.ts";
import { fakeApi } from "../../_support/outbound-fixtures.ts";
import { outcomes } from "../../_support/outbound-outcomes.ts";
import { deployNotifying } from "../../_support/channel-fixtures.ts";

describe("teams", () => {
  test("a failed deploy: a message with one Adaptive Card, the summary in bold and the output in monospace", async () => {
    const api = fakeApi([202]);
    const repo = makeRepo();
    const after = repo.push({ "v.txt": "2\n" }, 'Say "hi"\\n');
    const result = await deployNotifying(
      repo.clone,
      [{ url: `${api.url}/workflows/abc/triggers/manual/paths/invoke?sig=s3cr3t`, format: "teams" }],
      { app: "web", runScript: "echo oops; exit 1" },
    );
    const [outcome] = await outcomes(result.log.json, 1);
    expect(outcome).toMatchObject({ target: "teams", what: "failed", ok: true });
    const call = api.seen[0]!;
    expect(call.method).toBe("POST");
    expect(call.path).toBe("/workflows/abc/triggers/manual/paths/invoke?sig=s3cr3t");
    expect(call.headers["content-type"]).toBe("application/json");
    const message = call.json();
    expect(message.type).toBe("message");
    expect(message.attachments).toHaveLength(1);
    const [attachment] = message.attachments;
    expect(attachment.contentType).toBe("application/vnd.microsoft.card.adaptive");
    expect(attachment.contentUrl).toBeNull();
    const card = attachment.content;
    expect(card).toMatchObject({
      $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
      type: "AdaptiveCard",
      version: "1.4",
    });
    expect(card.body[0]).toMatchObject({ type: "TextBlock", weight: "Bolder", color: "Attention", wrap: true });
    expect(card.body[0].text).toBe(
      `deploy of web FAILED at ${after.slice(0, 7)} "Say "hi"\\n" in ${(result.durationMs / 1000).toFixed(1)} s (exit code 1)`,
    );
    expect(card.body[1]).toMatchObject({ type: "TextBlock", fontType: "Monospace" });
    expect(card.body[1].text).toContain("oops");
  });
});
