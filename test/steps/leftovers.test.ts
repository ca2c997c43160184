/**
 * docs/production.md "Limits", what a deploy leaves running: after an ok deploy it is kept in the app's own group under
 * `limits.kept` (never unlimited), after a failed one it is stopped; `limits.leftovers` chooses otherwise. The kept
 * group outlives the service's restarts, and what an earlier deploy kept is left alone. cgroup v1 as root, as the
 * suite runs; skipped where this process cannot make groups.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { lastLine, post, runCli, SECRET, startServer, tempDir, waitFor } from "../_support/helpers.ts";
import {
  cgroupsHere,
  dropGroup,
  ended,
  groupDirs,
  groupOf,
  helperPrograms,
  keptGroupIn,
  limited,
  memoryGroupOf,
} from "../_support/limits.ts";

const usable = cgroupsHere();
if (!usable) console.warn("the leftovers tests skipped: no writable cgroup v1 memory and pids hierarchy as root here");

// The interpreter itself, not a wrapper that starts it (a version manager's shim forks): its pid is the program's.
const python = Bun.spawnSync(["python3", "-c", "import os, sys; print(os.path.realpath(sys.executable))"])
  .stdout.toString()
  .trim();
/** The command name the kernel gives the interpreter (`/proc/<pid>/comm`: 15 characters at most). */
const pythonName = basename(python).slice(0, 15);

/** A `nohup sleep` as found: still nohup, or sleep once it has exec'd it. */
const sleeping = "\\((nohup|sleep)\\)";

const pidIn = (file: string) => Number(readFileSync(file, "utf8").trim());
const fileText = (file: string) => (existsSync(file) ? readFileSync(file, "utf8") : undefined);

