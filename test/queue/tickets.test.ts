/**
 * A ticket's content (tickets.ts): rewritten in place on every command of a deploy, read by other processes when its
 * holder died. What they read must be the last content whole, whatever was written before it.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  dropTicket,
  readTicket,
  scanTickets,
  takeTicket,
  ticketRecorder,
  updateTicket,
} from "../../src/queue/tickets.ts";
import { processStart } from "../../src/system/liveness.ts";
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
    const [seat] = readdirSync(dir);
    const inode = statSync(join(dir, seat!)).ino;
    updateTicket(dir, name, { id: "d1", groups: [group(11), group(12), group(13)] });
    updateTicket(dir, name, { id: "d1", groups: [group(12)] });
    expect(readTicket(dir, name)).toEqual({ id: "d1", groups: [group(12)] });
    const [first, rest] = readFileSync(join(dir, seat!), "utf8").split("\n");
    expect(first).toBe("000000000000001 0");
    expect(JSON.parse(rest!)).toEqual({ id: "d1", groups: [group(12)] });
    expect(statSync(join(dir, seat!)).ino).toBe(inode);
    expect(readdirSync(dir)).toEqual([seat!]);
  });

  test("a ticket removed by hand is not brought back by a write", () => {
    const { dir, name } = ticketIn();
    const recorder = ticketRecorder(dir, () => name, { id: "d1", groups: [] });
    const [seat] = readdirSync(dir);
    Bun.spawnSync(["rm", join(dir, seat!)]);
    expect(scanTickets(dir).live).toEqual([]);
    recorder.started(group(21));
    updateTicket(dir, name, { id: "d1", groups: [group(22)] });
    expect(readdirSync(dir)).toEqual([]);
  });

  test("a ticket given back is not written again: its seat holds the next ticket, whose content stays", () => {
    const { dir, name } = ticketIn();
    const recorder = ticketRecorder(dir, () => name, { id: "d1", groups: [] });
    dropTicket(dir, name);
    const next = takeTicket(dir, { id: "d2", groups: [] });
    recorder.started(group(23));
    updateTicket(dir, name, { id: "d1", groups: [group(24)] });
    expect(readdirSync(dir)).toHaveLength(1);
    expect(scanTickets(dir).live).toEqual([next]);
    expect(readTicket(dir, next)).toEqual({ id: "d2", groups: [] });
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

describe("seats: a process's tickets in files of its own, rewritten in place", () => {
  test("taking and giving back tickets makes no new file: one seat per ticket held at once, the same file each time", () => {
    const dir = join(tempDir(), "tickets");
    mkdirSync(dir);
    const first = takeTicket(dir, { id: "d1", groups: [] });
    const [seat] = readdirSync(dir);
    const inode = statSync(join(dir, seat!)).ino;
    dropTicket(dir, first);
    const second = takeTicket(dir, { id: "d2", groups: [] });
    expect(second).not.toBe(first);
    expect(readdirSync(dir)).toEqual([seat!]);
    expect(statSync(join(dir, seat!)).ino).toBe(inode);
    // A second ticket held at once takes a second seat, and queues behind the first.
    const third = takeTicket(dir, { id: "d3", groups: [] });
    expect(readdirSync(dir)).toHaveLength(2);
    expect(scanTickets(dir).live).toEqual([second, third]);
    dropTicket(dir, second);
    dropTicket(dir, third);
    expect(scanTickets(dir).live).toEqual([]);
    expect(readdirSync(dir)).toHaveLength(2);
  });

  test("another process's seat: choosing holds every start, its number is a ticket in the queue, a dead process's seat is removed", async () => {
    const dir = join(tempDir(), "tickets");
    mkdirSync(dir);
    await using other = spawnOther();
    const start = processStart(other.pid)!;
    const seat = join(dir, `seat-${other.pid}-${start}-0`);
    writeFileSync(seat, seatText(0, true, { groups: [] }));
    const mine = takeTicket(dir, { id: "d1", groups: [] });
    expect(scanTickets(dir)).toMatchObject({ choosing: true, live: [mine] });
    // It chose after this process's ticket existed: its number is higher, and it waits behind.
    writeFileSync(seat, seatText(2, false, { id: "theirs", groups: [] }));
    const theirs = `000000000000002-${String(other.pid).padStart(10, "0")}-${start}-0`;
    expect(scanTickets(dir)).toMatchObject({ choosing: false, live: [mine, theirs] });
    expect(readTicket(dir, theirs)).toEqual({ id: "theirs", groups: [] });
    // Met in the middle of a rewrite of its content (a command's group), its number still reads whole.
    writeFileSync(
      seat,
      `${seatText(2, false, { id: "theirs", groups: [{ pgid: 7, start: "1" }] }).slice(0, 30)}"id":"th`,
    );
    expect(scanTickets(dir)).toMatchObject({ choosing: false, live: [mine, theirs] });
    // A ticket taken now comes after both.
    const next = takeTicket(dir, { id: "d2", groups: [] });
    expect(next.startsWith("000000000000003-")).toBe(true);
    // One that does not read as a seat (being written) is taken as choosing: nobody starts on a guess.
    writeFileSync(seat, "00000000000");
    expect(scanTickets(dir).choosing).toBe(true);
    writeFileSync(seat, seatText(2, false, { groups: [] }));
    other.proc.kill("SIGKILL");
    await other.proc.exited;
    expect(scanTickets(dir)).toMatchObject({ choosing: false, live: [mine, next] });
    expect(existsSync(seat)).toBe(false);
  });
});

/** A seat's text as seats.ts writes it: the bakery's first line, then the ticket's content. */
const seatText = (n: number, choosing: boolean, content: object) =>
  `${String(n).padStart(15, "0")} ${choosing ? 1 : 0}\n${JSON.stringify(content)}`;

/** A process that is not this one, alive until disposed. */
function spawnOther() {
  const proc = Bun.spawn(["sleep", "300"]);
  return {
    proc,
    pid: proc.pid,
    async [Symbol.asyncDispose]() {
      proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}
