/**
 * Hostile configuration (docs/reliability.md "Faults and what the service does"): random and malformed YAML,
 * wrong-typed values and random SERVICE_* variables. `loadConfig` either returns a configuration whose every value
 * has its documented type, or throws a ConfigError whose message names the file and the key, or the variable.
 * Never another error, and an unusable file (not YAML, not a mapping, unreadable) is skipped with a warning naming
 * it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { createConsola } from "consola";
import fc from "fast-check";
import { parse, stringify } from "yaml";
import { loadConfig } from "../../src/config/load.ts";
import { KEYS } from "../../src/config/keys.ts";
import { ConfigError } from "../../src/config/schema.ts";
import type { ResolvedConfig } from "../../src/config/schema-resolved.ts";
import { tempDir } from "../_support/helpers.ts";

const RUNS = 400;
const SEED = 7_2026;
const KEY_NAMES = Object.keys(KEYS) as (keyof typeof KEYS)[];
const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const ENV_NAMES = KEY_NAMES.map((k) => KEYS[k].env).filter(Boolean);

/** Loads with a logger that records warnings instead of printing them. */
function load(
  cwd: string,
  env: Record<string, string>,
): { config?: ResolvedConfig; error?: unknown; warnings: string[] } {
  const warnings: string[] = [];
  const logger = createConsola({
    level: 5,
    reporters: [{ log: (entry) => warnings.push(entry.args.map(String).join(" ")) }],
  });
  try {
    return { config: loadConfig({ cwd, env, logger }), warnings };
  } catch (error) {
    return { error, warnings };
  }
}

/** Every value has the type the config table gives it. */
function checkTypes(config: ResolvedConfig): void {
  const int = (value: unknown, min: number, max = Number.MAX_SAFE_INTEGER) =>
    Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max;
  expect(Object.getPrototypeOf(config)).toBe(Object.prototype);
  expect(int(config.port, 0, 65535)).toBe(true);
  for (const key of [
    "runTimeoutMs",
    "queueLimit",
    "heartbeatMs",
    "maxBodyBytes",
    "keepDeploys",
    "maxLogBytes",
  ] as const) {
    expect({ key, ok: int(config[key], 1) }).toEqual({ key, ok: true });
  }
  expect(int(config.keepDays, 0)).toBe(true);
  for (const key of ["rollbackOnFailure", "acknowledge", "trustProxy"] as const)
    expect({ key, type: typeof config[key] }).toEqual({ key, type: "boolean" });
  for (const key of ["runScript", "hostname"] as const)
    expect({ key, type: typeof config[key] }).toEqual({ key, type: "string" });
  for (const key of ["secret", "branch"] as const)
    expect({ key, ok: config[key] === undefined || typeof config[key] === "string" }).toEqual({ key, ok: true });
  expect(typeof config.repoPath === "string" && isAbsolute(config.repoPath)).toBe(true);
  expect(typeof config.path === "string" && config.path.startsWith("/")).toBe(true);
  expect(Array.isArray(config.apps)).toBe(true);
  for (const app of config.apps) {
    expect(app !== null && typeof app === "object" && !Array.isArray(app)).toBe(true);
    for (const [key, value] of Object.entries(app)) {
      const kind = key === "name" || key === "host" ? "string" : KEYS[key as keyof typeof KEYS]?.kind;
      expect({ key, known: kind !== undefined }).toEqual({ key, known: true });
      if (kind === "string" || kind === "urlPath") expect({ key, type: typeof value }).toEqual({ key, type: "string" });
      if (kind === "boolean") expect({ key, type: typeof value }).toEqual({ key, type: "boolean" });
      if (kind === "positiveInt" || kind === "count")
        expect({ key, ok: Number.isSafeInteger(value) }).toEqual({ key, ok: true });
    }
  }
}

/**
 * The outcome is explained: a well-typed config, or a ConfigError naming the file and one of its top-level
 * keys, or a set SERVICE_* variable. Anything else (a TypeError, a RangeError…) fails with the input shown.
 */
