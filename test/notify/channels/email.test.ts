import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { simpleParser } from "mailparser";
import type { NotifyTarget } from "../../../src/config/schema-notify.ts";
import { makeRepo, tempDir } from "../../_support/helpers.ts";
import { outcomes } from "../../_support/outbound-outcomes.ts";
import { deployNotifying, secretFile, testCertificate, told } from "../../_support/channel-fixtures.ts";
import { startSmtp } from "../../_support/smtp.ts";

const PASSWORD = "smtp-password-0123456789";
const certificate = testCertificate();

function emailTarget(port: number, cwd: string, more: Partial<NotifyTarget> = {}): NotifyTarget {
  return {
    url: "",
    format: "email",
    host: "127.0.0.1",
    port,
    tls: "starttls",
    user: "deploys",
    passwordFile: secretFile(cwd, "smtp-password", PASSWORD),
    caFile: certificate.certFile,
    from: "Deploys <deploys@example.com>",
    to: ["ops@example.com", "dev@example.com"],
    ...more,
  };
}

describe("email", () => {
  test("a failed deploy sends an email over STARTTLS with AUTH: the subject, body and headers as documented", async () => {
    const smtp = await startSmtp({ ...certificate, account: { user: "deploys", password: PASSWORD } });
    const repo = makeRepo();
    const cwd = tempDir();
    const subject = 'Fix <b>the</b> "login"\nBcc: victim@example.com';
    const after = repo.push({ "v.txt": "2\n" }, subject);
    const result = await deployNotifying(repo.clone, [emailTarget(smtp.port, cwd)], {
      cwd,
      app: "web",
      runScript: "echo building; exit 3",
    });
    expect(result.ok).toBe(false);
    const [outcome] = await outcomes(result.log.json, 1);
    expect(outcome).toMatchObject({ kind: "notify", target: "email to ops@example.com, dev@example.com", ok: true });
    expect(smtp.logins).toEqual([{ user: "deploys", ok: true, secure: true }]);
    expect(smtp.received).toHaveLength(1);
    const [mail] = smtp.received;
    expect(mail).toMatchObject({ secure: true, user: "deploys", from: "deploys@example.com" });
    expect(mail!.to).toEqual(["ops@example.com", "dev@example.com"]);
    const parsed = await simpleParser(mail!.raw);
    // The commit's subject is one line in the Subject: its newline cannot start a Bcc header.
    expect(parsed.subject).toBe(
      `deploy of web FAILED at ${after.slice(0, 7)} "Fix <b>the</b> "login" Bcc: victim@example.com" in ${(result.durationMs / 1000).toFixed(1)} s (exit code 3)`,
    );
    expect(parsed.headers.get("bcc")).toBeUndefined();
    expect(parsed.from?.text).toBe('"Deploys" <deploys@example.com>');
    expect(parsed.headers.get("x-service-deploy")).toBe(result.id);
    expect(parsed.headers.get("x-service-app")).toBe("web");
    expect(parsed.headers.get("x-service-outcome")).toBe("failed");
    expect(parsed.text).toContain("deploy of web FAILED");
    expect(parsed.text).toContain("building");
    expect(mail!.raw).not.toContain(PASSWORD);
    expect(readFileSync(result.log.log, "utf8")).toContain(
      "[notify] email to ops@example.com, dev@example.com: failed notification sent",
    );
    expect(told.find((t) => t.id === result.id)).toMatchObject({ app: "web", format: "email", ok: true });
  });

  test("a wrong password: recorded as failed with the server's 535, tried once, the password nowhere", async () => {
    const smtp = await startSmtp({ ...certificate, account: { user: "deploys", password: "another-password-123" } });
    const repo = makeRepo();
    const cwd = tempDir();
    const result = await deployNotifying(repo.clone, [emailTarget(smtp.port, cwd)], { cwd, app: "web" });
    const [outcome] = await outcomes(result.log.json, 1);
    expect(outcome.ok).toBe(false);
    expect(outcome.target).toBe("email to ops@example.com, dev@example.com");
    expect(outcome.detail).toStartWith("535");
    expect(outcome.detail).toContain("authentication failed");
    // A permanent refusal is not retried.
    expect(smtp.logins).toHaveLength(1);
    expect(smtp.received).toHaveLength(0);
    const log = readFileSync(result.log.log, "utf8");
    expect(log).toContain("[notify] email to ops@example.com, dev@example.com failed: 535");
    expect(log).not.toContain(PASSWORD);
    expect(told.find((t) => t.id === result.id)).toMatchObject({ format: "email", ok: false });
  });

  test("certificates are verified: a server whose certificate no trusted authority signed gets nothing", async () => {
    const smtp = await startSmtp({ ...certificate, account: { user: "deploys", password: PASSWORD } });
    const repo = makeRepo();
    const cwd = tempDir();
    const target = emailTarget(smtp.port, cwd);
    delete target.caFile;
    const result = await deployNotifying(repo.clone, [target], { cwd });
    const [outcome] = await outcomes(result.log.json, 1);
    expect(outcome.ok).toBe(false);
    expect(smtp.logins).toHaveLength(0);
    expect(smtp.received).toHaveLength(0);
  });

  test("tls: implicit is TLS from the first byte", async () => {
    const smtp = await startSmtp({ ...certificate, implicit: true, account: { user: "deploys", password: PASSWORD } });
    const repo = makeRepo();
    const cwd = tempDir();
    const result = await deployNotifying(repo.clone, [emailTarget(smtp.port, cwd, { tls: "implicit" })], { cwd });
    const [outcome] = await outcomes(result.log.json, 1);
    expect(outcome.ok).toBe(true);
    expect(smtp.received[0]!.secure).toBe(true);
  });

  test("tls: none without user: a relay on the same host gets the message in plain, no AUTH", async () => {
    const smtp = await startSmtp({ ...certificate });
    const repo = makeRepo();
    const target: NotifyTarget = {
      url: "",
      format: "email",
      host: "127.0.0.1",
      port: smtp.port,
      tls: "none",
      from: "deploys@example.com",
      to: ["ops@example.com"],
    };
    const result = await deployNotifying(repo.clone, [target]);
    const [outcome] = await outcomes(result.log.json, 1);
    expect(outcome).toMatchObject({ ok: true, target: "email to ops@example.com" });
    expect(smtp.received[0]).toMatchObject({ secure: false, user: undefined });
  });

  test("starttls required: a server that does not offer STARTTLS gets no credentials", async () => {
    const smtp = await startSmtp({ ...certificate, plainOnly: true, account: { user: "deploys", password: PASSWORD } });
    const repo = makeRepo();
    const cwd = tempDir();
    const result = await deployNotifying(repo.clone, [emailTarget(smtp.port, cwd)], { cwd });
    const [outcome] = await outcomes(result.log.json, 1);
    expect(outcome.ok).toBe(false);
    expect(smtp.logins).toHaveLength(0);
    expect(smtp.received).toHaveLength(0);
  });
});
