/**
 * The annotated config of `service init` follows the key table: every key of config/keys.ts appears, with a
 * sentence, and each commented line, uncommented alone, is a valid value of its key.
 */
import { describe, expect, test } from "bun:test";
import { parse } from "yaml";
import { KEYS, normalizeUserConfig } from "../../src/config/keys.ts";
import { annotatedConfig } from "../../src/ops/annotated.ts";

/** The commented `# key: …` block of each key (its line and the indented lines under it), uncommented. */
function commentedBlocks(text: string): Map<string, string> {
  const blocks = new Map<string, string>();
  let current: string | undefined;
  for (const line of text.split("\n")) {
    const start = /^# ([A-Za-z]+):/.exec(line);
    if (start && Object.hasOwn(KEYS, start[1]!)) {
      current = start[1]!;
      blocks.set(current, line.slice(2));
    } else if (current && /^# [ -]/.test(line)) blocks.set(current, `${blocks.get(current)}\n${line.slice(2)}`);
    else current = undefined;
  }
  return blocks;
}

describe("the annotated config", () => {
  const text = annotatedConfig({ runScript: "./deploy.sh", events: ["push"] });

  test("every key of the key table appears once, under a sentence", () => {
    const blocks = commentedBlocks(text);
    for (const key of Object.keys(KEYS)) {
      const lines = text.split("\n");
      const at = lines.findIndex((line) => line.startsWith(`${key}:`) || line.startsWith(`# ${key}:`));
      expect({ key, found: at > 0 }).toEqual({ key, found: true });
      expect(lines[at - 1]).toMatch(/^# \S.*[.:\]]$/);
      expect(lines.filter((line) => line.startsWith(`${key}:`) || line.startsWith(`# ${key}:`))).toHaveLength(1);
    }
    expect(blocks.size).toBe(Object.keys(KEYS).length - 2);
  });

  test("the keys it sets are values; each commented one, uncommented, is a valid value of its key", () => {
    expect(parse(text)).toEqual({ runScript: "./deploy.sh", events: ["push"] });
    for (const [key, block] of commentedBlocks(text)) {
      const value = parse(block);
      if (value[key] === null) continue; // a key without a default or an example (the secrets): `# secret:`
      const errors: unknown[] = [];
      const unknown: string[] = [];
      normalizeUserConfig(value, "service.yaml", unknown, errors as never);
      expect({ key, errors, unknown }).toEqual({ key, errors: [], unknown: [] });
    }
  });
});
