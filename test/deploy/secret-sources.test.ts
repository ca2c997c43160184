/**
 * Secrets from every source stay secret (docs/security.md "Secrets"): a value from `env: { file }`, `envFile`, an
 * age-encrypted envFile, `envCommand` (dotenv and JSON) and a multi-line one, printed by the run script on both of
 * its streams and by a failing health check, never appears in the stream, the `.log`, the record, a notification,
 * `/metrics`, an answer of the admin API or `service check`'s output.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Encrypter, generateX25519Identity, identityToRecipient } from "age-encryption";
import { bearer, startAdmin } from "../_support/admin-helpers.ts";
import { makeRepo, post, runCli, SECRET, tempDir, waitFor } from "../_support/helpers.ts";
import { deployIdOf, logDirOf, stemOf } from "../_support/ops-helpers.ts";
import { fakeApi } from "../_support/outbound-fixtures.ts";

/** A file of mode 0600 in `dir`. */
function privateFile(dir: string, name: string, content: string | Uint8Array): string {
  const file = join(dir, name);
  writeFileSync(file, content, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

const PEM_LINES = [
  "-----BEGIN PRIVATE KEY-----",
  "MC4CAQAwBQYDK2VwBCIEIHq0bGx5c2VjcmV0bGluZQ",
  "-----END PRIVATE KEY-----",
];

/** Each source: the config lines that give the variable SECRET_VALUE, and the texts that must never be seen. */
const SOURCES: { name: string; config: (dir: string) => Promise<string>; values: string[] }[] = [
  {
    name: "env: { file }",
    config: async (dir) => `env: { SECRET_VALUE: { file: ${privateFile(dir, "value", "env-file-value-0123\n")} } }`,
    values: ["env-file-value-0123"],
  },
  {
    name: "envFile",
    config: async (dir) => `envFile: ${privateFile(dir, "app.env", "SECRET_VALUE=plain-envfile-0123\n")}`,
    values: ["plain-envfile-0123"],
  },
  {
    name: "an age-encrypted envFile",
    config: async (dir) => {
      const identity = await generateX25519Identity();
      const encrypter = new Encrypter();
      encrypter.addRecipient(await identityToRecipient(identity));
      const file = privateFile(dir, "app.env.age", await encrypter.encrypt("SECRET_VALUE=age-envfile-0123\n"));
      return `envFile: ${file}\nageIdentityFile: ${privateFile(dir, "key.txt", `${identity}\n`)}`;
    },
    values: ["age-envfile-0123"],
  },
  {
    name: "envCommand, dotenv",
    config: async (dir) => `envCommand: sh ${privateFile(dir, "vars.sh", "echo SECRET_VALUE=command-dotenv-0123")}`,
    values: ["command-dotenv-0123"],
  },
  {
    name: "envCommand, json",
    config: async (dir) =>
      `envCommand: sh ${privateFile(dir, "vars.sh", `echo '{"SECRET_VALUE": "command-json-0123"}'`)}\nenvCommandFormat: json`,
    values: ["command-json-0123"],
  },
  {
    name: "a multi-line value (envCommand, json)",
    config: async (dir) =>
      `envCommand: sh ${privateFile(dir, "vars.sh", `printf '%s' '${JSON.stringify({ SECRET_VALUE: PEM_LINES.join("\n") })}'`)}\nenvCommandFormat: json`,
    values: PEM_LINES,
  },
];

describe('a secret from any source is never shown (docs/security.md "Secrets")', () => {
  for (const source of SOURCES)
    test(`${source.name}: not in the stream, the .log, the record, a notification, /metrics, the API or service check`, async () => {
      const api = fakeApi([201]);
      const repo = makeRepo();
      const dir = tempDir("service-dir-");
      // The script prints the value on both streams and fails; so does the health check of the automatic rollback.
      const script = privateFile(
        dir,
        "print.sh",
        'echo "out: $SECRET_VALUE"\necho "err: $SECRET_VALUE" >&2\nprintf "%s\\n" "$SECRET_VALUE" | tail -1\nexit 1',
      );
      writeFileSync(
        join(dir, "service.yaml"),
        [
          `repoPath: ${repo.clone}`,
          `runScript: sh ${script}`,
          await source.config(dir),
          `notify: [{ url: "${api.url}/notify", on: [failed] }]`,
        ].join("\n"),
      );
      const { server, admin } = await startAdmin(dir);
      await using _ = server;
      const streamed = await (await post(server.url, { secret: SECRET })).text();
      // The script did get the value: it printed it, as ***.
      expect(streamed).toContain("out: ***");
      expect(streamed).toContain("[done] ok=false exitCode=1");
      const id = deployIdOf(streamed);
      const notified = await waitFor(() => api.seen.find((seen) => seen.json().id === id), "the notification");
      const stem = stemOf(dir, id);
      const get = async (path: string) => (await fetch(`${admin}${path}`, { headers: bearer() })).text();
      const check = await runCli(["check"], { cwd: dir, env: { SERVICE_SECRET: SECRET } });
      expect(check.stdout).toContain("SECRET_VALUE");
      const texts = {
        stream: streamed,
        json: await (await post(`${server.url}/?format=json`, { secret: SECRET })).text(),
        log: readFileSync(join(logDirOf(dir), `${stem}.log`), "utf8"),
        record: readFileSync(join(logDirOf(dir), `${stem}.json`), "utf8"),
        notification: notified.body,
        metrics: await get("/metrics"),
        apps: await get("/api/apps"),
        deploys: await get("/api/deploys"),
        deploy: await get(`/api/deploys/${id}`),
        deployLog: await get(`/api/deploys/${id}/log`),
        check: check.stdout + check.stderr,
      };
      expect(texts.metrics).toContain("service_");
      for (const [where, text] of Object.entries(texts))
        for (const value of source.values)
          expect({ where, seen: text.includes(value) }).toEqual({ where, seen: false });
    });
});
