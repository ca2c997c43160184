import { defineCommand } from "citty";
import { existsSync, rmSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { collectApps } from "../config/apps.ts";
import { findConfigFile, loadConfig } from "../config/load.ts";
import { generateSecret, writeSecretFile } from "../config/secret.ts";
import { ensurePrivateDir } from "../system/files.ts";
import {
  addEntry,
  entryLine,
  notWritable,
  readConfigDocument,
  removeEntry,
  type TokenEntry,
  tokenEntries,
  writeConfig,
} from "../tokens/edit.ts";
import { parseTokens } from "../tokens/list.ts";
import { ROLES, type Role } from "../tokens/scope.ts";
import { controlDir } from "./_cwd.ts";

/** Where `service token add` keeps a token's value, relative to the service's working directory. */
const tokenFile = (name: string) => join(".service", "tokens", name);

/** When the server reads the change: its next look at its config; said by every command that changes one. */
const PICKED_UP =
  "The running service takes the change at its next look at its config (within a quarter of a second): no restart.";

/** The app names a token may be scoped to (single-app mode: `default`). */
function appNames(cwd: string): string[] {
  const config = loadConfig({ cwd });
  const { apps } = collectApps(config, cwd);
  return apps.map((app) => app.name ?? "default");
}

/** The config file the server loads, and why it cannot be edited (none, not writable, not valid YAML). */
function configOf(cwd: string): { file?: string; problem?: string } {
  const file = findConfigFile(cwd);
  if (!file || !existsSync(file))
    return { problem: `no config file (${file ?? join(cwd, "service.yaml")}) to write the entry into` };
  const problem = notWritable(file);
  return problem ? { file, problem } : { file };
}

/** `--app web --app api` or `--app web,api`: every occurrence (citty keeps the last one only). */
function appsOf(rawArgs: string[]): string[] {
  const given: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!;
    if (arg === "--") break;
    if (arg === "--app") given.push(rawArgs[++i] ?? "");
    else if (arg.startsWith("--app=")) given.push(arg.slice("--app=".length));
  }
  return given
    .flatMap((item) => item.split(","))
    .map((item) => item.trim())
    .filter(Boolean);
}

function add(cwd: string, name: string | undefined, role: string | undefined, apps: string[]): void {
  if (!name) throw new Error("--name is required: service token add --name NAME --role read|deploy|admin [--app APP]…");
  if (!role) throw new Error(`--role is required: one of ${ROLES.join(", ")}`);
  const entry: TokenEntry = { name, role: role as Role, ...(apps.length ? { apps } : {}), file: tokenFile(name) };
  // The entry checked as the server will check it; nothing is written when it would be refused.
  const problems: string[] = [];
  parseTokens([entry], appNames(cwd), cwd, problems);
  if (problems.length > 0) throw new Error(problems.map((p) => p.replace(/^tokens, entry 1: /, "")).join("; "));
  const config = configOf(cwd);
  const doc = config.file && !config.problem ? readConfigDocument(config.file) : undefined;
  const existing = doc ? tokenEntries(doc) : ((loadConfig({ cwd }).tokens ?? []) as unknown[]);
  if (existing.some((other) => (other as { name?: unknown })?.name === name))
    throw new Error(`a token named "${name}" exists already (service token revoke ${name} removes it)`);
  const file = join(cwd, entry.file);
  if (existsSync(file)) throw new Error(`${file} exists already: remove it, or choose another name`);
  const text = doc ? addEntry(doc, entry) : undefined;
  ensurePrivateDir(join(cwd, ".service", "tokens"));
  const value = generateSecret();
  writeSecretFile(file, value);
  if (text) writeConfig(config.file!, text);
  const scope = `${role}${apps.length ? `: ${apps.join(", ")}` : ""}`;
  const lines = [
    text
      ? `Added token ${name} (${scope}) to ${config.file}; its value is in ${file} (mode 0600).`
      : `Wrote token ${name} (${scope}) to ${file} (mode 0600), and no config: ${config.problem}. Add this entry to the tokens list of the service's config:\n\ntokens:\n${entryLine(entry)}\n`,
  ];
  if (process.stdout.isTTY)
    lines.push("", `  ${value}`, "", "Send it as Authorization: Bearer <token> to the admin listener.");
  else lines.push(`Send its value (cat ${file}) as Authorization: Bearer <token> to the admin listener.`);
  if (text) lines.push(PICKED_UP);
  if (loadConfig({ cwd }).adminPort === undefined)
    lines.push("Note: tokens open the admin listener, which is off: set adminPort (docs/admin.md).");
  process.stdout.write(`${lines.join("\n")}\n`);
}

