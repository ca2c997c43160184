/**
 * Telegram, against a stand-in of the Bot API as its documentation (core.telegram.org/bots/api#sendmessage) gives
 * the call: `POST https://api.telegram.org/bot<token>/sendMessage`, a JSON body with `chat_id`, `text` and
 * `parse_mode: "HTML"` (the only entities: &lt; &gt; &amp; &quot;), at most 4096 characters of text.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, tempDir } from "../../_support/helpers.ts";
import { fakeApi } from "../../_support/outbound-fixtures.ts";
import { outcomes } from "../../_support/outbound-outcomes.ts";
import { deployNotifying, secretFile, told } from "../../_support/channel-fixtures.ts";

const TOKEN = "123456789:AAbbCCddEEffGGhhIIjjKKllMMnnOOppQQ";

describe("telegram", () => {
  test("a failed deploy: sendMessage with chat_id, the HTML text (every value escaped) and parse_mode HTML", async () => {
    const api = fakeApi([200]);
    const repo = makeRepo();
    const cwd = tempDir();
    const after = repo.push({ "v.txt": "2\n" }, 'Fix <b>bold</b> & "quotes"');
    const result = await deployNotifying(
      repo.clone,
      [{ url: api.url, format: "telegram", tokenFile: secretFile(cwd, "tg", TOKEN), chatId: "-1001234567890" }],
      { cwd, app: "web", runScript: "echo '<script>x</script>'; exit 2" },
    );
    const [outcome] = await outcomes(result.log.json, 1);
    expect(outcome).toMatchObject({ kind: "notify", target: "telegram", what: "failed", ok: true });
    expect(api.seen).toHaveLength(1);
    const call = api.seen[0]!;
    expect(call.method).toBe("POST");
    expect(call.path).toBe(`/bot${TOKEN}/sendMessage`);
    expect(call.headers["content-type"]).toBe("application/json");
    const body = call.json();
    expect(body).toMatchObject({ chat_id: "-1001234567890", parse_mode: "HTML" });
    expect(body.text.length).toBeLessThanOrEqual(4096);
    expect(body.text).toStartWith(
      `deploy of web FAILED at ${after.slice(0, 7)} &quot;Fix &lt;b&gt;bold&lt;/b&gt; &amp; &quot;quotes&quot;&quot;`,
    );
    expect(body.text).toContain("<pre>");
    expect(body.text).toContain("&lt;script&gt;x&lt;/script&gt;");
    expect(body.text).not.toContain("<script>");
    expect(told.find((t) => t.id === result.id)).toMatchObject({ format: "telegram", ok: true });
  });

  test("a 401 is recorded failed with the answer, not retried; the token is in no log line nor the script's environment", async () => {
    const api = fakeApi([401]);
    api.errorBody = `{"ok":false,"error_code":401,"description":"Unauthorized","token":"${TOKEN}"}`;
    const repo = makeRepo();
    const cwd = tempDir();
    const result = await deployNotifying(
      repo.clone,
      [{ url: api.url, format: "telegram", tokenFile: secretFile(cwd, "tg", TOKEN), chatId: "42" }],
      { cwd, runScript: `env > ${join(cwd, "script-env")}; echo ${TOKEN}; exit 1` },
    );
    // The token is a file the service reads when it sends: the run script's environment never has it.
    expect(readFileSync(join(cwd, "script-env"), "utf8")).not.toContain(TOKEN);
    const [outcome] = await outcomes(result.log.json, 1);
    expect(outcome.ok).toBe(false);
    expect(outcome.detail).toStartWith("401 Unauthorized");
    expect(api.seen).toHaveLength(1);
    const log = readFileSync(result.log.log, "utf8");
    expect(log).toContain("[notify] telegram failed: 401 Unauthorized");
    expect(log).not.toContain(TOKEN);
    expect(readFileSync(result.log.json, "utf8")).not.toContain(TOKEN);
    // The run script printed it: the output shows *** (the token joins the redaction set).
    expect(log).toContain("***");
    expect(api.seen[0]!.body).not.toContain(TOKEN);
  });

  test("the token file unreadable: the notification fails, saying why, and the deploy is not held", async () => {
    const api = fakeApi([200]);
    const repo = makeRepo();
    const result = await deployNotifying(repo.clone, [
      { url: api.url, format: "telegram", tokenFile: "/nonexistent/tg-token", chatId: "42" },
    ]);
    const [outcome] = await outcomes(result.log.json, 1);
    expect(outcome).toMatchObject({ ok: false, target: "telegram" });
    expect(outcome.detail).toBe("tokenFile: cannot read /nonexistent/tg-token: ENOENT");
    expect(api.seen).toHaveLength(0);
  });
});
