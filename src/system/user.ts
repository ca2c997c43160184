import { readFileSync } from "node:fs";
import { userInfo } from "node:os";
import { runSync } from "./run-sync.ts";

/** The passwd entries as [name, uid] (the local file; `idOf` below also sees directory users). */
export function passwdEntries(): [string, string][] {
  try {
    return readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .map((line) => line.split(":"))
      .filter((fields) => fields.length > 2)
      .map((fields) => [fields[0]!, fields[2]!]);
  } catch {
    return [];
  }
}

/** `id` with these arguments: its output, or undefined when it fails or is not installed. */
export function idOf(...args: string[]): string | undefined {
  const result = runSync(["id", ...args]);
  return result.status === 0 ? result.stdout.trim() || undefined : undefined;
}

/** The name of this process's user, looked up by uid (passwd, then `id -un`); undefined when it has none. */
export function currentUserName(): string | undefined {
  const uid = String(process.getuid?.());
  return passwdEntries().find(([, entry]) => entry === uid)?.[0] ?? idOf("-un");
}

let known: string | undefined;

/**
 * The unix user this process runs as, as logs and records name who acted. The runtime's own user info says
 * "unknown" when USER is unset (a systemd unit, `env -i`), so the name is then looked up by uid.
 */
export function unixUser(): string {
  if (known) return known;
  let name: string | undefined;
  try {
    name = userInfo().username;
  } catch {}
  if (!name || name === "unknown") name = currentUserName();
  known = name ?? `uid ${process.getuid?.() ?? "?"}`;
  return known;
}
