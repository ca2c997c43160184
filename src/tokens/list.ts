/**
 * The `tokens` key (docs/admin.md "Tokens"): each entry's name, role, apps and file, every value read from its file
 * (0600, the first line trimmed, at least 16 characters), and the problems that refuse the list at start and in
 * `service check`. A value is never put in a message.
 */
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { fileStamp, readNoFollow } from "../system/files.ts";
import { WEAK_SECRET_LENGTH } from "../config/secret.ts";
import { ROLES, type Role, type Scope } from "./scope.ts";

/** A token as configured, its file resolved. */
export interface TokenSpec extends Scope {
  file: string;
}

/** A token's name: shown in actors (`token:<name>@…`), messages and metric labels. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$/;

const FIELDS = new Set(["name", "role", "apps", "file"]);

const isMapping = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** The entries of `tokens` as specs; what is wrong with them goes to `problems`, each on one line. */
export function parseTokens(entries: unknown, apps: string[], cwd: string, problems: string[]): TokenSpec[] {
  if (entries === undefined) return [];
  if (!Array.isArray(entries)) {
    problems.push("tokens: expected a list of { name, role, apps?, file }");
    return [];
  }
  const specs: TokenSpec[] = [];
  entries.forEach((entry, index) => {
    const where = `tokens, entry ${index + 1}`;
    if (!isMapping(entry)) {
      problems.push(`${where}: expected a mapping { name, role, apps?, file }`);
      return;
    }
    const { name, role, apps: scoped, file } = entry;
    const label = typeof name === "string" ? `token ${JSON.stringify(name)}` : where;
    const before = problems.length;
    for (const key of Object.keys(entry))
      if (!FIELDS.has(key)) problems.push(`${label}: unknown key "${key}" (allowed: name, role, apps, file)`);
    if (typeof name !== "string" || !NAME.test(name))
      problems.push(`${where}: name must be 1 to 40 letters, digits, ".", "_" or "-", starting with a letter or digit`);
    else if (name === "admin") problems.push(`${label}: the name "admin" is the admin token's; choose another`);
    if (!ROLES.includes(role as Role))
      problems.push(`${label}: unknown role ${JSON.stringify(role)} (one of ${ROLES.join(", ")})`);
    if (scoped !== undefined) {
      if (!Array.isArray(scoped) || scoped.length === 0 || !scoped.every((app) => typeof app === "string"))
        problems.push(`${label}: apps must be a list of app names`);
      else
        for (const app of scoped)
          if (!apps.includes(app))
            problems.push(`${label}: unknown app ${JSON.stringify(app)} in apps (the apps: ${apps.join(", ")})`);
    }
    if (typeof file !== "string" || !file) problems.push(`${label}: file must be the path of the file holding it`);
    if (problems.length > before) return;
    const spec: TokenSpec = { name: name as string, role: role as Role, file: resolve(cwd, file as string) };
    if (scoped !== undefined) spec.apps = [...new Set(scoped as string[])];
    specs.push(spec);
  });
  for (const [i, spec] of specs.entries())
    if (specs.findIndex((other) => other.name === spec.name) < i)
      problems.push(`token "${spec.name}": two tokens are named "${spec.name}"`);
  return specs;
}

/** A token file's value, or why it cannot be used: missing, unreadable, readable by others, under 16 characters. */
export function readTokenFile(spec: TokenSpec): { value: string } | { problem: string } {
  return readPrivateSecret(spec.file, `token "${spec.name}": ${spec.file}`, "a token");
}

/**
 * A secret file's first line, trimmed, or why it cannot be used (`of` names it): missing, unreadable, readable by
 * others (not 0600), under 16 characters. `what` names what the secret is in that last message.
 */
export function readPrivateSecret(file: string, of: string, what: string): { value: string } | { problem: string } {
  let text: string;
  let mode: number;
  try {
    // A link the operator made is followed; a FIFO or a device is refused, never waited on.
    text = readNoFollow(file, true);
    mode = statSync(file).mode & 0o777;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      problem: `${of} ${code === "ENOENT" ? "does not exist" : `cannot be read (${code ?? (error as Error).message})`}`,
    };
  }
  if ((mode & 0o077) !== 0)
    return {
      problem: `${of} can be read by other users (mode ${mode.toString(8).padStart(4, "0")}): run chmod 600 ${file}`,
    };
  const value = (text.split("\n")[0] ?? "").trim();
  if (value.length < WEAK_SECRET_LENGTH)
    return {
      problem: `${of}: its first line has ${value.length} characters; ${what} needs at least ${WEAK_SECRET_LENGTH}`,
    };
  return { value };
}

