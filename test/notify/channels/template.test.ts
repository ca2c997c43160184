/**
 * The keys of the channels as a configuration writes them, the `template` and its fields, each value escaped for
 * its channel, and the messages of the `refused` and `superseded` events in every format.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../../src/config/load.ts";
import type { NotifyTarget } from "../../../src/config/schema-notify.ts";
import { emailMessage } from "../../../src/notify/channels/email.ts";
import { gotifyRequest } from "../../../src/notify/channels/gotify.ts";
import { matrixRequest } from "../../../src/notify/channels/matrix.ts";
import { teamsRequest } from "../../../src/notify/channels/teams.ts";
import { telegramRequest } from "../../../src/notify/channels/telegram.ts";
import { webhookRequest } from "../../../src/notify/channels/webhooks.ts";
import { notifyPayload, type NotifyPayload } from "../../../src/notify/payloads.ts";
import { tempDir } from "../../_support/helpers.ts";

function load(yaml: string) {
  const cwd = tempDir();
  writeFileSync(join(cwd, "service.yaml"), yaml);
  const logger = { warn: () => {} } as never;
  try {
    return { config: loadConfig({ cwd, env: {}, logger }) };
  } catch (error) {
    return { error: error as Error };
  }
}

const SHA = "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d";

function payload(outcome: NotifyPayload["outcome"], subject: string, reason?: string): NotifyPayload {
  return notifyPayload({
    id: "5c0e3f1a-6a4e-4c38-9d0b-4f1f7c1d2e3a",
    app: "web",
    trigger: "webhook",
    actor: "octocat",
    outcome,
    commit: {
      before: null,
      after: SHA,
      info: { sha: SHA, subject, author: "Mona", date: "2026-11-22T15:02:11+01:00" },
    },
    output: [],
    ...(reason ? { reason } : {}),
  });
}

describe("the channels' keys", () => {
  test.each([
    ["notify: [{ format: telegram, tokenFile: t }]", "format telegram needs chatId"],
    ["notify: [{ format: matrix, chatId: 1, tokenFile: t }]", "chatId: not a key of format matrix"],
    ["notify: [{ format: gotify, tokenFile: t }]", "entry 1: url is required"],
    ["notify: [{ format: teams, url: 'https://x.example.com', tokenFile: t }]", "tokenFile: not a key of format teams"],
    ["notify: [{ format: email, host: smtp.example.com, from: a@example.com }]", "format email needs to"],
    ["notify: [{ format: email, host: h, from: a@example.com, to: [nope] }]", "to: expected a list of email addresses"],
    [
      "notify: [{ format: email, host: h, from: a@example.com, to: [b@example.com], tls: none, user: u, passwordFile: p }]",
      "tls: none sends the password unencrypted",
    ],
    [
      "notify: [{ format: email, host: h, from: a@example.com, to: [b@example.com], user: u }]",
      "user needs passwordFile",
    ],
    [
      "notify: [{ format: email, host: h, from: a@example.com, to: [b@example.com], tls: ssl }]",
      "tls: expected one of starttls, implicit, none",
    ],
    [
      "notify: [{ url: 'https://x.example.com', format: slack, template: '{{app}} {{branch}}' }]",
      "template: unknown field {{branch}}",
    ],
    [
      "notify: [{ url: 'https://x.example.com', template: '{{app}}' }]",
      "template: format json sends the documented payload",
    ],
    ["notify: [{ url: 'https://x.example.com', chatId: 5 }]", "chatId: not a key of format json"],
  ])("%s is refused, naming the key", (yaml, message) => {
    const { error } = load(yaml);
    expect(error?.message).toContain(message);
  });

  test("defaults: telegram's and matrix's public APIs; an email's tls and port follow `user`", () => {
    const { config, error } = load(`notify:
  - { format: telegram, tokenFile: t, chatId: -100123, on: [failed, refused, superseded] }
  - { format: matrix, tokenFile: t, roomId: "!r:example.org" }
  - { format: email, host: smtp.example.com, user: deploys, passwordFile: p, from: a@example.com, to: b@example.com }
  - { format: email, host: 127.0.0.1, from: a@example.com, to: [b@example.com] }
  - { format: email, host: smtp.example.com, tls: implicit, from: a@example.com, to: [b@example.com] }
`);
    expect(error).toBeUndefined();
    const [telegram, matrix, email, relay, implicit] = config!.notify as NotifyTarget[];
    expect(telegram).toMatchObject({
      url: "https://api.telegram.org",
      chatId: "-100123",
      on: ["failed", "refused", "superseded"],
    });
    expect(matrix!.url).toBe("https://matrix-client.matrix.org");
    expect(email).toMatchObject({ tls: "starttls", port: 587, to: ["b@example.com"] });
    expect(relay!.tls).toBeUndefined();
    expect(relay!.port).toBe(25);
    expect(implicit!.port).toBe(465);
  });
});

describe("template", () => {
  const subject = 'Fix <b>x</b> & "y"\r\nBcc: victim@example.com';
  const template = "<b>{{app}}</b> {{outcome}}: {{commitMessage}} ({{commit}}, {{actor}})";

  test("telegram and matrix: each value HTML-escaped, the template's own markup kept", () => {
    const target: NotifyTarget = { url: "https://api.telegram.org", format: "telegram", chatId: "1", template };
    const text = JSON.parse(telegramRequest(target, payload("failed", subject), "t").body).text;
    expect(text).toBe(
      `<b>web</b> failed: Fix &lt;b&gt;x&lt;/b&gt; &amp; &quot;y&quot;\r\nBcc: victim@example.com (${SHA}, octocat)`,
    );
    const matrix = JSON.parse(
      matrixRequest({ ...target, format: "matrix", roomId: "!r:x" }, payload("failed", subject), "t").body,
    );
    expect(matrix.formatted_body).toStartWith("<b>web</b> failed: Fix &lt;b&gt;x&lt;/b&gt;");
    expect(matrix.body).toStartWith('<b>web</b> failed: Fix <b>x</b> & "y"');
  });

  test("slack: &, < and > escaped in values; discord, teams, gotify, ntfy: the value as text in its JSON string", () => {
    const slack = JSON.parse(
      webhookRequest({ url: "https://h", format: "slack", template }, payload("failed", "<!channel> & co")).body,
    );
    expect(slack.text).toStartWith(`<b>web</b> failed: &lt;!channel&gt; &amp; co (${SHA}, octocat)`);
    const discord = JSON.parse(
      webhookRequest({ url: "https://h", format: "discord", template: "{{commitMessage}}" }, payload("failed", subject))
        .body,
    );
    expect(discord.content).toBe(subject);
    const teams = JSON.parse(
      teamsRequest({ url: "https://h", format: "teams", template: "{{commitMessage}}" }, payload("failed", subject))
        .body,
    );
    expect(teams.attachments[0].content.body[0].text).toBe(subject);
    const gotify = JSON.parse(
      gotifyRequest({ url: "https://h", format: "gotify", template: "{{app}}" }, payload("failed", subject), "t").body,
    );
    expect(gotify.message).toBe("web");
  });

  test("email: the subject is one line without control characters; the template is the body's first line", () => {
    const target: NotifyTarget = {
      url: "",
      format: "email",
      host: "h",
      from: "a@example.com",
      to: ["b@example.com"],
      template: "{{commitMessage}} in {{duration}}",
    };
    const message = emailMessage(target, payload("failed", subject));
    expect(message.subject).toBe(
      `deploy of web FAILED at 1a2b3c4 "Fix <b>x</b> & "y" Bcc: victim@example.com", by octocat (exit code null)`,
    );
    expect(message.subject).not.toMatch(/[\r\n]/);
    expect(message.text).toStartWith(`${subject} in \n`);
  });
});

describe("refused and superseded", () => {
  const refused = payload("refused", "Add the migration", "commit 1a2b3c4d5e6f is not signed");

  test("each format's message names the refused commit and the reason", () => {
    const line =
      'deploy of web refused commit 1a2b3c4 "Add the migration", by octocat: commit 1a2b3c4d5e6f is not signed';
    const texts = [
      JSON.parse(webhookRequest({ url: "https://h", format: "slack" }, refused).body).text,
      JSON.parse(webhookRequest({ url: "https://h", format: "discord" }, refused).body).content,
      webhookRequest({ url: "https://h", format: "ntfy" }, refused).body,
      JSON.parse(
        telegramRequest({ url: "https://h", format: "telegram", chatId: "1" }, refused, "t").body,
      ).text.replace(/&quot;/g, '"'),
      JSON.parse(matrixRequest({ url: "https://h", format: "matrix", roomId: "!r:x" }, refused, "t").body).body,
      JSON.parse(teamsRequest({ url: "https://h", format: "teams" }, refused).body).attachments[0].content.body[0].text,
      JSON.parse(gotifyRequest({ url: "https://h", format: "gotify" }, refused, "t").body).message,
      emailMessage({ url: "", format: "email", from: "a@example.com", to: ["b@example.com"] }, refused).subject,
    ];
    for (const text of texts) expect(text).toStartWith(line);
    const json = JSON.parse(webhookRequest({ url: "https://h" }, refused).body);
    expect(json).toMatchObject({ outcome: "refused", error: "commit 1a2b3c4d5e6f is not signed" });
    expect(webhookRequest({ url: "https://h", format: "ntfy" }, refused).headers.tags).toBe("no_entry_sign");
  });

  test("superseded: the commit it was at and why", () => {
    const superseded = payload("superseded", "Old work", "a newer push (9f8e7d6) took its place");
    const text = JSON.parse(webhookRequest({ url: "https://h", format: "slack" }, superseded).body).text;
    expect(text).toBe(
      'deploy of web superseded at 1a2b3c4 "Old work", by octocat: a newer push (9f8e7d6) took its place',
    );
  });
});
