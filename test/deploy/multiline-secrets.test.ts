/**
 * Secrets of more than one line (docs/security.md "Secrets stay secret"): a PEM key or a JSON credential read
 * from `envFile` or `env: { file }` is printed a line at a time by `env | grep`, `while read` or `tail -1`; each
 * of its lines (4 characters or more) is redacted wherever the whole value would be. A value under 4 characters
 * cannot be redacted: the start and `service check` name it.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bearer, startAdmin } from "../_support/admin-helpers.ts";
import { makeRepo, post, runCli, SECRET, tempDir, waitFor } from "../_support/helpers.ts";
import { deployIdOf, logDirOf, stemOf } from "../_support/ops-helpers.ts";

const PEM_LINES = [
  "-----BEGIN OPENSSH PRIVATE KEY-----",
  "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB",
  "QyNTUxOQAAACDmKq0yL9VbZ1W4m8Jx3Qv5aRk2hT7pNcYsE6uFgXoHwA",
  "-----END OPENSSH PRIVATE KEY-----",
];
const PEM = `${PEM_LINES.join("\n")}\n`;
/** A JSON credential in envFile, its lines written with `\n` escapes. */
const JSON_LINES = ["{", '  "type": "service_account",', '  "private_key_id": "a1b2c3d4e5f60718293a"', "}"];

/** A file of mode 0600 in `dir`. */
function privateFile(dir: string, name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

describe('multi-line secrets (docs/security.md "Secrets stay secret")', () => {
  test("each line of a multi-line envFile or { file } value printed by env | grep, while read or tail -1 is *** in the stream, the .log, the .json, the API and service logs", async () => {
    const repo = makeRepo();
    const dir = tempDir("service-dir-");
    const key = privateFile(dir, "deploy-key", PEM);
    const envFile = privateFile(
      dir,
      "app.env",
      `GOOGLE_CREDENTIALS="${JSON_LINES.join("\\n").replaceAll('"', '\\"')}"\n`,
    );
    const script = join(dir, "print.sh");
    writeFileSync(
      script,
      [
        "env | grep -E 'GOOGLE_CREDENTIALS|BEGIN'",
        'printf "%s\\n" "$DEPLOY_KEY" | while read -r line; do echo "key: $line"; done',
        'printf "%s\\n" "$GOOGLE_CREDENTIALS" | tail -1',
        'printf "%s\\n" "$GOOGLE_CREDENTIALS" | sed -n 2p',
      ].join("\n"),
    );
    writeFileSync(
      join(dir, "service.yaml"),
      `repoPath: ${repo.clone}\nrunScript: sh ${script}\nenvFile: ${envFile}\nenv: { DEPLOY_KEY: { file: ${key} } }\n`,
    );
    const { server, admin } = await startAdmin(dir);
    await using _ = server;
    const streamed = await (await post(server.url, { secret: SECRET })).text();
    expect(streamed).toContain("key: ***\n");
    expect(streamed).toContain("[done] ok=true exitCode=0");
    const id = deployIdOf(streamed);
    const stem = stemOf(dir, id);
    const logs = await runCli(["logs", id], { cwd: dir });
    expect(logs.stdout).toContain("key: ***");
    const texts = [
      streamed,
      readFileSync(join(logDirOf(dir), `${stem}.log`), "utf8"),
      readFileSync(join(logDirOf(dir), `${stem}.json`), "utf8"),
      await (await fetch(`${admin}/api/deploys/${id}`, { headers: bearer() })).text(),
      await (await fetch(`${admin}/api/deploys/${id}/log`, { headers: bearer() })).text(),
      logs.stdout,
    ];
    const lines = [...PEM_LINES, ...JSON_LINES.slice(1, 3).map((line) => line.trim())];
    for (const text of texts) for (const line of lines) expect(text).not.toContain(line);
    // The lines under 4 characters (`{`, `}`) are not secrets of their own: output keeps them.
    expect(streamed).toContain("\n}\n");
  });

  test("a value under 4 characters is named (never shown) at start and by check: it cannot be kept out of the output", async () => {
    const repo = makeRepo();
    const dir = tempDir("service-dir-");
    const envFile = privateFile(dir, "app.env", "API_KEY=api-key-0123456789\nPIN=7q1\nEMPTY=\n");
    const short = privateFile(dir, "short.secret", "x9\n");
    writeFileSync(
      join(dir, "service.yaml"),
      `repoPath: ${repo.clone}\nrunScript: "true"\nenvFile: ${envFile}\nenv: { TOKEN: { file: ${short} } }\n`,
    );
    const check = await runCli(["check"], { cwd: dir, env: { SERVICE_SECRET: SECRET } });
    expect(check.code).toBe(0);
    const said = [
      `warning: ${envFile} (envFile): the value of PIN has 3 characters: a value under 4 characters is never redacted from deploy output`,
      `warning: ${short} (env TOKEN): the value of TOKEN has 2 characters: a value under 4 characters is never redacted from deploy output`,
    ];
    for (const line of said) expect(check.stdout).toContain(line);
    expect(check.stdout).not.toContain("API_KEY has");
    expect(check.stdout).not.toContain("EMPTY has");
    for (const value of ["7q1", "x9"]) expect(check.stdout).not.toContain(`=${value}`);
    const { server } = await startAdmin(dir);
    await using _ = server;
    await waitFor(() => server.stdout.text.includes("Auth: required"), "the banner");
    for (const line of said) expect(server.stdout.text + server.stderr.text).toContain(line.slice("warning: ".length));
  });
});