/** A secret a token must not equal, and what it is (`the admin token`, `the webhook secret of app "web"`). */
export interface Reserved {
  what: string;
  value: string;
}

/**
 * The values of `specs`, read now; every problem of theirs (files, a value two tokens share, a value that is the
 * admin token or a webhook secret) goes to `problems`. With `refuse`, a value with such a problem is left out (a
 * running server following its config keeps the others); without it the caller refuses the whole list.
 */
export function readTokens(
  specs: TokenSpec[],
  reserved: Reserved[],
  problems: string[],
  refuse = false,
): Map<string, string> {
  const values = new Map<string, string>();
  for (const spec of specs) {
    const read = readTokenFile(spec);
    if ("problem" in read) {
      problems.push(read.problem);
      continue;
    }
    const same = reserved.find((secret) => secret.value === read.value);
    if (same) problems.push(`token "${spec.name}": its value is ${same.what}; give it a value of its own`);
    const twin = [...values].find(([, value]) => value === read.value);
    if (twin) problems.push(`token "${spec.name}": its value is token "${twin[0]}"'s; each token needs its own`);
    if (!refuse || !(same || twin)) values.set(spec.name, read.value);
  }
  return values;
}

/** One token as the listener holds it: its value follows its file. */
interface Held {
  spec: TokenSpec;
  stamp: string | undefined;
  value: string | undefined;
}

/** What a rotated value is checked against, and where its refusal is said. */
export interface RotationGuard {
  reserved: () => Reserved[];
  warn: (line: string) => void;
  /** A token's value came (`added`), changed (`rotated`) or went (`revoked`): for the audit trail. */
  changed?: (name: string, how: "added" | "rotated" | "revoked") => void;
}

/**
 * The tokens in force. A file is read again when it changes (one stat per token and look): a new value rotates
 * the token, a file removed, emptied, shortened or opened to other users revokes it until it is right again; so
 * does a new value that is another token's, the admin token or a webhook secret (as at start), said by `guard`.
 */
export class TokenSet {
  private readonly held: Held[];

  constructor(
    specs: TokenSpec[],
    values: Map<string, string>,
    private readonly guard?: RotationGuard,
  ) {
    this.held = specs.map((spec) => ({ spec, stamp: fileStamp(spec.file), value: values.get(spec.name) }));
  }

  /** Each token with its current value (undefined: revoked for now). */
  current(): { spec: TokenSpec; value: string | undefined }[] {
    for (const held of this.held) {
      const stamp = fileStamp(held.spec.file);
      if (stamp === held.stamp) continue;
      held.stamp = stamp;
      const read = stamp === undefined ? undefined : readTokenFile(held.spec);
      const before = held.value;
      held.value = read && "value" in read ? this.own(held, read.value) : undefined;
      if (held.value !== before)
        this.guard?.changed?.(
          held.spec.name,
          before === undefined ? "added" : held.value === undefined ? "revoked" : "rotated",
        );
      if (read && "problem" in read) this.guard?.warn(`${read.problem}: revoked until it is right`);
    }
    return this.held.map(({ spec, value }) => ({ spec, value }));
  }

  /** `value`, unless it is another token's or a reserved secret: then none (revoked), said once. */
  private own(held: Held, value: string): string | undefined {
    const others = new Map(this.held.filter((h) => h !== held && h.value).map((h) => [h.spec.name, h.value!]));
    const same = this.guard?.reserved().find((secret) => secret.value === value);
    const twin = [...others].find(([, other]) => other === value);
    const clash = same ? `its new value is ${same.what}` : twin ? `its new value is token "${twin[0]}"'s` : undefined;
    if (!clash) return value;
    this.guard?.warn(`token "${held.spec.name}": ${clash}; revoked until it has a value of its own`);
    return undefined;
  }

  get size(): number {
    return this.held.length;
  }
}

/** `service check`'s line of the tokens: names, roles and apps, never values. */
export function describeTokens(specs: TokenSpec[]): string {
  if (specs.length === 0) return "(none)";
  return specs.map((spec) => `${spec.name} (${spec.role}${spec.apps ? `: ${spec.apps.join(", ")}` : ""})`).join(", ");
}
