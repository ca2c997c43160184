/**
 * docs/production.md "Limits": a deploy's scripts run under `limits`, enforced by the kernel. Memory and tasks
 * through the machine's cgroups (v1 here, as on CI; the unified v2 path is proven only where a machine offers its
 * controllers), nice and ioNice as the scripts' own priority; limits that cannot be enforced refuse the deploy.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseEnv, CLI, lastLine, post, runCli, SECRET, startServer, tempDir, waitFor } from "../_support/helpers.ts";
import { cgroupsHere, limited, memoryGroupOf } from "../_support/limits.ts";
import { spawnDeploy } from "../_support/queueing.ts";
import { deployRecords } from "../_support/webhook-fixtures.ts";

const usable = cgroupsHere();
if (!usable)
  console.warn("the cgroup limit tests skipped: no writable cgroup v1 memory and pids hierarchy as root here");

describe("limits", () => {
  test.skipIf(!usable)(
    "a script over limits.memory is killed by the kernel and said so; the record says killedBy memory; the server lives",
    async () => {
      const s = limited(`python3 -c "b = [bytearray(8 << 20) for i in range(40)]; print('allocated')"`, [
        "memory: 64M",
      ]);
      await using server = await startServer(s.cwd, s.env);
      const text = await (await post(`${server.url}/`, { secret: SECRET })).text();
      expect(text).toContain("[deploy] limits: memory 64M");
      expect(text).toMatch(/\[run\] killed: out of memory \(limit 64M\); exit code 137/);
      expect(text).not.toContain("\nallocated\n");
      expect(lastLine(text)).toBe("[done] ok=false exitCode=137");
      const [record] = deployRecords(s.cwd);
      expect(record.result).toMatchObject({
        ok: false,
        killedBy: "memory",
        error: "killed: out of memory (limit 64M)",
      });
      // The server lived through it: it answers the next deploy.
      expect(lastLine(await (await post(`${server.url}/`, { secret: SECRET })).text())).toBe(
        "[done] ok=false exitCode=137",
      );
    },
  );

  test.skipIf(!usable)(
    "limits.tasks ends a fork loop at the limit and says so; the record says killedBy tasks; the server lives",
    async () => {
      // Bounded: at most 200 children, each a short sleep; the limit stops it long before.
      const s = limited('i=0; while [ $i -lt 200 ]; do sleep 30 & i=$((i+1)); done; echo "forked $i"', ["tasks: 20"]);
      await using server = await startServer(s.cwd, s.env);
      const text = await (await post(`${server.url}/`, { secret: SECRET })).text();
      expect(text).not.toContain("forked 200");
      expect(text).toMatch(/\[run\] killed: task limit \(20\) reached; exit code \d+ after/);
      expect(lastLine(text)).not.toBe("[done] ok=true exitCode=0");
      const [record] = deployRecords(s.cwd);
      expect(record.result).toMatchObject({ ok: false, killedBy: "tasks", error: "killed: task limit (20) reached" });
      expect((await fetch(`${server.url}/nothing`, { method: "POST" })).status).toBe(404);
    },
  );

  test.skipIf(!usable)(
    "limits.cpu: the script's group gets its share of CPU time, and the kernel throttles a script that wants more",
    async () => {
      // The script finds its own cpu group (v1 `cpu`, or v2's one), then spins until the kernel says it throttled
      // the group (cpu.stat nr_throttled), at most 2 000 rounds (a handful are enough): an event, not a time.
      const probe = join(tempDir("service-cpu-"), "probe.sh");
      writeFileSync(
        probe,
        [
          "g=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ {print $3}' /proc/self/cgroup)",
          `if [ -n "$g" ]; then d=/sys/fs/cgroup/cpu$g; else d=/sys/fs/cgroup$(awk -F: '$1 == "0" {print $3}' /proc/self/cgroup); fi`,
          'echo "quota $(cat $d/cpu.cfs_quota_us 2>/dev/null || cat $d/cpu.max)"',
          "i=0",
          `while [ "$(awk '/^nr_throttled/ {print $2}' $d/cpu.stat)" = 0 ] && [ $i -lt 2000 ]; do i=$((i+1)); done`,
          "grep '^nr_throttled' $d/cpu.stat",
          "",
        ].join("\n"),
      );
      const s = limited(`sh ${probe}`, ["cpu: 0.1"]);
      const deployed = await runCli(["deploy"], { cwd: s.cwd, env: s.env });
      expect(deployed.stdout).toContain("[deploy] limits: cpu 0.1");
      // A tenth of a CPU: 10 ms of each 100 ms period (v1 cfs quota), or "10000 100000" (v2 cpu.max).
      expect(deployed.stdout).toMatch(/\nquota 10000( 100000)?\n/);
      const throttled = /\nnr_throttled (\d+)\n/.exec(deployed.stdout)?.[1];
      expect(Number(throttled)).toBeGreaterThan(0);
      expect(deployed.code).toBe(0);
    },
  );

  test("nice and ioNice are the script's own priority, seen in /proc", async () => {
    const s = limited('cut -d" " -f19 /proc/$$/stat > "$OUT.nice"; ionice -p $$ > "$OUT.io"', [
      "nice: 7",
      "ioNice: idle",
    ]);
    const out = join(s.cwd, "prio");
    const deployed = await runCli(["deploy"], { cwd: s.cwd, env: { ...s.env, OUT: out } });
    expect(deployed.code).toBe(0);
    expect(deployed.stdout).toContain("[deploy] limits: nice 7, ioNice idle");
    expect(readFileSync(`${out}.nice`, "utf8").trim()).toBe("7");
    expect(readFileSync(`${out}.io`, "utf8").trim()).toBe("idle");
  });

  test.skipIf(!usable)(
    "limits.leftovers: move-out: the deploy's group is removed when it ends; a daemon left running survives, moved out of it",
    async () => {
      const s = limited('nohup sleep 300 > /dev/null 2>&1 & echo $! > "$OUT"', ["memory: 256M", "leftovers: move-out"]);
      const out = join(s.cwd, "daemon.pid");
      const deployed = await runCli(["deploy"], { cwd: s.cwd, env: { ...s.env, OUT: out } });
      expect(deployed.code).toBe(0);
      const pid = Number(readFileSync(out, "utf8"));
      expect(pid).toBeGreaterThan(1);
      try {
        expect(existsSync(`/proc/${pid}`)).toBe(true);
        expect(memoryGroupOf(pid)).not.toMatch(/service-\d+-/);
        expect(deployed.stdout).toContain(`moved out of the deploy's limits into the service's own group: ${pid}`);
        const id = deployRecords(s.cwd)[0].id.slice(0, 8);
        const groups = readFileSync("/proc/self/mountinfo", "utf8").includes("/sys/fs/cgroup/memory")
          ? Bun.spawnSync([
              "find",
              "/sys/fs/cgroup/memory",
              "-maxdepth",
              "4",
              "-name",
              `service-*-${id}`,
            ]).stdout.toString()
          : "";
        expect(groups.trim()).toBe("");
      } finally {
        process.kill(pid, "SIGKILL");
      }
    },
  );

  test.skipIf(!usable)(
    "the group of a deploy whose process was killed -9 is removed at the next start, and what ran in it stopped",
    async () => {
      // The script waits for a file the test never writes: only the kill at the next start ends it.
      const s = limited('echo $$ > "$OUT"; while [ ! -f "$OUT.never" ]; do sleep 0.05; done', ["memory: 128M"]);
      const out = join(s.cwd, "script.pid");
      const cli = spawnDeploy(s.cwd, { ...s.env, OUT: out });
      const pid = Number(await waitFor(() => existsSync(out) && readFileSync(out, "utf8").trim(), "the script"));
      const group = await waitFor(() => memoryGroupOf(pid)?.match(/service-\d+-[0-9a-f-]{8}/)?.[0], "its group");
      cli.proc.kill("SIGKILL");
      await cli.proc.exited;
      expect(existsSync(`/proc/${pid}`)).toBe(true);
      await using server = await startServer(s.cwd, s.env);
      await waitFor(
        () => !existsSync(`/proc/${pid}`) || readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z "),
        "the script stopped",
      );
      expect(server.stdout.text + server.stderr.text).toContain(group);
    },
  );

  test("limits that cannot be enforced refuse the deploy, and service check says why and the fix", async () => {
    // Where cgroups are usable, a private mount namespace makes the hierarchies read-only for the service alone.
    const s = limited("echo ran", ["memory: 64M", "tasks: 50"]);
    const readOnly = usable
      ? [
          "unshare",
          "-m",
          "sh",
          "-c",
          'for d in /sys/fs/cgroup/*; do mount --bind "$d" "$d" && mount -o remount,bind,ro "$d"; done; exec "$@"',
          "sh",
        ]
      : [];
    if (usable && Bun.spawnSync([...readOnly, "true"]).exitCode !== 0) {
      console.warn("the read-only cgroup test skipped: unshare -m cannot be used here");
      return;
    }
    const run = (args: string[]) => Bun.spawnSync([...readOnly, ...CLI, ...args], { cwd: s.cwd, env: baseEnv(s.env) });
    const deployed = run(["deploy"]);
    const text = deployed.stdout.toString();
    expect(text).toContain("limits: the kernel's cgroups cannot be used for");
    expect(text).toContain("nothing runs");
    expect(text).not.toContain("\nran\n");
    expect(deployed.exitCode).toBe(1);
    const checked = run(["check"]);
    expect(checked.exitCode).not.toBe(0);
    expect(checked.stdout.toString() + checked.stderr.toString()).toContain("Delegate=yes");
  });

  test("limits are read from the service's own config: the repository's file cannot lift them", async () => {
    const s = limited('cut -d" " -f19 /proc/$$/stat > "$OUT"', ["nice: 9"]);
    s.repo.push({ "service.yaml": "limits: { nice: 0 }\nrunScript: cut -d' ' -f19 /proc/$$/stat > \"$OUT\"\n" });
    const out = join(s.cwd, "nice");
    expect((await runCli(["deploy"], { cwd: s.cwd, env: { ...s.env, OUT: out } })).code).toBe(0);
    expect(readFileSync(out, "utf8").trim()).toBe("9");
  });

  test("leftovers and kept come from the environment too, and the deploy says them", async () => {
    const s = limited("true", ["nice: 5"]);
    const env = { ...s.env, SERVICE_LIMITS_LEFTOVERS: "move-out", SERVICE_LIMITS_KEPT: "memory=1G, tasks=10" };
    const deployed = await runCli(["deploy"], { cwd: s.cwd, env });
    expect(deployed.stdout).toContain("[deploy] limits: nice 5, leftovers move-out, kept (memory 1G, tasks 10)\n");
    const wrong = await runCli(["check"], { cwd: s.cwd, env: { ...env, SERVICE_LIMITS_KEPT: "lots" } });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stdout + wrong.stderr).toContain(
      'environment variable SERVICE_LIMITS_KEPT: expected a mapping (memory, cpu, tasks), got "lots"',
    );
  });

  test("a bad limit is a configuration error naming it", async () => {
    const s = limited("true", ["memory: lots", "nice: 30", "leftovers: sometimes", "kept: { nice: 3, tasks: 0 }"]);
    const checked = await runCli(["check"], { cwd: s.cwd, env: s.env });
    expect(checked.code).not.toBe(0);
    const said = checked.stdout + checked.stderr;
    expect(said).toContain('memory: expected a size of at least 4M (like 512M or 2G), got "lots"');
    expect(said).toContain("nice: expected a niceness from 0 to 19, got 30");
    expect(said).toContain('leftovers: expected kill, keep or move-out, got "sometimes"');
    expect(said).toContain('kept: unknown key "nice" (allowed: memory, cpu, tasks)');
    expect(said).toContain("kept: tasks: expected a whole number of processes and threads, at least 1, got 0");
  });
});
