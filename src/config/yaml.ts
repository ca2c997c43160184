import type * as Yaml from "yaml";

/**
 * A config file's YAML, parsed as the `yaml` package parses it (YAML 1.2, one document, a repeated key an error).
 * Under Bun a file the runtime's own parser reads alike is parsed by it: the `yaml` package (1.7 MB of a server's
 * idle memory, 2 ms of its start) is loaded only for a file that uses what the two read differently or that one of
 * them refuses (its message is the package's). The two differ on a repeated key (Bun keeps the last), `<<` (Bun
 * merges), several documents and `%` directives; anchors, aliases, tags, flow mappings, tabs and complex keys are
 * left to the package as well, so what is left is checked for repeated keys line by line (`repeatsKey`).
 */
let yaml: typeof Yaml | undefined;
const packageParse = (text: string): unknown => (yaml ??= require("yaml") as typeof Yaml).parse(text);

/** What the runtime's parser is not trusted with: the package reads it (or refuses it) instead. */
const LEFT_TO_THE_PACKAGE = /[&*!{}\t]|<<|^\s*(?:%|---|\.\.\.|\?)/m;

export function parseYaml(text: string): unknown {
  const bun = (globalThis as { Bun?: { YAML?: { parse(text: string): unknown } } }).Bun?.YAML;
  if (!bun || LEFT_TO_THE_PACKAGE.test(text) || repeatsKey(text) !== false) return packageParse(text);
  try {
    return bun.parse(text);
  } catch {
    return packageParse(text);
  }
}

/** A key of a block mapping, plain: what the scan below can compare. */
const PLAIN_KEY = /^([A-Za-z0-9_][A-Za-z0-9_./-]*)[ ]*:(?:[ ]|$)/;
/** A value that opens a block scalar (`|`, `>-`, `|2` …): the lines indented under its key are its text. */
const BLOCK_SCALAR = /:[ ]+[|>][-+0-9]*[ ]*(?:#.*)?$/;

/**
 * Whether a block mapping of `text` holds a key twice: true, false, or undefined when a line cannot be read with
 * certainty (a quoted or spaced key, a `key: value` inside a sequence item's scalar): the package decides then.
 */
export function repeatsKey(text: string): boolean | undefined {
  const mappings: { indent: number; keys: Set<string> }[] = [];
  let scalarUnder = -1;
  for (const raw of text.split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    let rest = line.trimStart();
    let column = line.length - rest.length;
    if (scalarUnder >= 0) {
      if (rest === "" || column > scalarUnder) continue;
      scalarUnder = -1;
    }
    if (rest === "" || rest.startsWith("#")) continue;
    // Each `- ` opens an item: the mappings of the item before it end, its own starts after the dash.
    let dash = -1;
    while (rest === "-" || rest.startsWith("- ")) {
      while (mappings.length > 0 && mappings.at(-1)!.indent > column) mappings.pop();
      dash = column;
      const after = rest.slice(1).trimStart();
      column += rest.length - after.length;
      rest = after;
    }
    // An item that is a block scalar (`- |`): the lines indented under its dash are its text.
    if (dash >= 0 && /^[|>][-+0-9]*[ ]*(?:#.*)?$/.test(rest)) {
      scalarUnder = dash;
      continue;
    }
    const key = PLAIN_KEY.exec(rest)?.[1];
    if (key === undefined) {
      // Not a key the scan can read, yet a mapping's entry: unsure.
      if (/:(?:[ ]|$)/.test(rest) && !/^["'[]/.test(rest)) return undefined;
      if (/^["']/.test(rest) && /["'][ ]*:(?:[ ]|$)/.test(rest)) return undefined;
      continue;
    }
    while (mappings.length > 0 && mappings.at(-1)!.indent > column) mappings.pop();
    const top = mappings.at(-1);
    if (top && top.indent === column) {
      if (top.keys.has(key)) return true;
      top.keys.add(key);
    } else mappings.push({ indent: column, keys: new Set([key]) });
    if (BLOCK_SCALAR.test(rest)) scalarUnder = column;
  }
  return false;
}