describe("what a deploy leaves running", () => {
  test.skipIf(!usable)(
    "after an ok deploy it is kept under limits.kept: a fork loop stays capped at its tasks, an allocation at its memory",
    async () => {
      const dir = tempDir("service-leftovers-");
      const { forker, allocator } = helperPrograms(dir);
      const go = join(dir, "go");
      const s = limited(
        [
          `${python} ${forker} ${go} ${dir}/fork.out > /dev/null 2>&1 < /dev/null & echo $! > ${dir}/fork.pid`,
          `${python} ${allocator} ${go} ${dir}/alloc.out > /dev/null 2>&1 < /dev/null & echo $! > ${dir}/alloc.pid`,
          // Ends once both run (at most a minute).
          `i=0; while [ $i -lt 1200 ] && ! [ -f ${dir}/fork.out.ready -a -f ${dir}/alloc.out.ready ]; do i=$((i+1)); sleep 0.05; done`,
        ].join("\n"),
        ["memory: 256M", "tasks: 200", "kept: { memory: 64M, tasks: 24 }"],
      );
      const deployed = await runCli(["deploy"], { cwd: s.cwd, env: s.env });
      const kept = keptGroupIn(deployed.stdout);
      try {
        expect(deployed.code).toBe(0);
        expect(kept).toBeDefined();
        const forkPid = pidIn(`${dir}/fork.pid`);
        const allocPid = pidIn(`${dir}/alloc.pid`);
        expect(deployed.stdout).toContain(
          `[deploy] kept what the deploy left running, in ${kept} (limits.kept: memory 64M, tasks 24): `,
        );
        expect(deployed.stdout).toContain(`${forkPid} (${pythonName})`);
        expect(deployed.stdout).toContain(`${allocPid} (${pythonName})`);
        for (const pid of [forkPid, allocPid]) {
          expect(memoryGroupOf(pid)).toEndWith(`/${kept}`);
          expect(groupOf(pid, "pids")).toEndWith(`/${kept}`);
        }
        // Told to act only now: everything they do happens under the kept group's limits.
        writeFileSync(go, "");
        const forked = await waitFor(() => fileText(`${dir}/fork.out`), "the fork loop's count");
        const [, made, failed] = /forked (\d+) failed (\d+)/.exec(forked)!;
        expect(Number(made)).toBeLessThan(24);
        expect(Number(failed)).toBeGreaterThan(0);
        const pidsDir = groupDirs(kept!).find((d) => d.startsWith("/sys/fs/cgroup/pids/"))!;
        expect(readFileSync(join(pidsDir, "pids.events"), "utf8")).toMatch(/^max [1-9]/m);
        await waitFor(() => ended(allocPid), "the allocation killed at the kept group's memory");
        expect(existsSync(`${dir}/alloc.out`)).toBe(false);
        const memoryDir = groupDirs(kept!).find((d) => d.startsWith("/sys/fs/cgroup/memory/"))!;
        expect(readFileSync(join(memoryDir, "memory.oom_control"), "utf8")).toMatch(/^oom_kill [1-9]/m);
      } finally {
        if (kept) await dropGroup(kept);
      }
    },
  );

  test.skipIf(!usable)(
    "after a failed deploy a fork loop and an allocation it left running are stopped, and said",
    async () => {
      const dir = tempDir("service-leftovers-");
      const { forker, allocator } = helperPrograms(dir);
      const go = join(dir, "go");
      writeFileSync(go, "");
      const s = limited(
        [
          `${python} ${forker} ${go} ${dir}/fork.out > /dev/null 2>&1 < /dev/null & echo $! > ${dir}/fork.pid`,
          `${python} ${allocator} ${go} ${dir}/alloc.out > /dev/null 2>&1 < /dev/null & echo $! > ${dir}/alloc.pid`,
          // Fails once both are under way (at most a minute).
          `i=0; while [ $i -lt 1200 ] && ! [ -f ${dir}/fork.out -a -f ${dir}/alloc.out ]; do i=$((i+1)); sleep 0.05; done; exit 3`,
        ].join("\n"),
        ["memory: 256M", "tasks: 200"],
      );
      const deployed = await runCli(["deploy"], { cwd: s.cwd, env: s.env });
      expect(deployed.code).not.toBe(0);
      const forkPid = pidIn(`${dir}/fork.pid`);
      const allocPid = pidIn(`${dir}/alloc.pid`);
      const children = /children ([\d ]+)/
        .exec(readFileSync(`${dir}/fork.out`, "utf8"))![1]!
        .split(" ")
        .map(Number);
      expect(children.length).toBe(100);
      expect(readFileSync(`${dir}/alloc.out`, "utf8")).toBe("allocated\n");
      expect(deployed.stdout).toContain(
        `[deploy] stopped what the failed deploy left running: ${forkPid} (${pythonName}), `,
      );
      expect(deployed.stdout).toMatch(/left running: .* and \d+ more \(102 processes\)\n/);
      for (const pid of [forkPid, allocPid, ...children]) expect(ended(pid)).toBe(true);
      expect(deployed.stdout).not.toContain("service-kept-");
    },
  );

  test.skipIf(!usable)(
    "a restart of the service leaves a kept process alive, and a later failed deploy stops only its own",
    async () => {
      const s = limited('nohup sleep 300 > /dev/null 2>&1 & echo $! >> "$OUT"; test ! -f "$OUT.fail"', [
        "memory: 128M",
      ]);
      const out = join(s.cwd, "sleep.pids");
      const env = { ...s.env, OUT: out };
      let kept: string | undefined;
      try {
        let server = await startServer(s.cwd, env);
        const first = await (await post(`${server.url}/`, { secret: SECRET })).text();
        kept = keptGroupIn(first);
        expect(lastLine(first)).toBe("[done] ok=true exitCode=0");
        const [keptPid] = readFileSync(out, "utf8").split("\n").map(Number);
        expect(first).toContain(`[deploy] kept what the deploy left running, in ${kept} (limits.kept: tasks 4096): `);
        expect(first).toMatch(new RegExp(`tasks 4096\\): ${keptPid} ${sleeping}\n`));
        await server.stop();
        server = await startServer(s.cwd, env);
        writeFileSync(`${out}.fail`, "");
        const second = await (await post(`${server.url}/`, { secret: SECRET })).text();
        await server.stop();
        const ownPid = readFileSync(out, "utf8").split("\n").map(Number)[1];
        expect(lastLine(second)).toBe("[done] ok=false exitCode=1");
        expect(second).toMatch(
          new RegExp(`\\[deploy\\] stopped what the failed deploy left running: ${ownPid} ${sleeping}\n`),
        );
        expect(ended(ownPid!)).toBe(true);
        expect(ended(keptPid!)).toBe(false);
        // limits.kept's default caps tasks only: in the memory hierarchy it is in the service's own group.
        expect(groupOf(keptPid!, "pids")).toEndWith(`/${kept}`);
        expect(memoryGroupOf(keptPid!)).toBe(memoryGroupOf(process.pid));
        expect(readFileSync(join(groupDirs(kept!).find((d) => d.includes("/pids/"))!, "pids.max"), "utf8")).toBe(
          "4096\n",
        );
      } finally {
        if (kept) await dropGroup(kept);
      }
    },
  );

  test.skipIf(!usable)("limits.leftovers: kill stops what an ok deploy left running too", async () => {
    const s = limited('nohup sleep 300 > /dev/null 2>&1 & echo $! > "$OUT"', ["tasks: 50", "leftovers: kill"]);
    const out = join(s.cwd, "sleep.pid");
    const deployed = await runCli(["deploy"], { cwd: s.cwd, env: { ...s.env, OUT: out } });
    expect(deployed.code).toBe(0);
    const pid = pidIn(out);
    expect(deployed.stdout).toMatch(
      new RegExp(`\\[deploy\\] stopped what the deploy left running: ${pid} ${sleeping}\n`),
    );
    expect(ended(pid)).toBe(true);
  });
});
