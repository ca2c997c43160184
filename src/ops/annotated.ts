/**
 * The annotated `service.yaml` of `service init`: the keys it sets first, then every other key of the schema as a
 * commented line with its default (or an example where it has none) and one sentence. Made from the key table
 * (config/keys.ts KEYS), the defaults (config/schema.ts) and the sentences (init-keys.ts), so it follows them.
 */
import { stringify } from "yaml";
import { KEYS } from "../config/keys.ts";
import { defaultConfig } from "../config/schema-resolved.ts";
import type { UserConfig } from "../config/schema.ts";
import { KEY_NOTES } from "./init-keys.ts";

type Key = keyof UserConfig;

/** Defaults that depend on where or on what machine it runs: shown as what they mean, not as one machine's value. */
const SHOWN_DEFAULT: Partial<Record<Key, unknown>> = { repoPath: "." };
const NO_SHOWN_DEFAULT = new Set<Key>(["maxConcurrentDeploys"]);

/** The value a commented line shows, and whether it is the default (else an example, or nothing to show). */
function shown(key: Key): { value: unknown; is: "default" | "example" | "none" } {
  if (key in SHOWN_DEFAULT) return { value: SHOWN_DEFAULT[key], is: "default" };
  const defaults = defaultConfig("") as unknown as Record<string, unknown>;
  const value = NO_SHOWN_DEFAULT.has(key) ? undefined : defaults[key];
  const empty = Array.isArray(value) && value.length === 0;
  if (value !== undefined && !empty) return { value, is: "default" };
  const { example } = KEY_NOTES[key];
  return example === undefined ? { value: undefined, is: "none" } : { value: example, is: "example" };
}

/** `key: value` as YAML lines (a block for a list or mapping). */
function yamlLines(key: string, value: unknown): string[] {
  if (value === undefined) return [`${key}:`];
  return stringify({ [key]: value }, { lineWidth: 0 })
    .trimEnd()
    .split("\n");
}

/** The sentence of a key, with its environment variables and whether the line below is an example. */
function sentence(key: Key, is: "default" | "example" | "none" | "set"): string {
  const { env, moreEnv } = KEYS[key];
  const vars = [env, ...(moreEnv ?? [])].filter(Boolean);
  const { say, unset } = KEY_NOTES[key];
  const suffix =
    is === "example"
      ? ` ${unset ?? "Unset by default; for example:"}`
      : is === "none"
        ? ` ${unset ?? "Unset by default."}`
        : "";
  return `# ${say}${vars.length ? ` [${vars.join(", ")}]` : ""}${suffix}`;
}

/** One key as a commented line (or block) under its sentence. */
function commented(key: Key): string[] {
  const { value, is } = shown(key);
  return [sentence(key, is), ...yamlLines(key, value).map((line) => `# ${line}`), ""];
}

/**
 * The file: `set` are the keys `service init` chose (written as values), in their order; every other key of the
 * schema follows, commented out.
 */
export function annotatedConfig(set: Partial<UserConfig>): string {
  const chosen = Object.keys(set) as Key[];
  const lines = [
    "# The configuration of this deploy service (written by `service init`; reference: docs/configuration.md).",
    "# Every key is optional. Environment variables (SERVICE_*, in brackets) override this file. The file is read",
    "# again on each webhook, so an edit needs no restart. A commented line shows the key at its default, or an",
    "# example where it has none: uncomment it to change it. `service check` says what is in force and why.",
    "",
  ];
  for (const key of chosen) lines.push(sentence(key, "set"), ...yamlLines(key, set[key]), "");
  lines.push("# ---- Every other key, at its default ----", "");
  for (const key of Object.keys(KEYS) as Key[]) if (!chosen.includes(key)) lines.push(...commented(key));
  return `${lines.join("\n").trimEnd()}\n`;
}
