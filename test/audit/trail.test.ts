/**
 * docs/audit.md: one JSON line per action in monthly files, each carrying the SHA-256 of the line before it across
 * the files; `verifyTrail` finds an edited, removed or reordered line and a cut end; pruning removes whole files and
 * anchors the chain; every process appends under one lock.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AuditEvent } from "../../src/audit/entry.ts";
import { readAudit } from "../../src/audit/read.ts";
import { AuditTrail, auditDir } from "../../src/audit/trail.ts";
import { verifyTrail } from "../../src/audit/verify.ts";
import { ROOT, tempDir } from "../_support/helpers.ts";

const event = (n: number, over: Partial<AuditEvent> = {}): AuditEvent => ({
  actor: "token:ci-web",
  address: "127.0.0.1",
  action: "deploy asked",
  app: "web",
  target: `v${n}`,
  outcome: "ok",
  ...over,
});

/** A trail written at these times (one line each), its directory. */
function trailAt(times: string[], keepDays?: number): { dir: string; cwd: string; trail: AuditTrail } {
  const cwd = tempDir("service-audit-");
  let i = 0;
  const trail = new AuditTrail(cwd, { keepDays, now: () => new Date(times[Math.min(i, times.length - 1)]!) });
  for (; i < times.length; i++) trail.write(event(i));
  return { dir: auditDir(cwd), cwd, trail };
}

const file = (dir: string, name: string) => join(dir, name);
const lines = (path: string) => readFileSync(path, "utf8").split("\n").filter(Boolean);
const rewrite = (path: string, all: string[]) => writeFileSync(path, `${all.join("\n")}\n`);

