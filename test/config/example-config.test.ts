import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveApps } from "../../src/config/apps.ts";
import { loadConfig } from "../../src/config/load.ts";
import { defaultConfig } from "../../src/config/schema-resolved.ts";
import { ROOT, tempDir } from "../_support/helpers.ts";

const example = readFileSync(join(ROOT, "service.yaml.example"), "utf8");

function load(text: string) {
  const cwd = tempDir();
  writeFileSync(join(cwd, "service.yaml"), text);
  const warnings: string[] = [];
  const logger = { warn: (m: string) => warnings.push(m) } as never;
  return { cwd, config: loadConfig({ cwd, env: {}, logger }), warnings };
}

describe("service.yaml.example", () => {
  test("loads without a warning, every key at its documented default, with a multi-line run script", () => {
    const { cwd, config, warnings } = load(example);
    expect(warnings).toEqual([]);
    const { runScript, ...rest } = config;
    const { runScript: _defaultScript, ...defaults } = defaultConfig(cwd);
    expect(rest).toEqual(defaults);
    expect(runScript.split("\n").filter((l) => l.trim() && !l.trim().startsWith("#"))).toHaveLength(3);
  });

  test("its commented multi-app example, uncommented, gives two valid apps", () => {
    const apps = example
      .slice(example.indexOf("# apps:"))
      .split("\n")
      .map((line) => line.replace(/^# ?/, ""))
      .join("\n");
    const { cwd, config, warnings } = load(apps);
    expect(warnings).toEqual([]);
    const resolved = resolveApps(config, cwd);
    expect(resolved.map((a) => [a.name, a.host, a.path, a.repoPath])).toEqual([
      ["web", "web.example.com", "/deploy", "/srv/web"],
      ["api", "api.example.com", "/deploy", "/srv/api"],
    ]);
    expect(resolved[0]!.branch).toBe("main");
    expect(resolved[1]!.rollbackOnFailure).toBe(true);
    expect(resolved[1]!.secret).toBe("another-long-random-secret");
    expect(resolved[0]!.secret).toBeUndefined();
  });
});