/** `3 d`, `5 h`, `12 min`: how long ago. */
function age(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min`;
  if (minutes < 48 * 60) return `${Math.floor(minutes / 60)} h`;
  return `${Math.floor(minutes / 1440)} d`;
}

function list(cwd: string): void {
  const config = loadConfig({ cwd });
  const problems: string[] = [];
  const specs = parseTokens(config.tokens, appNames(cwd), cwd, problems);
  if (specs.length === 0 && problems.length === 0) {
    process.stdout.write("no tokens (service token add --name NAME --role read|deploy|admin adds one)\n");
    return;
  }
  const rows = [["NAME", "ROLE", "APPS", "FILE", "AGE"]];
  for (const spec of specs) {
    let written = "missing";
    try {
      written = age(Date.now() - statSync(spec.file).mtimeMs);
    } catch {}
    rows.push([spec.name, spec.role, spec.apps?.join(",") ?? "(all)", relative(cwd, spec.file) || spec.file, written]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join("  ")
      .trimEnd(),
  );
  process.stdout.write(`${[...lines, ...problems.map((problem) => `problem: ${problem}`)].join("\n")}\n`);
}

function revoke(cwd: string, name: string | undefined): void {
  if (!name) throw new Error("name the token: service token revoke NAME");
  const config = configOf(cwd);
  const entries = (loadConfig({ cwd }).tokens ?? []) as { name?: unknown; file?: unknown }[];
  const entry = entries.find((other) => other?.name === name);
  if (!entry) {
    const names = entries.map((other) => String(other?.name)).join(", ");
    throw new Error(`no token named "${name}"${names ? ` (tokens: ${names})` : ""}`);
  }
  const doc = config.file && !config.problem ? readConfigDocument(config.file) : undefined;
  const text = doc ? removeEntry(doc, name) : undefined;
  // The file first: the token is refused from the next request whatever happens to the config.
  const path = typeof entry.file === "string" ? resolve(cwd, entry.file) : undefined;
  if (path) rmSync(path, { force: true });
  if (text) writeConfig(config.file!, text);
  const lines = [
    `Revoked token ${name}: ${path ? `${path} removed` : "it had no file"}; it is refused from the next request.`,
  ];
  lines.push(
    text
      ? `Its entry is removed from ${config.file}. ${PICKED_UP}`
      : `Its entry stays in the config (${config.problem ?? "set outside the config file"}): remove it there.`,
  );
  process.stdout.write(`${lines.join("\n")}\n`);
}

export const tokenCommand = defineCommand({
  meta: {
    name: "token",
    description:
      "add: a token of the admin listener scoped to a role and apps; its value in .service/tokens/<name> (0600), its " +
      "entry in the tokens of the config file the server loads (comments kept). list: name, role, apps, file and age, " +
      "never the value. revoke: its file and entry removed. The running service follows without a restart.",
  },
  args: {
    action: { type: "positional", required: true, description: "add | list | revoke" },
    target: { type: "positional", required: false, description: "revoke: the token's name" },
    name: { type: "string", valueHint: "name", description: "add: the token's name (letters, digits, . _ -)" },
    role: { type: "string", valueHint: ROLES.join("|"), description: "add: what it may do" },
    app: { type: "string", valueHint: "name", description: "add: an app it is scoped to (again for more)" },
    cwd: {
      type: "string",
      valueHint: "dir",
      description: "The service's working directory: its config file and .service/ (default: the current directory)",
    },
  },
  run({ args, rawArgs }) {
    const cwd = controlDir(args.cwd);
    if (args.action === "add") {
      if (args.target !== undefined) throw new Error(`unexpected argument "${args.target}": use --name`);
      return add(cwd, args.name, args.role, appsOf(rawArgs));
    }
    if (args.action === "list") return list(cwd);
    if (args.action === "revoke") return revoke(cwd, args.target);
    throw new Error(`unknown action "${args.action}": service token add, list or revoke`);
  },
});
