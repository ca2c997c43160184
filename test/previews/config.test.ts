/** docs/previews.md "Configuration": the `previews` key, its defaults, and what `service check` refuses. */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { normalizePreviews } from "../../src/config/previews.ts";
import type { PreviewSettings } from "../../src/previews/types.ts";
import { makeRepo, runCli, SECRET, tempDir } from "../_support/helpers.ts";

const minimal = { path: "/srv/web/previews", url: "https://pr-{number}.preview.example.com", ports: "4100-4199" };

function normalized(value: unknown) {
  const problems: string[] = [];
  const out = normalizePreviews(value, 'key "previews"', problems);
  return { out, problems };
}

describe("previews: the key", () => {
  test("a minimal key gets its defaults and is the settings previews use", () => {
    const { out, problems } = normalized(minimal);
    expect(problems).toEqual([]);
    const settings: PreviewSettings = out;
    expect(settings).toEqual({
      path: "/srv/web/previews",
      url: "https://pr-{number}.preview.example.com",
      ports: { from: 4100, to: 4199 },
      teardownTimeoutMs: 300_000,
      max: 10,
      ttlDays: 7,
      slots: 1,
      authors: ["OWNER", "MEMBER", "COLLABORATOR"],
      fromForks: false,
      env: {},
      comment: false,
      gate: false,
    });
  });

  test("snake_case fields, a single port, env values and files are taken", () => {
    const { out, problems } = normalized({
      ...minimal,
      ports: 4100,
      run_script: "./build.sh",
      teardown_script: "./stop.sh",
      ttl_days: "3",
      authors: ["OWNER", "user:alice"],
      label: "preview",
      user: "preview",
      from_forks: true,
      env: { NODE_ENV: "preview", KEY: { file: "/etc/key" }, N: 1 },
    });
    expect(problems).toEqual([]);
    expect(out).toMatchObject({
      ports: { from: 4100, to: 4100 },
      runScript: "./build.sh",
      teardownScript: "./stop.sh",
      ttlDays: 3,
      authors: ["OWNER", "user:alice"],
      fromForks: true,
      env: { NODE_ENV: "preview", KEY: { file: "/etc/key" }, N: "1" },
    });
  });

  test("every wrong field is named; required fields are required", () => {
    expect(normalized({}).problems).toEqual([
      'key "previews": path is required (the directory that holds each preview)',
      'key "previews": url is required (like https://pr-{number}.preview.example.com)',
      'key "previews": ports is required (a range like 4100-4199)',
    ]);
    const { problems } = normalized({
      ...minimal,
      path: "relative/dir",
      ports: "4199-4100",
      max: 0,
      user: "root",
      authors: ["EVERYONE"],
      color: "red",
    });
    expect(problems).toEqual([
      'key "previews": path: expected an absolute directory path, got "relative/dir"',
      'key "previews": ports: expected a port or a range of ports from 1024 to 65535 (like 4100-4199), got "4199-4100"',
      'key "previews": max: expected a positive whole number, got 0',
      'key "previews": user: expected a Unix user name other than root, got "root"',
      expect.stringContaining('key "previews": authors: expected OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR'),
      expect.stringContaining('key "previews": unknown key "color"'),
    ]);
  });

  test("a url whose host could be another site's is refused", () => {
    for (const url of [
      "https://preview.example.com",
      "https://pr.{branch}.example.com",
      "https://{number}",
      "ftp://pr-{number}.example.com",
      "https://pr-{number}.exa mple.com",
    ])
      expect(normalized({ ...minimal, url }).problems).toEqual([expect.stringContaining('key "previews": url:')]);
    expect(normalized({ ...minimal, url: "https://{branch}-{app}.preview.example.com/x" }).problems).toEqual([]);
  });

  test("fromForks without user is refused", () => {
    expect(normalized({ ...minimal, fromForks: true }).problems).toEqual([
      "key \"previews\": fromForks needs user (a fork's code must not run as the service's user)",
    ]);
  });
});

describe("previews: service check", () => {
  function checked(previews: Record<string, unknown>, extra = "") {
    const repo = makeRepo();
    const cwd = tempDir();
    const yaml = [
      `repoPath: ${repo.clone}`,
      `secret: ${SECRET}`,
      "port: 4150",
      "runScript: echo ok",
      extra,
      `previews: ${JSON.stringify(previews)}`,
    ].join("\n");
    writeFileSync(join(cwd, "service.yaml"), yaml);
    return { run: runCli(["check"], { cwd }), repo, cwd };
  }

  test("a path inside the repository and ports over the service's own are refused", async () => {
    const repo = makeRepo();
    const { run } = checked({ ...minimal, path: join(repo.clone, "previews") });
    const result = await run;
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain("previews: ports 4100-4199 hold the service's own port 4150");
  });

  test("a path inside repoPath is refused; without user, check warns", async () => {
    const repo = makeRepo();
    const cwd = tempDir();
    writeFileSync(
      join(cwd, "service.yaml"),
      [
        `repoPath: ${repo.clone}`,
        `secret: ${SECRET}`,
        "runScript: echo ok",
        `previews: ${JSON.stringify({ ...minimal, path: join(repo.clone, "pr") })}`,
      ].join("\n"),
    );
    const result = await runCli(["check"], { cwd });
    const out = result.stdout + result.stderr;
    expect(result.code).not.toBe(0);
    expect(out).toContain(`previews: path ${join(repo.clone, "pr")} must not be inside the repository (repoPath)`);
    expect(out).toContain("previews run as the service's user: a pull request's code can read this server's secrets");
  });
});
