/**
 * docs/previews.md "Life cycle": previews take the service's build slots (queue/slots.ts) only when no deploy of
 * production waits for one, and at most `previews.slots` at once: production waiting gets the next slot first.
 */
import { describe, expect, test } from "bun:test";
import { takeSlot } from "../../src/queue/slots.ts";
import { previewSlot } from "../../src/previews/slot.ts";
import { tempDir, waitFor } from "../_support/helpers.ts";

const hooks = { onWait: () => {}, abort: () => {} };

describe("previews: build slots", () => {
  test("production waiting for a slot gets the next one before a preview that asked earlier", async () => {
    const cwd = tempDir();
    const running = await takeSlot(cwd, 1, { id: "prod-1", app: "web" }, hooks);
    const order: string[] = [];
    let stop = false;
    const preview = previewSlot(
      cwd,
      1,
      1,
      { app: "web", number: 1 },
      () => stop,
      () => 0,
    ).then((slot) => {
      order.push("preview");
      return slot;
    });
    const production = takeSlot(cwd, 1, { id: "prod-2", app: "web" }, hooks).then((slot) => {
      order.push("production");
      return slot;
    });
    running!.release();
    const second = await production;
    expect(order).toEqual(["production"]);
    second!.release();
    const third = await preview;
    expect(order).toEqual(["production", "preview"]);
    third!.release();
    stop = true;
  });

  test("at most previews.slots previews build at once, whatever the service's slots", async () => {
    const cwd = tempDir();
    const first = await previewSlot(
      cwd,
      4,
      1,
      { app: "web", number: 1 },
      () => false,
      () => 0,
    );
    let got = false;
    let stop = false;
    const second = previewSlot(
      cwd,
      4,
      1,
      { app: "web", number: 2 },
      () => stop,
      () => 0,
    ).then((slot) => {
      got = true;
      return slot;
    });
    // Production is not held by the previews' limit.
    const production = await takeSlot(cwd, 4, { id: "prod", app: "web" }, hooks);
    production!.release();
    expect(got).toBe(false);
    first!.release();
    await waitFor(() => got, "the second preview's slot");
    (await second)!.release();
    stop = true;
  });
});