function checkExplained(
  input: string,
  file: string,
  env: Record<string, string>,
  outcome: ReturnType<typeof load>,
  topKeys: string[] | undefined,
): void {
  if (outcome.config) {
    checkTypes(outcome.config);
    return;
  }
  const error = outcome.error as Error;
  if (!(error instanceof ConfigError))
    throw new Error(
      `loadConfig threw ${error?.name}: ${error?.message}\ninput: ${JSON.stringify(input)}\nenv: ${JSON.stringify(env)}`,
    );
  const variable = /environment variable (SERVICE_[A-Z_]+)/.exec(error.message)?.[1];
  if (variable) {
    expect(env[variable]).toBeDefined();
    return;
  }
  const prefix = `${file}: key "`;
  expect(error.message).toStartWith(prefix);
  const rest = error.message.slice(prefix.length);
  if (topKeys)
    expect({ message: error.message, named: topKeys.some((key) => rest.startsWith(`${key}"`)) }).toEqual({
      message: error.message,
      named: true,
    });
}

// ---------------------------------------------------------------------------------------------------------
// Generators.

/** Key spellings: each key camelCase or snake_case, near misses, and keys Object.prototype also has. */
const keyName = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...KEY_NAMES) },
  { weight: 4, arbitrary: fc.constantFrom(...KEY_NAMES.map(snake)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "Port",
      "PORT",
      "repo-path",
      "run_Script",
      "secrets",
      "apps ",
      "",
      " ",
      "1",
      "__proto__",
      "constructor",
      "toString",
      "valueOf",
      "hasOwnProperty",
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
);

/** Scalars as written in YAML text, the tricky ones of YAML 1.1 and 1.2 included. */
const rawScalar = fc.oneof(
  fc.constantFrom(
    "0",
    "-0",
    "1",
    "-1",
    "65535",
    "65536",
    "3141",
    "9007199254740993",
    "1e3",
    "1e400",
    "-.inf",
    ".inf",
    ".nan",
    "0x1F",
    "0o17",
    "017",
    "+12",
    "1_000",
    "1.5",
    "12:30:00",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    "~",
    "null",
    "Null",
    "yes",
    "no",
    "on",
    "off",
    "y",
    "True",
    "FALSE",
    "'123'",
    '"42"',
    '" 42 "',
    "!!binary aGVsbG8=",
    "!!str 12",
    "!!int '12'",
    "!!float 1",
    "!!bool yes",
    "!!null ''",
    "!custom x",
    "!!map {a: 1}",
    "!!seq [1]",
    "''",
    '""',
    '"\\0"',
    '"\\u0000x"',
    "/abs/path",
    "relative/path",
    "../up",
    '"/hook"',
    "hook",
    "[1, 2]",
    "{a: 1}",
    "{toString: 1}",
    "{valueOf: 1, toString: 2}",
    "[{toString: 1}]",
    "[[{toString: 1}]]",
    "[]",
    "{}",
    "|\n  line one\n  line two",
    ">-\n  folded\n  text",
    "&anchor 5",
    "*anchor",
    "*undefined_alias",
    "[*anchor]",
    "- a\n  - b",
    "{",
    "[",
    "'",
    '"',
    ":",
    "- ",
    "? x",
  ),
  fc.string({ maxLength: 20 }).map((s) => JSON.stringify(s)),
  fc.integer().map(String),
  fc.double().map(String),
);

/** Values as objects, turned into valid YAML by the yaml package. */
const objectValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.string({ maxLength: 30 }),
    fc.constantFrom("/", "/hook", "", " ", "true", "1", "-5", "0x10"),
    fc.constant({ toString: 1 }),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(keyName, tie("value"), { maxKeys: 3 }),
  ),
})).value;

/** An `apps` entry: its keys, app-only keys and strays, with random values. */
const appEntry = fc.dictionary(
  fc.oneof(
    fc.constantFrom(
      "name",
      "host",
      "path",
      "repoPath",
      "repo_path",
      "runScript",
      "secret",
      "branch",
      "runTimeoutMs",
      "acknowledge",
      "port",
      "apps",
      "toString",
    ),
    keyName,
  ),
  objectValue,
  { maxKeys: 6 },
);

