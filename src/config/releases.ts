/**
 * The checks of the `releases` key (docs/releases.md) as a user writes it, in a file or the environment, and its
 * defaults. What the key does is releases/flow.ts.
 */
import { isAbsolute, normalize, resolve } from "node:path";
import { show } from "./show.ts";

/** Atomic releases (key `releases`, top level or per app; docs/releases.md). */
export interface ReleaseSettings {
  /** Holds `releases/`, `current` and `shared/`; absolute, or relative to the working directory. */
  path: string;
  /** Releases kept, at least 2. @default 5 */
  keep?: number;
  /** Paths linked into every release from `<path>/shared/`; a name ending in `/` is a directory. @default [] */
  shared?: string[];
  /**
   * Paths copied from the live release into each new one before its build (a build cache: node_modules, vendor);
   * never tracked ones, never overlapping `shared`. @default []
   */
  carry?: string[];
}

/** Releases kept when `keep` is not set. */
export const DEFAULT_KEEP = 5;
/** The fewest releases kept: the live one and the one to switch back to. */
export const MIN_KEEP = 2;

/** The variables of the key's fields: the path turns releases on, the others change the releases in force. */
export const RELEASES_ENV = {
  path: "SERVICE_RELEASES_PATH",
  keep: "SERVICE_RELEASES_KEEP",
  shared: "SERVICE_RELEASES_SHARED",
  carry: "SERVICE_RELEASES_CARRY",
} as const;

const FIELDS = ["path", "keep", "shared", "carry"];

const toCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * Checks a `releases` value; every problem goes to `problems`. `partial` (the environment's form): the path may be
 * missing, the fields set change the releases of the file.
 */
export function normalizeReleases(
  value: unknown,
  where: string,
  problems: string[],
  partial = false,
): Partial<ReleaseSettings> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    problems.push(
      `${where}: expected a mapping (path, keep, shared, carry), got ${Array.isArray(value) ? "a list" : show(value)}`,
    );
    return {};
  }
  const out: Partial<ReleaseSettings> = {};
  for (const [rawKey, item] of Object.entries(value)) {
    const key = toCamel(rawKey);
    const variable = RELEASES_ENV[key as keyof typeof RELEASES_ENV];
    const at = partial && variable ? `environment variable ${variable}` : `${where}: ${rawKey}`;
    if (!FIELDS.includes(key)) {
      problems.push(`${where}: unknown key "${rawKey}" (allowed: ${FIELDS.join(", ")})`);
      continue;
    }
    if (item === null || item === undefined) continue;
    if (key === "path") {
      if (typeof item === "string" && item.trim() !== "" && !item.includes("\0")) out.path = item;
      else problems.push(`${at}: expected a directory path, got ${show(item)}`);
    } else if (key === "keep") {
      const n = typeof item === "string" && /^\s*\d+\s*$/.test(item) ? Number(item) : item;
      if (typeof n === "number" && Number.isSafeInteger(n) && n >= MIN_KEEP) out.keep = n;
      else problems.push(`${at}: expected a whole number of releases, at least ${MIN_KEEP}, got ${show(item)}`);
    } else {
      const list = pathList(item, at, problems);
      if (list) out[key as "shared" | "carry"] = list;
    }
  }
  const overlap = carryOverlap(out);
  if (overlap) problems.push(`${partial ? `environment variable ${RELEASES_ENV.carry}` : where}: ${overlap}`);
  if (!partial && out.path === undefined && !problems.some((p) => p.startsWith(where)))
    problems.push(`${where}: "path" is required (the directory that holds releases/, current and shared/)`);
  return out;
}

/**
 * Why `carry` cannot go with `shared`, or undefined: a carried path copied over a shared link (or into it) would write
 * into `<path>/shared/`, which every release uses.
 */
export function carryOverlap(releases: Pick<ReleaseSettings, "shared" | "carry">): string | undefined {
  const bare = (entry: string) => entry.replace(/\/+$/, "");
  const within = (a: string, b: string) => a === b || a.startsWith(`${b}/`);
  for (const carried of releases.carry ?? [])
    for (const shared of releases.shared ?? [])
      if (within(bare(carried), bare(shared)) || within(bare(shared), bare(carried)))
        return `releases.carry: ${JSON.stringify(carried)} overlaps the shared path ${JSON.stringify(shared)}: a carried path must be apart from the shared ones`;
  return undefined;
}

/** The `shared` and `carry` entries: paths relative to a release, without `..`; a trailing `/` names a directory. */
function pathList(value: unknown, where: string, problems: string[]): string[] | undefined {
  const items = typeof value === "string" ? value.split(",") : value;
  if (!Array.isArray(items) || !items.every((item) => typeof item === "string")) {
    problems.push(
      `${where}: expected a list of paths relative to a release (like .env or storage/), got ${show(value)}`,
    );
    return undefined;
  }
  const out: string[] = [];
  for (const raw of items.map((item: string) => item.trim()).filter(Boolean)) {
    const bare = raw.replace(/\/+$/, "");
    const parts = bare.split("/");
    if (
      isAbsolute(raw) ||
      bare === "" ||
      parts.some((part) => part === ".." || part === "." || part === "") ||
      raw.includes("\0")
    ) {
      problems.push(
        `${where}: ${JSON.stringify(raw)} must be a path inside a release: relative, without "..", "." or empty parts`,
      );
      continue;
    }
    const entry = raw.endsWith("/") ? `${bare}/` : bare;
    if (parts[0] === ".git") problems.push(`${where}: ${JSON.stringify(raw)}: .git belongs to the release's checkout`);
    else if (out.some((other) => other.replace(/\/$/, "") === bare))
      problems.push(`${where}: ${JSON.stringify(raw)} is listed twice`);
    else out.push(entry);
  }
  return out;
}

/** The releases of an app with their defaults, the path absolute (relative to the working directory). */
export interface ResolvedReleases {
  path: string;
  keep: number;
  shared: string[];
  carry: string[];
}

export function resolveReleases(settings: ReleaseSettings, cwd: string): ResolvedReleases {
  return {
    path: normalize(resolve(cwd, settings.path)).replace(/(.)\/+$/, "$1"),
    keep: settings.keep ?? DEFAULT_KEEP,
    shared: settings.shared ?? [],
    carry: settings.carry ?? [],
  };
}
