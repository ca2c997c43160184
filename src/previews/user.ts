/**
 * The Unix user previews run as (docs/previews.md "The wall"): a command wrapped to run as `previews.user`
 * (setpriv when the service is root, else `sudo -n -u`), and the files of the service that user can read.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

/** The command that runs `argv` as `user`: setpriv as root (no PAM, no login shell), sudo's rule otherwise. */
export function asUser(user: string | undefined, argv: string[]): string[] {
  if (!user) return argv;
  if (process.getuid?.() === 0)
    return ["setpriv", `--reuid=${user}`, `--regid=${groupOf(user) ?? user}`, "--init-groups", "--", ...argv];
  return ["sudo", "-n", "-u", user, "--", ...argv];
}

/** The user's uid and primary gid, or undefined when there is no such user. */
export function idsOf(user: string): { uid: number; gid: number } | undefined {
  const uid = id("-u", user);
  const gid = id("-g", user);
  return uid === undefined || gid === undefined ? undefined : { uid: Number(uid), gid: Number(gid) };
}

function groupOf(user: string): string | undefined {
  return id("-g", user);
}

function id(flag: string, user: string): string | undefined {
  const result = spawnSync("id", [flag, "--", user], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return result.status === 0 ? result.stdout.trim() || undefined : undefined;
}

/** Most files named: a world-readable tree is said by its first ones. */
const MAX_NAMED = 20;

/**
 * The files under `paths` that `user` can read (as the kernel decides for that user), at most MAX_NAMED; undefined
 * when it cannot be asked (not root, no such user).
 */
export function readableBy(user: string, paths: string[]): string[] | undefined {
  if (process.getuid?.() !== 0 || !idsOf(user)) return undefined;
  const present = paths.filter((path) => existsSync(path));
  if (present.length === 0) return [];
  const argv = asUser(user, ["find", ...present, "-maxdepth", "4", "-type", "f", "-readable", "-print"]);
  const result = spawnSync(argv[0]!, argv.slice(1), {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
    timeout: 30_000,
    maxBuffer: 4 * 1024 * 1024,
  });
  return (result.stdout ?? "").split("\n").filter(Boolean).slice(0, MAX_NAMED);
}
