/** Release tags as versions (src/triggers/semver.ts): parsing, semver 2.0.0 order, and npm-style ranges. */
import { describe, expect, test } from "bun:test";
import { compareVersions, isRangeText, parseRange, parseVersion, satisfies } from "../../src/triggers/semver.ts";

const version = (text: string) => {
  const parsed = parseVersion(text);
  if (!parsed) throw new Error(`${text} does not parse`);
  return parsed;
};
const inRange = (range: string, text: string) => satisfies(version(text), parseRange(range)!);

describe("semver", () => {
  test("versions parse with a leading v, a pre-release and build metadata; anything else does not", () => {
    expect(parseVersion("v1.4.2")).toEqual({ major: 1, minor: 4, patch: 2, pre: [] });
    expect(parseVersion("1.5.0-rc.1+build.7")).toEqual({ major: 1, minor: 5, patch: 0, pre: ["rc", "1"] });
    for (const text of ["1.4", "v1", "1.4.x", "release-3", "01.2.3", "1.2.3-01", "1.2.3-", "main"])
      expect(parseVersion(text)).toBeUndefined();
  });

  test("order is semver 2.0.0's: pre-releases below their release, identifiers numeric then lexical", () => {
    const sorted = [
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-alpha.beta",
      "1.0.0-beta",
      "1.0.0-beta.2",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
      "1.0.0",
      "1.0.1",
      "1.2.0",
      "1.10.0",
      "2.0.0",
    ];
    const shuffled = [...sorted].reverse();
    expect(shuffled.sort((a, b) => compareVersions(version(a), version(b)))).toEqual(sorted);
    expect(compareVersions(version("1.0.0+a"), version("v1.0.0+b"))).toBe(0);
  });

  test("caret, tilde, x, exact and and-ed comparators match as npm's do", () => {
    expect(["1.4.0", "1.4.9", "1.9.0"].every((t) => inRange("^1.4", t))).toBe(true);
    expect(["1.3.9", "2.0.0"].some((t) => inRange("^1.4", t))).toBe(false);
    expect(inRange("^0.2.3", "0.2.9")).toBe(true);
    expect(inRange("^0.2.3", "0.3.0")).toBe(false);
    expect(inRange("^0.0.3", "0.0.4")).toBe(false);
    expect(inRange("~1.4.2", "1.4.7")).toBe(true);
    expect(inRange("~1.4.2", "1.5.0")).toBe(false);
    expect(inRange("~1.4.2", "1.4.1")).toBe(false);
    expect(inRange("1.4.x", "1.4.12")).toBe(true);
    expect(inRange("1.4.x", "1.5.0")).toBe(false);
    expect(inRange("1.4.2", "1.4.2")).toBe(true);
    expect(inRange("=1.4.2", "1.4.3")).toBe(false);
    expect(inRange(">=1.2.0 <2.0.0", "1.9.9")).toBe(true);
    expect(inRange(">=1.2.0 <2.0.0", "2.0.0")).toBe(false);
    expect(inRange(">= 1.2.0", "1.2.0")).toBe(true);
    expect(inRange(">1.4", "1.4.9")).toBe(false);
    expect(inRange(">1.4", "1.5.0")).toBe(true);
    expect(inRange("<=1.4", "1.4.9")).toBe(true);
  });

  test("a pre-release matches only a range naming a pre-release of the same MAJOR.MINOR.PATCH", () => {
    expect(inRange("^1.4", "1.5.0-rc.1")).toBe(false);
    expect(inRange("^1.5.0-rc.0", "1.5.0-rc.1")).toBe(true);
    expect(inRange("^1.5.0-rc.0", "1.5.0")).toBe(true);
    expect(inRange("^1.5.0-rc.0", "1.6.0-rc.1")).toBe(false);
    expect(inRange(">=1.2.0 <2.0.0", "2.0.0-rc.1")).toBe(false);
    expect(inRange("^1.4", "2.0.0-0")).toBe(false);
  });

  test("a range starts with ^ ~ < > = or a digit; one that does not parse is undefined", () => {
    expect(["^1.4", "~1", ">=1", "<2", "=1.0.0", "1.x"].every(isRangeText)).toBe(true);
    expect(["v*", "release-*", "*"].some(isRangeText)).toBe(false);
    for (const text of ["^", "^1.x.3", "~banana", ">=1.2.0 <", "1.2.3.4", "^1.4 || ^2"])
      expect(parseRange(text)).toBeUndefined();
  });
});
