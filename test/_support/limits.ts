/**
 * The cgroup limits tests' fixtures (docs/production.md "Limits"): whether this machine lets the suite make groups
 * (cgroup v1 as root, as it runs), a service directory whose app runs a script under `limits`, the groups a process is
 * in, helper programs that fork or allocate once told to, and the removal of an app's kept group after a test.
 */
import { accessSync, constants, existsSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, SECRET, tempDir, waitFor } from "./helpers.ts";

/** Whether this process may make cgroups for memory and tasks (root, a writable hierarchy). */
export function cgroupsHere(): boolean {
  try {
    for (const dir of ["/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids"]) accessSync(dir, constants.W_OK);
    return process.getuid?.() === 0;
  } catch {
    return false;
  }
}

/** A service directory whose app runs `script` under `limits` (YAML lines). */
export function limited(script: string, limits: string[]) {
  const repo = makeRepo();
  const cwd = tempDir("service-limits-");
  writeFileSync(
    join(cwd, "service.yaml"),
    [
      `repoPath: ${repo.clone}`,
      "runScript: |",
      ...script.split("\n").map((l) => `  ${l}`),
      "limits:",
      ...limits.map((l) => `  ${l}`),
      "",
    ].join("\n"),
  );
  return { repo, cwd, env: { SERVICE_SECRET: SECRET, SERVICE_HOSTNAME: "127.0.0.1" } };
}

/** The cgroup v1 group of `pid` in the hierarchy of `controller` (`memory`, `pids`). */
export const groupOf = (pid: number, controller = "memory") =>
  readFileSync(`/proc/${pid}/cgroup`, "utf8")
    .split("\n")
    .find((line) => new RegExp(`^\\d+:([^:]*,)?${controller}(,[^:]*)?:`).test(line))
    ?.split(":")[2];

export const memoryGroupOf = (pid: number) => groupOf(pid, "memory");

/** Whether `pid` has ended (gone, or a zombie no one reaped yet). */
export function ended(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return true;
  }
}

/** The directories of the v1 group `name` beside this process's own groups, in each hierarchy that has it. */
export function groupDirs(name: string): string[] {
  return ["memory", "pids", "cpu"]
    .map((controller) => join(`/sys/fs/cgroup/${controller}`, groupOf(process.pid, controller) ?? "/", name))
    .filter((dir) => existsSync(dir));
}

/** Stops what runs in the group `name` and removes it (a kept group outlives the test's server). */
export async function dropGroup(name: string): Promise<void> {
  for (const dir of groupDirs(name)) {
    const pids = () => readFileSync(join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean).map(Number);
    await waitFor(() => {
      for (const pid of pids())
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
      return pids().length === 0;
    }, `the group ${dir} emptied`);
    rmdirSync(dir);
  }
}

/** The kept group a deploy's `[deploy] kept …` line names. */
export const keptGroupIn = (text: string) => /\bin (service-kept-[\w.-]+)/.exec(text)?.[1];

/**
 * Two helper programs, each saying it runs (`<out>.ready`), then waiting for `trigger` to exist (at most a minute) before it acts, then staying up for two
 * minutes: `forker` forks 100 children (each sleeping) and writes `forked <n> failed <n> children <pids…>`; `allocator`
 * takes 96 MB, 8 MB at a time, and writes `allocated`. Their results go to `<out>` (written whole, by a rename).
 */
export function helperPrograms(dir: string) {
  const common = [
    "import os, sys, time",
    "trigger, out = sys.argv[1], sys.argv[2]",
    "open(out + '.ready', 'w').close()",
    "for _ in range(1200):",
    "    if os.path.exists(trigger): break",
    "    time.sleep(0.05)",
    "def say(text):",
    "    open(out + '.tmp', 'w').write(text + '\\n')",
    "    os.rename(out + '.tmp', out)",
  ];
  const forker = join(dir, "forker.py");
  writeFileSync(
    forker,
    [
      ...common,
      "forked, failed, children = 0, 0, []",
      "for _ in range(100):",
      "    try:",
      "        pid = os.fork()",
      "    except OSError:",
      "        failed += 1",
      "        continue",
      "    if pid == 0:",
      "        time.sleep(120)",
      "        os._exit(0)",
      "    forked += 1",
      "    children.append(str(pid))",
      "say(f'forked {forked} failed {failed} children {\" \".join(children)}')",
      "time.sleep(120)",
      "",
    ].join("\n"),
  );
  const allocator = join(dir, "allocator.py");
  writeFileSync(
    allocator,
    [...common, "held = [bytearray(8 << 20) for _ in range(12)]", "say('allocated')", "time.sleep(120)", ""].join("\n"),
  );
  return { forker, allocator };
}
