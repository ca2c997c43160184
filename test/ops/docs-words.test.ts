/**
 * The user's docs speak for themselves: the README and docs/ explain the service, never by citing a specification
 * behind it ("SPEC item 8", "the spec's pull") that a user does not have.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../_support/helpers.ts";

const PAGES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

describe("the user's docs", () => {
  test("cite no internal specification", () => {
    const cited = PAGES.flatMap((page) =>
      readFileSync(join(ROOT, page), "utf8")
        .split("\n")
        .flatMap((line, i) => (/\bspec\b|\bspec's\b/i.test(line) ? [`${page}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(cited).toEqual([]);
  });
});
