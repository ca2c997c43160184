/**
 * docs/architecture.md "Layers": each folder of src/ imports only from the folders below it (type-only imports
 * included); the entry points (the library's index.ts, the CLI's cli.ts) import from any of them, and nothing
 * imports an entry point.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { ROOT } from "./_support/repo.ts";

/** Top to bottom, as docs/architecture.md lists them. */
const LAYERS = [
  "commands",
  "server.ts",
  "features",
  "mcp",
  "ops",
  "admin",
  "people",
  "tokens",
  "http",
  "previews",
  "control",
  "requests",
  "triggers",
  "notify",
  "deploy",
  "gate",
  "releases",
  "verify",
  "watch",
  "steps",
  "queue",
  "audit",
  "history",
  "config",
  "system",
  "runtime",
  "types.ts",
  "watch-types.ts",
];
const ENTRY_POINTS = ["index.ts", "cli.ts"];
const SRC = join(ROOT, "src");

function layerOf(file: string): string {
  return relative(SRC, file).split("/")[0]!;
}

/** Every relative import of every file in src/: static, dynamic and type-only. */
function imports(): { from: string; to: string }[] {
  const files = readdirSync(SRC, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
  return files.flatMap((file) => {
    const path = join(SRC, file);
    const text = readFileSync(path, "utf8");
    const specs = [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map((m) => m[1]!);
    return specs
      .map((spec) => resolve(dirname(path), spec))
      .filter((to) => to.startsWith(`${SRC}/`))
      .map((to) => ({ from: path, to }));
  });
}

describe("layers (docs/architecture.md)", () => {
  test("every folder and top-level file of src/ has its place in the layer order", () => {
    const entries = readdirSync(SRC).sort();
    expect(entries).toEqual([...LAYERS, ...ENTRY_POINTS].sort());
  });

  test("a folder imports only from the folders below it; nothing imports an entry point", () => {
    const wrong = imports().flatMap(({ from, to }) => {
      const a = layerOf(from);
      const b = layerOf(to);
      if (a === b) return [];
      if (ENTRY_POINTS.includes(a)) return LAYERS.includes(b) ? [] : [`${a} -> ${b}`];
      if (ENTRY_POINTS.includes(b)) return [`${relative(SRC, from)} -> ${b}`];
      return LAYERS.indexOf(a) < LAYERS.indexOf(b) ? [] : [`${relative(SRC, from)} -> ${relative(SRC, to)}`];
    });
    expect(wrong).toEqual([]);
  });
});
