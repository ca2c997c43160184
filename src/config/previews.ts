/**
 * The `previews` key (docs/previews.md "Configuration"): a running copy of every open pull request. Its checks as
 * written, its defaults, and the checks that need the rest of the config (`previewsProblems`: the path, the ports,
 * the URL's host), run by `service check`.
 */
import { isAbsolute, resolve } from "node:path";
import { isInside } from "../system/files.ts";
import { show } from "./show.ts";

/** The `previews` key with its defaults (per app; top level in single-app mode): previews/types.ts `PreviewSettings`. */
export interface PreviewsKey {
  /** Each preview in `<path>/pr-<number>`; never inside repoPath, releases or `.service`. */
  path: string;
  /** Default: the app's runScript. */
  runScript?: string;
  teardownScript?: string;
  teardownTimeoutMs: number;
  /** With `{number}`, `{branch}`, `{app}`. */
  url: string;
  /** One port per preview for its life: the first and last of the range. */
  ports: { from: number; to: number };
  max: number;
  ttlDays: number;
  slots: number;
  /** The Unix user the preview scripts run as. */
  user?: string;
  /** `OWNER`, `MEMBER`, `COLLABORATOR`, … and `user:<login>`. */
  authors: string[];
  label?: string;
  fromForks: boolean;
  /** The previews' own variables, never production's: a value, or a file to read it from. */
  env: Record<string, string | { file: string }>;
  /** Run after the routes change, with the routes file's path. */
  onChange?: string;
  /** One comment on the PR, edited in place. */
  comment: boolean;
  /** The gate applies to previews too. */
  gate: boolean;
}

const FIELDS = [
  "path",
  "runScript",
  "teardownScript",
  "teardownTimeoutMs",
  "url",
  "ports",
  "max",
  "ttlDays",
  "slots",
  "user",
  "authors",
  "label",
  "fromForks",
  "env",
  "onChange",
  "comment",
  "gate",
];
export const PREVIEW_DEFAULTS = {
  teardownTimeoutMs: 300_000,
  max: 10,
  ttlDays: 7,
  slots: 1,
  authors: ["OWNER", "MEMBER", "COLLABORATOR"],
} as const;
/** GitHub's `author_association` values an `authors` entry may name. */
const ASSOCIATIONS = [
  "OWNER",
  "MEMBER",
  "COLLABORATOR",
  "CONTRIBUTOR",
  "FIRST_TIME_CONTRIBUTOR",
  "FIRST_TIMER",
  "NONE",
];
const PLACEHOLDERS = ["{number}", "{branch}", "{app}"];
const USER = /^[a-z_][a-z0-9_-]{0,31}$/;
const VARIABLE = /^[A-Za-z_][A-Za-z0-9_]*$/;

const toCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const count = (value: unknown) => (typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value);

/** Checks a `previews` value; every problem goes to `problems`. */
export function normalizePreviews(value: unknown, where: string, problems: string[]): PreviewsKey {
  const out: Record<string, unknown> = { ...PREVIEW_DEFAULTS, authors: [...PREVIEW_DEFAULTS.authors] };
  out.fromForks = false;
  out.env = {};
  out.comment = false;
  out.gate = false;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    problems.push(
      `${where}: expected a mapping (${FIELDS.join(", ")}), got ${Array.isArray(value) ? "a list" : show(value)}`,
    );
    return out as unknown as PreviewsKey;
  }
  const written = new Set<string>();
  for (const [rawKey, item] of Object.entries(value)) {
    const key = toCamel(rawKey);
    written.add(key);
    const at = `${where}: ${rawKey}`;
    if (!FIELDS.includes(key)) {
      problems.push(`${where}: unknown key "${rawKey}" (allowed: ${FIELDS.join(", ")})`);
      continue;
    }
    if (item === null || item === undefined) continue;
    const problem = field(key, item, out);
    if (problem) problems.push(`${at}: ${problem}, got ${show(item)}`);
  }
  if (!written.has("path")) problems.push(`${where}: path is required (the directory that holds each preview)`);
  if (!written.has("url")) problems.push(`${where}: url is required (like https://pr-{number}.preview.example.com)`);
  if (!written.has("ports")) problems.push(`${where}: ports is required (a range like 4100-4199)`);
  if (out.fromForks === true && out.user === undefined)
    problems.push(`${where}: fromForks needs user (a fork's code must not run as the service's user)`);
  return out as unknown as PreviewsKey;
}