describe("the audit trail's chain (docs/audit.md)", () => {
  test("one line per action in a file per month, each naming the hash of the one before, across files", () => {
    const { dir } = trailAt(["2026-10-30T10:00:00Z", "2026-10-31T10:00:00Z", "2026-11-01T10:00:00Z"]);
    expect(
      readdirSync(dir)
        .filter((n) => n.endsWith(".jsonl"))
        .sort(),
    ).toEqual(["audit-2026-10.jsonl", "audit-2026-11.jsonl"]);
    const [first, second] = lines(file(dir, "audit-2026-10.jsonl")).map((l) => JSON.parse(l));
    expect(first).toMatchObject({ actor: "token:ci-web", address: "127.0.0.1", action: "deploy asked", app: "web" });
    expect(first.prev).toBe("0".repeat(64));
    const hash = (text: string) => new Bun.CryptoHasher("sha256").update(text).digest("hex");
    expect(second.prev).toBe(hash(lines(file(dir, "audit-2026-10.jsonl"))[0]!));
    const [third] = lines(file(dir, "audit-2026-11.jsonl")).map((l) => JSON.parse(l));
    expect(third.prev).toBe(hash(lines(file(dir, "audit-2026-10.jsonl"))[1]!));
    expect(verifyTrail(dir)).toEqual({ lines: 3, problems: [] });
  });

  test("verify finds an edited line, a removed one, two swapped, and a cut end", () => {
    const times = ["2026-11-01T10:00:00Z", "2026-11-02T10:00:00Z", "2026-11-03T10:00:00Z", "2026-11-04T10:00:00Z"];
    const broken = (change: (all: string[]) => string[]) => {
      const { dir } = trailAt(times);
      const path = file(dir, "audit-2026-11.jsonl");
      rewrite(path, change(lines(path)));
      return verifyTrail(dir).problems;
    };
    expect(broken((all) => all.map((l, i) => (i === 1 ? l.replace('"v1"', '"v9"') : l)))).toEqual([
      "audit-2026-11.jsonl line 3: does not follow the line before it (a line edited, removed or moved before it)",
    ]);
    expect(broken((all) => all.filter((_, i) => i !== 1))).toEqual([
      "audit-2026-11.jsonl line 2: does not follow the line before it (a line edited, removed or moved before it)",
    ]);
    expect(broken(([a, b, c, d]) => [a!, c!, b!, d!]).length).toBeGreaterThan(0);
    expect(broken((all) => all.slice(0, -1))).toEqual([
      "the trail does not end with the line written last: lines were removed from its end, or its last line edited",
    ]);
    // The last line edited: only `last` can tell.
    expect(broken((all) => all.map((l, i) => (i === 3 ? l.replace('"ok"', '"refused"') : l)))).toEqual([
      "the trail does not end with the line written last: lines were removed from its end, or its last line edited",
    ]);
    // A first file removed whole: the first kept line no longer follows the start.
    const { dir } = trailAt(["2026-10-01T10:00:00Z", "2026-11-01T10:00:00Z"]);
    Bun.spawnSync(["rm", file(dir, "audit-2026-10.jsonl")]);
    expect(verifyTrail(dir).problems).toEqual([
      "audit-2026-11.jsonl line 1: does not follow the line before it (a line edited, removed or moved before it)",
    ]);
  });

  test("a line cut in the middle is found", () => {
    const { dir } = trailAt(["2026-11-01T10:00:00Z", "2026-11-02T10:00:00Z"]);
    const path = file(dir, "audit-2026-11.jsonl");
    const text = readFileSync(path, "utf8");
    writeFileSync(path, text.slice(0, text.length - 20));
    expect(verifyTrail(dir).problems).toContain("audit-2026-11.jsonl: its last line is cut off");
  });

  test("pruning removes whole months past keepDays and anchors the chain: the rest still verifies", () => {
    const { dir } = trailAt(
      ["2025-01-10T10:00:00Z", "2025-02-10T10:00:00Z", "2025-03-10T10:00:00Z", "2025-04-20T10:00:00Z"],
      40,
    );
    // At the first line of April: January ended 80 days before (pruned), February 51 (pruned), March 20 (kept).
    expect(
      readdirSync(dir)
        .filter((n) => n.endsWith(".jsonl"))
        .sort(),
    ).toEqual(["audit-2025-03.jsonl", "audit-2025-04.jsonl"]);
    expect(readFileSync(file(dir, "anchor"), "utf8").trim()).toBe(
      JSON.parse(lines(file(dir, "audit-2025-03.jsonl"))[0]!).prev,
    );
    expect(verifyTrail(dir)).toEqual({ lines: 2, problems: [] });
  });

  test("keepDays 0 keeps every month", () => {
    const { dir } = trailAt(["2020-01-10T10:00:00Z", "2026-04-20T10:00:00Z"], 0);
    expect(existsSync(file(dir, "audit-2020-01.jsonl"))).toBe(true);
  });

  test("text is one line and cut: a newline in a label cannot forge a second line", () => {
    const { dir, trail } = trailAt(["2026-11-01T10:00:00Z"]);
    trail.write(event(1, { actor: 'admin:eve\n{"action":"stopped"}', target: "x".repeat(1000) }));
    const all = lines(file(dir, "audit-2026-11.jsonl"));
    expect(all).toHaveLength(2);
    const written = JSON.parse(all[1]!);
    expect(written.actor).not.toContain("\n");
    expect(written.target.length).toBeLessThanOrEqual(200);
    expect(verifyTrail(dir).problems).toEqual([]);
  });

  test("the filter: since, actor (whole or its name), app; the newest lines when limited", () => {
    const cwd = tempDir("service-audit-");
    const trail = new AuditTrail(cwd);
    trail.write(event(1));
    trail.write(event(2, { actor: "cli:alice", app: "api" }));
    trail.write(event(3, { actor: "admin" }));
    const dir = auditDir(cwd);
    expect(readAudit(dir, { actor: "alice" }).map((l) => l.target)).toEqual(["v2"]);
    expect(readAudit(dir, { actor: "token:ci-web" }).map((l) => l.target)).toEqual(["v1"]);
    expect(readAudit(dir, { app: "web" }).map((l) => l.target)).toEqual(["v1", "v3"]);
    expect(readAudit(dir, { limit: 2 }).map((l) => l.target)).toEqual(["v2", "v3"]);
    expect(readAudit(dir, { since: Date.now() + 60_000 })).toEqual([]);
  });

  test("processes appending at once: every line is there, and the chain holds", async () => {
    const cwd = tempDir("service-audit-");
    const writer = `
      const { AuditTrail } = await import(${JSON.stringify(join(ROOT, "src/audit/trail.ts"))});
      const trail = new AuditTrail(${JSON.stringify(cwd)});
      for (let i = 0; i < 50; i++) trail.write({ actor: "cli:p" + process.argv[1], action: "pause", outcome: "ok", target: String(i) });
    `;
    const procs = [0, 1, 2, 3].map((n) =>
      Bun.spawn([process.execPath, "-e", writer, String(n)], { stdout: "pipe", stderr: "pipe" }),
    );
    const codes = await Promise.all(procs.map((p) => p.exited));
    expect(codes).toEqual([0, 0, 0, 0]);
    const dir = auditDir(cwd);
    expect(verifyTrail(dir)).toEqual({ lines: 200, problems: [] });
    expect(readdirSync(dir).filter((n) => n.startsWith(".lock"))).toEqual([]);
  });

  test("a lock left by a process that died is taken over", () => {
    const cwd = tempDir("service-audit-");
    const trail = new AuditTrail(cwd);
    trail.write(event(1));
    // A pid that is not running (the kernel's maximum is below it).
    writeFileSync(join(auditDir(cwd), ".lock"), "4194399 12345");
    trail.write(event(2));
    expect(verifyTrail(auditDir(cwd))).toEqual({ lines: 2, problems: [] });
  });
});