const configObject = fc.dictionary(
  keyName,
  fc.oneof({ weight: 6, arbitrary: objectValue }, { weight: 1, arbitrary: fc.array(appEntry, { maxLength: 3 }) }),
  { maxKeys: 8 },
);

/** A YAML text built line by line from key spellings and raw scalars (not always valid YAML). */
const rawText = fc
  .tuple(fc.boolean(), fc.array(fc.tuple(keyName, rawScalar, fc.constantFrom("", "  ", "\t")), { maxLength: 8 }))
  .map(
    ([yaml11, lines]) =>
      `${yaml11 ? "%YAML 1.1\n---\n" : ""}${lines.map(([k, v, indent]) => `${indent}${k}: ${v}`).join("\n")}\n`,
  );

/** Anything at all: random text and bytes, and valid YAML with random cuts and insertions. */
const junkText = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ unit: "binary", maxLength: 300 }),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes).toString("latin1")),
  fc
    .tuple(
      configObject.map((o) => stringify(o)),
      fc.nat(),
      fc.string({ maxLength: 5 }),
    )
    .map(([text, at, insert]) => text.slice(0, at % (text.length + 1)) + insert + text.slice(at % (text.length + 1))),
  fc
    .tuple(
      configObject.map((o) => stringify(o)),
      fc.nat(),
    )
    .map(([text, at]) => text.slice(0, at % (text.length + 1))),
);

/** SERVICE_* variables with random values (numbers, booleans and paths in odd shapes among them). */
const envVars = fc.dictionary(
  fc.constantFrom(...ENV_NAMES),
  fc.oneof(
    fc.constantFrom(
      "0",
      "1",
      "-1",
      "65536",
      " 8080 ",
      "8080x",
      "1e3",
      "0x10",
      "true",
      "FALSE",
      "yes",
      "off",
      "maybe",
      "/",
      "/hook",
      "hook",
      " ",
      "\t",
      "\u0000",
      "9007199254740993",
    ),
    fc.string({ maxLength: 20 }),
  ),
  { maxKeys: 4 },
);

/** The top-level keys of a text, when it parses to a mapping (for checking an error names one of them). */
function topLevelKeys(text: string): string[] | undefined {
  try {
    const value = parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? Object.keys(value) : undefined;
  } catch {
    return undefined;
  }
}