/** One field checked into `out`; the problem's words (without the value) when it is wrong. */
function field(key: string, item: unknown, out: Record<string, unknown>): string | undefined {
  const n = count(item);
  switch (key) {
    case "path":
      if (typeof item === "string" && isAbsolute(item)) out.path = resolve(item);
      else return "expected an absolute directory path";
      return;
    case "runScript":
    case "teardownScript":
    case "onChange":
      if (typeof item === "string" && item.trim()) out[key] = item;
      else return "expected a command";
      return;
    case "teardownTimeoutMs":
    case "max":
    case "ttlDays":
    case "slots":
      if (
        typeof n === "number" &&
        Number.isSafeInteger(n) &&
        n >= 1 &&
        (key !== "teardownTimeoutMs" || n <= 2 ** 31 - 1)
      )
        out[key] = n;
      else return "expected a positive whole number";
      return;
    case "url":
      return urlProblem(item, out);
    case "ports": {
      const match = typeof item === "string" ? /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(item) : undefined;
      const from = match ? Number(match[1]) : typeof n === "number" ? n : Number.NaN;
      const to = match ? Number(match[2]) : from;
      if (Number.isInteger(from) && Number.isInteger(to) && from >= 1024 && to <= 65535 && from <= to)
        out.ports = { from, to };
      else return "expected a port or a range of ports from 1024 to 65535 (like 4100-4199)";
      return;
    }
    case "user":
      if (typeof item === "string" && USER.test(item) && item !== "root") out.user = item;
      else return "expected a Unix user name other than root";
      return;
    case "label":
      if (typeof item === "string" && item.trim()) out.label = item.trim();
      else return "expected a label's name";
      return;
    case "authors": {
      const list = typeof item === "string" ? item.split(",").map((a) => a.trim()) : item;
      if (!Array.isArray(list) || list.length === 0) return "expected a list of associations and user:<login> entries";
      const bad = list.find(
        (a) => typeof a !== "string" || !(ASSOCIATIONS.includes(a) || /^user:[A-Za-z0-9_.[\]{}:-]{1,128}$/.test(a)),
      );
      if (bad !== undefined)
        return `expected ${ASSOCIATIONS.slice(0, 4).join(", ")}, … or user:<login> (${show(bad)} is neither)`;
      out.authors = list;
      return;
    }
    case "fromForks":
    case "comment":
    case "gate":
      if (typeof item === "boolean") out[key] = item;
      else return "expected true or false";
      return;
    case "env":
      return envProblem(item, out);
  }
}

function urlProblem(item: unknown, out: Record<string, unknown>): string | undefined {
  const text = typeof item === "string" ? item : "";
  const sample = text.replaceAll("{number}", "1").replaceAll("{branch}", "b").replaceAll("{app}", "a");
  const url = URL.canParse(sample) ? new URL(sample) : undefined;
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:"))
    return `expected an http(s) URL with ${PLACEHOLDERS.join(", ")}`;
  // The host's first label is the preview's own: a placeholder anywhere else could name another site's host.
  const host = /^https?:\/\/([^/:?#]*)/.exec(text)?.[1] ?? "";
  const [first = "", ...rest] = host.split(".");
  if (!/\{(number|branch)\}/.test(first) || rest.some((label) => /\{(number|branch)\}/.test(label)) || rest.length < 1)
    return "expected {number} or {branch} in the first label of the host only (like https://pr-{number}.preview.example.com)";
  if (!/^[a-z0-9{}-]+$/i.test(first) || !/^[a-z0-9.{}-]+$/i.test(rest.join(".")))
    return "expected a host of letters, digits, dashes and placeholders";
  out.url = text;
}

function envProblem(item: unknown, out: Record<string, unknown>): string | undefined {
  if (item === null || typeof item !== "object" || Array.isArray(item))
    return "expected a mapping of variables to a value or { file }";
  const env: Record<string, string | { file: string }> = {};
  for (const [name, value] of Object.entries(item)) {
    if (!VARIABLE.test(name)) return `expected variable names (${show(name)} is not one)`;
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") env[name] = String(value);
    else if (value && typeof value === "object" && typeof (value as { file?: unknown }).file === "string")
      env[name] = { file: (value as { file: string }).file };
    else return `expected ${name} to be a value or { file: <path> }`;
  }
  out.env = env;
}

/**
 * What `service check` refuses in an app's previews beyond the key itself: a path inside the repository, its
 * releases or `.service`; ports that hold the service's own.
 */
export function previewsProblems(
  previews: PreviewsKey,
  app: { repoPath: string; releases?: { path: string } },
  service: { cwd: string; ports: number[] },
): string[] {
  const problems: string[] = [];
  const path = resolve(previews.path);
  const holders: [string, string][] = [
    [resolve(app.repoPath), "the repository (repoPath)"],
    [resolve(service.cwd, ".service"), "the service's .service directory"],
  ];
  if (app.releases) holders.push([resolve(app.releases.path), "the releases' path"]);
  for (const [dir, name] of holders)
    if (path === dir || isInside(path, dir) || isInside(dir, path))
      problems.push(`previews: path ${path} must not be inside ${name} (${dir}) nor hold it`);
  const mine = service.ports.filter((port) => port >= previews.ports.from && port <= previews.ports.to);
  if (mine.length > 0)
    problems.push(
      `previews: ports ${previews.ports.from}-${previews.ports.to} hold the service's own port ${mine.join(", ")}`,
    );
  return problems;
}
