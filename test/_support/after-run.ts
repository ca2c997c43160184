/**
 * What the fixtures leave to the end of the run: the temporary directories they made, the servers a test did not
 * stop. This file is the run's preload (bunfig.toml), and an afterAll of a preload runs once every file is done.
 * (bun test evaluates a shared module once per run: an afterAll in helpers.ts would belong to the first file alone.)
 */
import { afterAll } from "bun:test";

const tasks: (() => void)[] = [];

/** Runs `task` once the run's last test file is done. */
export function afterRun(task: () => void): void {
  tasks.push(task);
}

/**
 * The run's cleanup removes thousands of directories (some of 20 000 files): on a loaded machine that outlasts a
 * test's timeout, and it is no test: it gets ten minutes.
 */
const CLEANUP_MS = 600_000;

afterAll(() => {
  for (const task of tasks.splice(0)) task();
}, CLEANUP_MS);
