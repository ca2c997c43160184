/**
 * docs/watch.md, docs/configuration.md "watch": the key's checks (every problem named, never a silent default), the
 * defaults, the environment's Prometheus URL, the placeholders escaped for PromQL strings, and the credentials read
 * only from a file its owner alone can read.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveConfig } from "../../src/config/resolve.ts";
import { fillQuery, normalizeWatch, resolveWatch, watchAuthorization } from "../../src/config/watch.ts";
import { queryPrometheus } from "../../src/watch/prometheus.ts";
import { tempDir } from "../_support/helpers.ts";

const problemsOf = (value: unknown) => {
  const problems: string[] = [];
  normalizeWatch(value, 'key "watch"', problems);
  return problems;
};

describe("watch config (docs/watch.md)", () => {
  test("a file's watch is read, camelCase or snake_case, per app too; the defaults fill the rest", () => {
    const cwd = tempDir();
    const text = [
      "watch:",
      "  prometheus: { url: http://127.0.0.1:9090, query: 'sum(x)', max: 0.05 }",
      "apps:",
      "  - { name: web, host: a.example, path: /a, repoPath: /srv/a, runScript: 'true' }",
      "  - { name: api, host: b.example, path: /b, repoPath: /srv/b, runScript: 'true', watch: { command: ./check, for_ms: 60000, on_breach: notify } }",
    ].join("\n");
    const resolved = resolveConfig({ cwd, file: { path: join(cwd, "service.yaml"), read: { text } }, env: {} });
    expect(resolved.fileErrors.flat()).toEqual([]);
    expect(resolveWatch(resolved.config.watch!)).toEqual({
      forMs: 300_000,
      intervalMs: 15_000,
      failures: 2,
      onBreach: "rollback",
      prometheus: { url: "http://127.0.0.1:9090", query: "sum(x)", max: 0.05 },
    });
    expect(resolved.config.apps[1]!.watch).toEqual({ command: "./check", forMs: 60_000, onBreach: "notify" });
  });

  test.each([
    ["not a mapping", "yes", "expected a mapping"],
    ["neither form", { forMs: 1000 }, "needs prometheus (url, query, max or min) or command"],
    ["both forms", { command: "true", prometheus: { query: "x", max: 1 } }, "set prometheus or command, not both"],
    ["no bound", { prometheus: { query: "x" } }, "needs max or min"],
    ["no query", { prometheus: { max: 1 } }, '"query" is required'],
    [
      "an unknown placeholder",
      { prometheus: { query: 'x{a="{{branch}}"}', max: 1 } },
      "unknown placeholder {{branch}}",
    ],
    ["credentials in the URL", { prometheus: { url: "http://u:p@h:9090", query: "x", max: 1 } }, "never in the URL"],
    ["not a URL", { prometheus: { url: "9090", query: "x", max: 1 } }, "an http:// or https:// URL"],
    ["a bound that is no number", { prometheus: { query: "x", max: "low" } }, "max: expected a number"],
    ["an interval too short", { command: "true", intervalMs: 10 }, "of at least 100"],
    [
      "an interval past the watch",
      { command: "true", forMs: 1000, intervalMs: 2000 },
      "intervalMs is longer than forMs",
    ],
    ["a breach that does something else", { command: "true", onBreach: "page" }, "expected rollback or notify"],
    ["an unknown key", { command: "true", forMins: 5 }, 'unknown key "forMins"'],
  ])("%s is named as a problem", (_, value, words) => {
    expect(problemsOf(value).join("\n")).toContain(words);
  });

  test("a wrong SERVICE_WATCH_PROMETHEUS_URL fails each check with why, never a throw", async () => {
    const watch = resolveWatch(
      { prometheus: { query: "x", max: 1 } },
      { SERVICE_WATCH_PROMETHEUS_URL: "prometheus:9090" },
    );
    expect(await queryPrometheus(watch.prometheus!, { cwd: tempDir(), values: {} })).toEqual({
      problem:
        'Prometheus URL: expected an http:// or https:// URL (like http://127.0.0.1:9090), got "prometheus:9090"',
    });
    const none = resolveWatch({ prometheus: { query: "x", max: 1 } }, {});
    expect(await queryPrometheus(none.prometheus!, { cwd: tempDir(), values: {} })).toEqual({
      problem: "no Prometheus URL: set watch.prometheus.url or SERVICE_WATCH_PROMETHEUS_URL",
    });
  });

  test("SERVICE_WATCH_PROMETHEUS_URL overrides the file's URL", () => {
    const watch = { prometheus: { url: "http://a:9090", query: "x", max: 1 } };
    expect(resolveWatch(watch, { SERVICE_WATCH_PROMETHEUS_URL: "http://b:9090" }).prometheus!.url).toBe(
      "http://b:9090",
    );
    expect(resolveWatch(watch, {}).prometheus!.url).toBe("http://a:9090");
  });

  test("placeholders are filled in escaped for PromQL strings: a quote or a backslash cannot end the string", () => {
    const query = 'rate(x{app="{{app}}",commit="{{commit}}",id=\'{{deployId}}\'}[1m]) or y{p="{{previousCommit}}"}';
    expect(fillQuery(query, { app: 'we"b\\', commit: "abc", deployId: "it's", previousCommit: null })).toBe(
      'rate(x{app="we\\"b\\\\",commit="abc",id=\'it\\\'s\'}[1m]) or y{p=""}',
    );
  });

  test("credentials come from a file its owner alone can read: bearer, or user:password for basic", () => {
    const dir = tempDir();
    const file = join(dir, "token");
    writeFileSync(file, "tok-0123456789\n", { mode: 0o644 });
    chmodSync(file, 0o644);
    const bearer = { query: "x", max: 1, bearerFile: file };
    expect(watchAuthorization(bearer, dir)).toEqual({
      problem: `bearerFile: ${file} can be read by other users (mode 0644): run chmod 600 ${file}`,
    });
    chmodSync(file, 0o600);
    expect(watchAuthorization(bearer, dir)).toEqual({ header: "Bearer tok-0123456789", secret: "tok-0123456789" });
    writeFileSync(file, "user:pa:ss\n");
    expect(watchAuthorization({ query: "x", max: 1, basicAuthFile: "token" }, dir)).toEqual({
      header: `Basic ${Buffer.from("user:pa:ss").toString("base64")}`,
      secret: "pa:ss",
    });
    expect(watchAuthorization({ query: "x", max: 1, bearerFile: "missing" }, dir)).toEqual({
      problem: `bearerFile: cannot read ${join(dir, "missing")}: ENOENT`,
    });
  });
});
