/**
 * docs/previews.md "Operating": one build or teardown of a preview at a time across processes (the server's lane,
 * `service preview deploy`/`teardown` beside it), through a lock that names its holder; a dead holder's is taken.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withPreviewLock } from "../../src/previews/lock.ts";
import { tempDir, waitFor } from "../_support/helpers.ts";

describe("previews: the lock of a preview", () => {
  test("a second holder waits until the first is done", async () => {
    const cwd = tempDir();
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = withPreviewLock(
      cwd,
      "web",
      7,
      () => false,
      async () => {
        order.push("first");
        await held;
        order.push("first done");
      },
    );
    await waitFor(() => order.includes("first"), "the first holder");
    let looks = 0;
    const second = withPreviewLock(
      cwd,
      "web",
      7,
      () => {
        looks++;
        return false;
      },
      async () => {
        order.push("second");
      },
    );
    await waitFor(() => looks >= 2, "the second holder waiting");
    expect(order).toEqual(["first"]);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(["first", "first done", "second"]);
  });

  test("a lock left by a process that died is taken", async () => {
    const cwd = tempDir();
    const dead = Bun.spawnSync(["true"]).pid;
    const dir = join(cwd, ".service", "previews", "web");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "pr-8.lock"), JSON.stringify({ pid: dead, start: "1" }));
    expect(
      await withPreviewLock(
        cwd,
        "web",
        8,
        () => false,
        async () => "ran",
      ),
    ).toBe("ran");
  });

  test("a wait is given up when the service stops", async () => {
    const cwd = tempDir();
    const dir = join(cwd, ".service", "previews", "web");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "pr-9.lock"), JSON.stringify({ pid: process.pid, start: "0" }));
    expect(
      await withPreviewLock(
        cwd,
        "web",
        9,
        () => true,
        async () => "ran",
      ),
    ).toBeUndefined();
  });
});
