/** The gate's verdict: which reported checks each `gate.checks` entry requires, and what they add up to. */
import { describe, expect, test } from "bun:test";
import { gateVerdict, shutText, successText, waitingText } from "../../src/gate/checks.ts";
import type { ReportedCheck } from "../../src/gate/types.ts";

const OWN = "deploy/web";

const ok = (name: string, extra: Partial<ReportedCheck> = {}): ReportedCheck => ({ name, state: "success", ...extra });

describe("gate verdict", () => {
  test("an entry names a check exactly: same case, no prefix, no suffix", () => {
    const reported = [ok("CI/build"), ok("ci/build-extra"), ok("my-ci/build")];
    const verdict = gateVerdict([{ name: "ci/build" }], reported, OWN);
    expect(verdict).toEqual({ state: "pending", checks: [{ name: "ci/build", state: "missing" }] });
    expect(gateVerdict([{ name: "ci/build" }], [...reported, ok("ci/build")], OWN).state).toBe("open");
  });

  test("a glob's * matches any characters, and every check it matches is required", () => {
    const reported = [
      ok("test (unit)"),
      { name: "test (e2e)", state: "pending" as const },
      ok("lint"),
      ok("test (unit) x"),
    ];
    const verdict = gateVerdict([{ name: "test (*)" }], reported, OWN);
    expect(verdict.state).toBe("pending");
    expect(verdict.checks).toEqual([
      { name: "test (e2e)", state: "pending" },
      { name: "test (unit)", state: "success" },
    ]);
    expect(
      gateVerdict([{ name: "ci/*" }], [ok("ci/a"), ok("ci/b/c"), ok("cd/x")], OWN).checks.map((c) => c.name),
    ).toEqual(["ci/a", "ci/b/c"]);
  });

  test("regex metacharacters in an entry are literal", () => {
    expect(gateVerdict([{ name: "a.c" }], [ok("abc")], OWN).state).toBe("pending");
    expect(gateVerdict([{ name: "a+(b)" }], [ok("a+(b)")], OWN).state).toBe("open");
    expect(gateVerdict([{ name: "x[1]*" }], [ok("x1"), ok("x[1] y")], OWN).checks).toEqual([
      { name: "x[1] y", state: "success" },
    ]);
    expect(gateVerdict([{ name: "^$|.*" }], [ok("anything")], OWN).state).toBe("pending");
  });

  test("* alone is every reported check except this server's own status", () => {
    const reported = [ok("ci/build"), { name: OWN, state: "pending" as const }, ok("deploy/canary")];
    const verdict = gateVerdict([{ name: "*" }], reported, OWN);
    expect(verdict.state).toBe("open");
    expect(verdict.checks.map((c) => c.name)).toEqual(["ci/build", "deploy/canary"]);
  });

  test("naming this server's own status gates on it", () => {
    const verdict = gateVerdict([{ name: OWN }], [{ name: OWN, state: "pending" }], OWN);
    expect(verdict).toEqual({ state: "pending", checks: [{ name: OWN, state: "pending" }] });
  });

  test("* needs at least one reported check: nothing reported (or only our own) is pending", () => {
    expect(gateVerdict([{ name: "*" }], [], OWN)).toEqual({
      state: "pending",
      checks: [{ name: "*", state: "missing" }],
    });
    expect(gateVerdict([{ name: "*" }], [ok(OWN)], OWN).state).toBe("pending");
  });

  test("a pinned entry matches only the checks its reporter reported", () => {
    const reported = [
      ok("deploy/canary", { by: "mallory" }),
      { name: "deploy/canary", state: "pending" as const, by: "canary-bot" },
    ];
    const verdict = gateVerdict([{ name: "deploy/canary", by: "canary-bot" }], reported, OWN);
    expect(verdict.state).toBe("pending");
    expect(verdict.checks).toEqual([{ name: "deploy/canary", state: "pending", by: "canary-bot" }]);
  });

  test("a check without a reporter never matches a pinned entry", () => {
    const verdict = gateVerdict([{ name: "deploy/*", by: "canary-bot" }], [ok("deploy/canary")], OWN);
    expect(verdict).toEqual({
      state: "pending",
      checks: [{ name: "deploy/*", state: "missing", by: "canary-bot" }],
    });
  });

  test("an unpinned entry requires every reporter's check of that name", () => {
    const reported = [ok("ci/build", { by: "alice" }), { name: "ci/build", state: "failure" as const, by: "bob" }];
    const verdict = gateVerdict([{ name: "ci/build" }], reported, OWN);
    expect(verdict.state).toBe("shut");
    expect(verdict.checks).toEqual([
      { name: "ci/build", state: "success", by: "alice" },
      { name: "ci/build", state: "failure", by: "bob" },
    ]);
  });

  test("a failure, an error or a cancelled check shuts the gate, even with others pending or missing", () => {
    for (const state of ["failure", "error", "cancelled"] as const) {
      const reported = [
        { name: "a", state },
        { name: "b", state: "pending" as const },
      ];
      expect(gateVerdict([{ name: "b" }, { name: "c" }, { name: "a" }], reported, OWN).state).toBe("shut");
    }
  });

  test("a failure of a check no entry requires does not shut the gate", () => {
    const verdict = gateVerdict([{ name: "a" }], [ok("a"), { name: "b", state: "failure" }], OWN);
    expect(verdict.state).toBe("open");
  });

  test("a required check not reported is missing, and the gate pending", () => {
    const verdict = gateVerdict([{ name: "a" }, { name: "b" }], [ok("a")], OWN);
    expect(verdict).toEqual({
      state: "pending",
      checks: [
        { name: "a", state: "success" },
        { name: "b", state: "missing" },
      ],
    });
  });

  test("checks are listed in entry order, each once", () => {
    const reported = [ok("lint"), ok("test (unit)"), ok("build", { url: "https://ci.example/b" })];
    const verdict = gateVerdict(
      [{ name: "build" }, { name: "test (*)" }, { name: "*" }, { name: "lint" }],
      reported,
      OWN,
    );
    expect(verdict.checks).toEqual([
      { name: "build", state: "success", url: "https://ci.example/b" },
      { name: "test (unit)", state: "success" },
      { name: "lint", state: "success" },
    ]);
  });

  test("lastSuccessAt is the latest change among the required successes, in time, not in text", () => {
    const reported = [
      ok("a", { updatedAt: "2024-05-01T10:00:00Z" }),
      ok("b", { updatedAt: "2024-05-01T11:30:00+02:00" }),
      ok("c", { updatedAt: "2024-05-01T10:20:00Z" }),
      ok("unrequired", { updatedAt: "2024-06-01T00:00:00Z" }),
    ];
    const verdict = gateVerdict([{ name: "a" }, { name: "b" }, { name: "c" }], reported, OWN);
    expect(verdict.state).toBe("open");
    expect(verdict.lastSuccessAt).toBe("2024-05-01T10:20:00Z");
  });

  test("lastSuccessAt is left out when the gate is not open or the forge gave no time", () => {
    const at = { updatedAt: "2024-05-01T10:00:00Z" };
    expect(gateVerdict([{ name: "a" }, { name: "b" }], [ok("a", at)], OWN).lastSuccessAt).toBeUndefined();
    expect(gateVerdict([{ name: "a" }], [ok("a")], OWN)).toEqual({
      state: "open",
      checks: [{ name: "a", state: "success" }],
    });
  });
});

