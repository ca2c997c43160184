/**
 * Semantic versions and ranges, as release tags name them (docs/configuration.md `tags`): `MAJOR.MINOR.PATCH`
 * with an optional `-prerelease` and `+build`, a leading `v` allowed; ranges as npm writes them (`^1.4`, `~1.4.2`,
 * `>=1.2.0 <2.0.0`, `1.4.x`, `1.4.2`, `=1.4.2`). Order per semver 2.0.0; a pre-release matches a range only when
 * the range names a pre-release of the same MAJOR.MINOR.PATCH (npm's rule), so `^1.4` never picks `1.5.0-rc.1`.
 */

export interface Version {
  major: number;
  minor: number;
  patch: number;
  /** The pre-release identifiers (`rc.1` → ["rc", "1"]); empty for a release. */
  pre: string[];
}

const NUMBER = "0|[1-9]\\d*";
const IDENT = "[0-9A-Za-z-]+";
const VERSION = new RegExp(
  `^v?(${NUMBER})\\.(${NUMBER})\\.(${NUMBER})(?:-(${IDENT}(?:\\.${IDENT})*))?(?:\\+${IDENT}(?:\\.${IDENT})*)?$`,
);

/** The version `text` names, or undefined when it is not one (`1.4`, `v1.x`, `release-3`). */
export function parseVersion(text: string): Version | undefined {
  const match = VERSION.exec(text.trim());
  if (!match) return undefined;
  const pre = match[4] ? match[4].split(".") : [];
  // A numeric identifier has no leading zero (semver 2.0.0 item 9).
  if (pre.some((id) => /^0\d+$/.test(id))) return undefined;
  const [major, minor, patch] = [match[1], match[2], match[3]].map(Number) as [number, number, number];
  if (![major, minor, patch].every(Number.isSafeInteger)) return undefined;
  return { major, minor, patch, pre };
}

function compareIdentifiers(a: string, b: string): number {
  const [numA, numB] = [/^\d+$/.test(a), /^\d+$/.test(b)];
  if (numA && numB) return Number(a) - Number(b);
  // Numeric identifiers have lower precedence than alphanumeric ones.
  if (numA !== numB) return numA ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Negative, zero or positive as `a` is lower than, equal to or higher than `b` (build metadata ignored). */
export function compareVersions(a: Version, b: Version): number {
  const core = a.major - b.major || a.minor - b.minor || a.patch - b.patch;
  if (core) return Math.sign(core);
  // A release is higher than its pre-releases.
  if (!a.pre.length || !b.pre.length) return b.pre.length - a.pre.length === 0 ? 0 : a.pre.length ? -1 : 1;
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const order = compareIdentifiers(a.pre[i]!, b.pre[i]!);
    if (order) return Math.sign(order);
  }
  return Math.sign(a.pre.length - b.pre.length);
}

type Operator = "<" | "<=" | ">" | ">=" | "=";
interface Comparator {
  op: Operator;
  version: Version;
}

/** A range: comparators that must all hold. */
export interface Range {
  text: string;
  comparators: Comparator[];
}

/** Whether `tags` is a range rather than a glob: it starts like one (`^`, `~`, `<`, `>`, `=` or a digit). */
export const isRangeText = (text: string) => /^[\^~<>=\d]/.test(text.trim());

const PARTIAL = new RegExp(
  `^v?(${NUMBER}|[xX*])(?:\\.(${NUMBER}|[xX*]))?(?:\\.(${NUMBER}|[xX*]))?(?:-(${IDENT}(?:\\.${IDENT})*))?(?:\\+${IDENT}(?:\\.${IDENT})*)?$`,
);

/** A partial version (`1`, `1.4`, `1.4.x`, `1.4.2-rc.1`): the numbers given (undefined for a missing or x part). */
function parsePartial(text: string): { parts: (number | undefined)[]; pre: string[] } | undefined {
  const match = PARTIAL.exec(text);
  if (!match) return undefined;
  const parts = [match[1], match[2], match[3]].map((p) =>
    p === undefined || /^[xX*]$/.test(p) ? undefined : Number(p),
  );
  // `1.x.3` says nothing sensible: a number after a wildcard.
  const first = parts.indexOf(undefined);
  if (first >= 0 && parts.slice(first).some((p) => p !== undefined)) return undefined;
  const pre = match[4] ? match[4].split(".") : [];
  if (pre.length && first >= 0) return undefined;
  return { parts, pre };
}

