/**
 * A ticket's content (tickets.ts): rewritten in place on every command of a deploy, read by other processes when its
 * holder died. What they read must be the last content whole, whatever was written before it.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { readTicket, takeTicket, ticketRecorder, updateTicket } from "../../src/queue/tickets.ts";
import { tempDir } from "../_support/helpers.ts";

const group = (pgid: number) => ({ pgid, start: String(1000 + pgid) });

function ticketIn(): { dir: string; name: string } {
  const dir = join(tempDir(), "tickets");
  mkdirSync(dir);
  return { dir, name: takeTicket(dir, { id: "d1", groups: [] }) };
}

describe("a ticket rewritten in place", () => {
  test("a shorter content after a longer one reads back exactly, from the same file, with no other file made", () => {
    const { dir, name } = ticketIn();
    const inode = statSync(join(dir, name)).ino;
    updateTicket(dir, name, { id: "d1", groups: [group(11), group(12), group(13)] });
    updateTicket(dir, name, { id: "d1", groups: [group(12)] });
    expect(readTicket(dir, name)).toEqual({ id: "d1", groups: [group(12)] });
    expect(JSON.parse(readFileSync(join(dir, name), "utf8"))).toEqual({ id: "d1", groups: [group(12)] });
    expect(statSync(join(dir, name)).ino).toBe(inode);
    expect(readdirSync(dir)).toEqual([name]);
  });

  test("a ticket removed (given back, or by hand) is not brought back by a write", () => {
    const { dir, name } = ticketIn();
    const recorder = ticketRecorder(dir, () => name, { id: "d1", groups: [] });
    Bun.spawnSync(["rm", join(dir, name)]);
    recorder.started(group(21));
    updateTicket(dir, name, { id: "d1", groups: [group(22)] });
    expect(existsSync(join(dir, name))).toBe(false);
  });

  test("a command's start is on the ticket at once; its end once the current turn is over, or with the next start", async () => {
    const { dir, name } = ticketIn();
    const recorder = ticketRecorder(dir, () => name, { id: "d1", groups: [] });
    recorder.started(group(31));
    expect(readTicket(dir, name).groups).toEqual([group(31)]);
    recorder.ended(31);
    expect(readTicket(dir, name).groups).toEqual([group(31)]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(readTicket(dir, name).groups).toEqual([]);
    recorder.started(group(32));
    recorder.ended(32);
    recorder.started(group(33));
    expect(readTicket(dir, name).groups).toEqual([group(33)]);
  });
});