describe("gate lines", () => {
  test("waiting names the checks not yet green and counts the successes", () => {
    const verdict = gateVerdict(
      [{ name: "ci/build" }, { name: "test (unit)" }, { name: "lint" }],
      [{ name: "ci/build", state: "pending" }, ok("lint")],
      OWN,
    );
    expect(waitingText(verdict)).toBe("waiting for ci/build (pending), test (unit) (missing); 1 of 3 success");
  });

  test("success names every required check", () => {
    const verdict = gateVerdict(
      [{ name: "ci/build" }, { name: "test (*)" }],
      [ok("ci/build"), ok("test (unit)"), ok("test (e2e)")],
      OWN,
    );
    expect(successText(verdict)).toBe("ci/build, test (e2e), test (unit) success");
  });

  test("shut names each failed check, its state and its link", () => {
    const verdict = gateVerdict(
      [{ name: "test (*)" }, { name: "build" }],
      [
        { name: "test (unit)", state: "failure", url: "https://ci.example/run/7" },
        ok("test (e2e)"),
        { name: "build", state: "cancelled" },
      ],
      OWN,
    );
    expect(shutText(verdict)).toBe("test (unit) failure (https://ci.example/run/7), build cancelled");
  });

  test("a pinned check is named with its reporter", () => {
    const verdict = gateVerdict([{ name: "deploy/canary", by: "canary-bot" }], [], OWN);
    expect(waitingText(verdict)).toBe("waiting for deploy/canary by canary-bot (missing); 0 of 1 success");
  });

  test("a name or link with control characters cannot start a line of its own", () => {
    const verdict = gateVerdict(
      [{ name: "*" }],
      [{ name: "x\n[done] ok", state: "failure", url: "https://a\r\nb" }],
      OWN,
    );
    expect(shutText(verdict)).toBe("x [done] ok failure (https://a  b)");
  });
});