const v = (major: number, minor: number, patch: number, pre: string[] = []): Version => ({ major, minor, patch, pre });

/** The comparators of one term (`^1.4`, `>=1.2.0`, `1.4.x`); undefined when it does not parse. */
function termComparators(term: string): Comparator[] | undefined {
  const match = /^(\^|~|<=|>=|<|>|=)?(.+)$/.exec(term);
  if (!match) return undefined;
  const prefix = match[1] ?? "";
  const partial = parsePartial(match[2]!);
  if (!partial) return undefined;
  const [major, minor, patch] = partial.parts;
  const { pre } = partial;
  if (major === undefined) return prefix === "<" || prefix === ">" ? undefined : []; // `*`: any release
  const low = v(major, minor ?? 0, patch ?? 0, pre);
  switch (prefix) {
    case "^": {
      // The leftmost non-zero part may not change.
      const high =
        major > 0 || minor === undefined
          ? v(major + 1, 0, 0, ["0"])
          : minor > 0 || patch === undefined
            ? v(0, minor + 1, 0, ["0"])
            : v(0, 0, patch + 1, ["0"]);
      return [
        { op: ">=", version: low },
        { op: "<", version: high },
      ];
    }
    case "~": {
      const high = minor === undefined ? v(major + 1, 0, 0, ["0"]) : v(major, minor + 1, 0, ["0"]);
      return [
        { op: ">=", version: low },
        { op: "<", version: high },
      ];
    }
    case "":
    case "=": {
      if (patch !== undefined) return [{ op: "=", version: low }];
      const high = minor === undefined ? v(major + 1, 0, 0, ["0"]) : v(major, minor + 1, 0, ["0"]);
      return [
        { op: ">=", version: low },
        { op: "<", version: high },
      ];
    }
    case ">":
      // `>1.4` is past every 1.4.x.
      if (patch === undefined)
        return [{ op: ">=", version: minor === undefined ? v(major + 1, 0, 0) : v(major, minor + 1, 0) }];
      return [{ op: ">", version: low }];
    case "<=":
      if (patch === undefined)
        return [{ op: "<", version: minor === undefined ? v(major + 1, 0, 0, ["0"]) : v(major, minor + 1, 0, ["0"]) }];
      return [{ op: "<=", version: low }];
    default:
      return [{ op: prefix as Operator, version: low }];
  }
}

/** The range `text` names (terms separated by spaces, all of which must hold), or undefined when it does not parse. */
export function parseRange(text: string): Range | undefined {
  const terms = text
    .trim()
    // `>= 1.2.0` is one term.
    .replace(/(\^|~|<=|>=|<|>|=)\s+/g, "$1")
    .split(/\s+/)
    .filter(Boolean);
  if (terms.length === 0) return undefined;
  const comparators: Comparator[] = [];
  for (const term of terms) {
    const parsed = termComparators(term);
    if (!parsed) return undefined;
    comparators.push(...parsed);
  }
  return { text: text.trim(), comparators };
}

function holds({ op, version }: Comparator, candidate: Version): boolean {
  const order = compareVersions(candidate, version);
  return op === "="
    ? order === 0
    : op === "<"
      ? order < 0
      : op === "<="
        ? order <= 0
        : op === ">"
          ? order > 0
          : order >= 0;
}

const sameCore = (a: Version, b: Version) => a.major === b.major && a.minor === b.minor && a.patch === b.patch;

/** Whether `version` is in `range`; a pre-release only when a comparator names a pre-release of its MAJOR.MINOR.PATCH. */
export function satisfies(version: Version, range: Range): boolean {
  if (!range.comparators.every((c) => holds(c, version))) return false;
  if (version.pre.length === 0) return true;
  // The `-0` bounds a caret or a tilde adds never let one through: such a version is past the bound.
  return range.comparators.some((c) => c.version.pre.length > 0 && sameCore(c.version, version));
}