describe("property: loadConfig on hostile configuration", () => {
  // The yaml package reports unknown tags and directives through process.emitWarning: thousands of lines here.
  const emitWarning = process.emitWarning;
  beforeAll(() => {
    process.emitWarning = () => {};
  });
  afterAll(() => {
    process.emitWarning = emitWarning;
  });
  const cwd = tempDir("service-hostile-config-");
  const file = join(cwd, "service.yaml");
  const run = (text: string, env: Record<string, string>) => {
    writeFileSync(file, text);
    checkExplained(text, file, env, load(cwd, env), topLevelKeys(text));
  };

  test("valid YAML mappings of the table's keys with random values (nested mappings, lists, apps entries): a typed config or a ConfigError naming the file and the key", () => {
    fc.assert(
      fc.property(configObject, (config) => run(stringify(config), {})),
      { seed: SEED, numRuns: RUNS },
    );
  });

  test("a list holding a mapping that shadows toString, under every key of the table: explained, never another error", () => {
    for (const key of KEY_NAMES)
      for (const value of ["[{toString: 1}]", "[[{toString: 1}]]", "[[{valueOf: 1, toString: 2}]]"])
        run(`${key}: ${value}\n`, {});
  });

  test("YAML written by hand from the keys and tricky scalars (YAML 1.1 types, tags, anchors, block scalars, broken syntax): explained, never another error", () => {
    fc.assert(
      fc.property(rawText, (text) => run(text, {})),
      { seed: SEED + 1, numRuns: RUNS },
    );
  });

  test("fully random text and bytes, and valid files cut or spliced at random: explained; a file that is not a mapping is skipped with a warning naming it", () => {
    fc.assert(
      fc.property(junkText, (text) => {
        writeFileSync(file, text);
        const outcome = load(cwd, {});
        checkExplained(text, file, {}, outcome, topLevelKeys(text));
        if (outcome.config && topLevelKeys(text) === undefined && text.trim() !== "") {
          // Not a mapping (or not YAML): a warning names the file, unless the text is a YAML null (a comment, `~`).
          const named = outcome.warnings.some((w) => w.includes(file));
          const empty = (() => {
            try {
              return parse(text) == null;
            } catch {
              return false;
            }
          })();
          expect({ text, named: named || empty }).toEqual({ text, named: true });
        }
      }),
      { seed: SEED + 2, numRuns: RUNS },
    );
  });

  test("random SERVICE_* variables over a random file: a typed config, or a ConfigError naming the variable or the file's key", () => {
    fc.assert(
      fc.property(configObject, envVars, (config, env) => run(stringify(config), env)),
      { seed: SEED + 3, numRuns: RUNS },
    );
  });

  test("unknown keys, Object.prototype's names among them, are warned about by name and change nothing", () => {
    fc.assert(
      fc.property(
        fc.subarray(
          [
            "toString",
            "constructor",
            "valueOf",
            "hasOwnProperty",
            "__proto__",
            "isPrototypeOf",
            "Port",
            "repo-path",
            "nonsense",
          ],
          { minLength: 1 },
        ),
        objectValue,
        (keys, value) => {
          const text = stringify(Object.fromEntries(keys.map((k) => [k, value])));
          writeFileSync(file, text);
          const outcome = load(cwd, {});
          expect(outcome.config).toBeDefined();
          checkTypes(outcome.config!);
          for (const key of keys)
            expect({ key, warned: outcome.warnings.some((w) => w.includes(`unknown key "${key}"`)) }).toEqual({
              key,
              warned: true,
            });
          expect(outcome.config!.port).toBe(3141);
        },
      ),
      { seed: SEED + 4, numRuns: 100 },
    );
  });

  test("SERVICE_CONFIG naming a directory, a missing file or an alias bomb: skipped with a warning naming it; defaults apply", () => {
    const dir = join(cwd, "a-directory");
    mkdirSync(dir, { recursive: true });
    const bomb = join(cwd, "bomb.yaml");
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 10; i++)
      levels.push(
        `${"abcdefghij"[i]}: &${"abcdefghij"[i]} [${Array(10)
          .fill(`*${"abcdefghij"[i - 1]}`)
          .join(", ")}]`,
      );
    writeFileSync(bomb, `${levels.join("\n")}\n`);
    for (const target of [dir, join(cwd, "missing.yaml"), bomb]) {
      const outcome = load(cwd, { SERVICE_CONFIG: target });
      expect(outcome.error).toBeUndefined();
      checkTypes(outcome.config!);
      expect(outcome.config!.port).toBe(3141);
      expect({ target, named: outcome.warnings.some((w) => w.includes(target)) }).toEqual({ target, named: true });
    }
  });

  test("a config file over 1 MiB, /dev/zero or a FIFO as SERVICE_CONFIG: skipped with a warning naming it and why, without reading it whole or hanging", () => {
    const big = join(cwd, "big.yaml");
    writeFileSync(big, `port: 4000\n# ${"x".repeat(1024 * 1024)}\n`);
    const fifo = join(cwd, "a-fifo");
    Bun.spawnSync(["mkfifo", fifo]);
    for (const [target, why] of [
      [big, /at most 1 MiB \(1048576 bytes\)/],
      ["/dev/zero", /not a regular file/],
      [fifo, /not a regular file/],
    ] as const) {
      const outcome = load(cwd, { SERVICE_CONFIG: target });
      expect(outcome.error).toBeUndefined();
      expect(outcome.config!.port).toBe(3141);
      const warning = outcome.warnings.find((w) => w.includes(target));
      expect({ target, warning }).toEqual({ target, warning: expect.stringMatching(why) });
    }
  });
});
