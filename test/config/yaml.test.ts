/**
 * A config file's YAML (config/yaml.ts): read by the runtime's parser where it reads alike, by the `yaml` package
 * otherwise; either way, what the package would make of the file, and the package's refusals.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { parseYaml, repeatsKey } from "../../src/config/yaml.ts";
import { ROOT } from "../_support/repo.ts";

/** What `parser` makes of `text`: its value, or its refusal's first line. */
const readBy = (parser: (text: string) => unknown) => (text: string) => {
  try {
    return { value: parser(text) };
  } catch (error) {
    return { refused: (error as Error).message.split("\n")[0] };
  }
};
const packageReads = readBy(parse);
const reads = readBy(parseYaml);

/** Every YAML block of the docs and the README, the example config and the files of docs/examples. */
function corpus(): string[] {
  const texts: string[] = [readFileSync(join(ROOT, "service.yaml.example"), "utf8")];
  const docs = readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md"));
  for (const file of [join(ROOT, "README.md"), ...docs.map((f) => join(ROOT, "docs", f))])
    for (const block of readFileSync(file, "utf8").matchAll(/```ya?ml\n([\s\S]*?)```/g)) texts.push(block[1]!);
  const examples = join(ROOT, "docs", "examples");
  for (const file of readdirSync(examples, { recursive: true }) as string[])
    if (/\.ya?ml$/.test(file)) texts.push(readFileSync(join(examples, file), "utf8"));
  return texts;
}

const SCALARS = [
  "010",
  "0o10",
  "0x10",
  "1_000",
  "+1",
  "-0",
  ".5",
  "5.",
  "1e3",
  "true",
  "True",
  "FALSE",
  "null",
  "~",
  "yes",
  "no",
  "on",
  "off",
  "''",
  '""',
  "'a''b'",
  '"a\\"b"',
  '"\\t"',
  '"\\u00e9"',
  "2020-01-01",
  "12:30",
  "1:30:00",
  "a #b",
  "a#b",
  "http://x:80/a",
  ".inf",
  "-.Inf",
  ".NaN",
  "0777",
  "100000000000000000000",
  "|\n  block\n  text\n",
  "|-\n  a\n",
  ">\n  folded\n  text\n\n  para\n",
  "[a, b]",
  "[ 'x', \"y\" ]",
  "[\n  a,\n  b\n]",
  "plain\n  continued",
  '"multi\n  line"',
  "é",
];

describe("a config file's YAML", () => {
  test("every YAML of the docs, the README, the example config and docs/examples reads as the yaml package reads it", () => {
    const texts = corpus();
    expect(texts.length).toBeGreaterThan(40);
    for (const text of texts) expect({ text, read: reads(text) }).toEqual({ text, read: packageReads(text) });
  });

  test("each kind of scalar, in a mapping and in a sequence, reads as the yaml package reads it", () => {
    for (const scalar of SCALARS)
      for (const text of [`k: ${scalar}\nz: 1\n`, `list:\n  - ${scalar}\n  - z\n`])
        expect({ text, read: reads(text) }).toEqual({ text, read: packageReads(text) });
  });

  test("a key repeated in one mapping is refused as the package refuses it, wherever the mapping is", () => {
    const repeated = [
      "port: 1\nport: 2\n",
      "status:\n  context: a\n  repo: x\n  context: b\n",
      "apps:\n  - name: web\n    repoPath: /a\n    name: api\n",
      "runScript: |\n  port: 1\n  port: 2\nport: 3\nport: 4\n",
      "apps:\n- name: web\n  env:\n    A: 1\n  env:\n    B: 2\n",
      "a:\n  b:\n    c: 1\n  d: 2\n  b: 3\n",
    ];
    for (const text of repeated) {
      expect(repeatsKey(text)).toBe(true);
      expect(reads(text)).toEqual(packageReads(text));
      expect(JSON.stringify(reads(text))).toContain("Map keys must be unique");
    }
  });

  test("the same key in two items, in two mappings or in a block scalar's text is no repeat", () => {
    const texts = [
      "apps:\n  - name: web\n    repoPath: /a\n  - name: api\n    repoPath: /b\n",
      "a:\n  name: 1\nb:\n  name: 2\n",
      "runScript: |\n  port: 1\n  port: 2\nport: 3\n",
      "list:\n  - |\n    name: 1\n    name: 2\n  - x\nname: 3\n",
    ];
    for (const text of texts) {
      expect(repeatsKey(text)).toBe(false);
      expect(reads(text)).toEqual(packageReads(text));
    }
  });

  test("anchors, merge keys, tags, flow mappings, quoted keys and several documents are read by the package", () => {
    const texts = [
      "base: &b {port: 1}\nother:\n  <<: *b\n  host: x\n",
      "a: !!str 1\n",
      "a: {x: 1, x: 2}\n",
      '"port": 1\nport: 2\n',
      "a: 1\n---\nb: 2\n",
      "%YAML 1.1\n---\na: yes\n",
      "a:\tb\n",
    ];
    for (const text of texts) expect({ text, read: reads(text) }).toEqual({ text, read: packageReads(text) });
    expect(repeatsKey('"port": 1\nport: 2\n')).toBeUndefined();
  });

  test("what neither parser accepts is refused with the package's message", () => {
    for (const text of ["a: b: c\n", "a: [1, 2\n", "a:\n  - b\n  c: 1\n", "a: 'x'y\n"]) {
      expect(reads(text)).toEqual(packageReads(text));
      expect(reads(text)).toHaveProperty("refused");
    }
  });
});
