/**
 * `service audit --verify` (docs/audit.md): the chain read from the anchor (or the first line ever) through every
 * monthly file to the hash kept in `last`. An edited, removed or reordered line breaks the link after it; a line
 * cut at the end, or lines removed from the end, no longer reach `last`.
 */
import { join } from "node:path";
import { GENESIS, hashLine, parseLine } from "./entry.ts";
import { ANCHOR_FILE, auditFiles, fileLines, LAST_FILE, readHash } from "./trail.ts";

export interface Verified {
  /** Lines read. */
  lines: number;
  /** Each break of the chain, as a line for the user; none: the trail is whole. */
  problems: string[];
}

export function verifyTrail(dir: string): Verified {
  const problems: string[] = [];
  let expected = readHash(join(dir, ANCHOR_FILE)) ?? GENESIS;
  let count = 0;
  for (const name of auditFiles(dir)) {
    const { lines, whole } = fileLines(join(dir, name));
    lines.forEach((text, index) => {
      count++;
      const where = `${name} line ${index + 1}`;
      const line = parseLine(text);
      if (!line) problems.push(`${where}: not an audit line (edited?)`);
      else if (line.prev !== expected)
        problems.push(`${where}: does not follow the line before it (a line edited, removed or moved before it)`);
      expected = hashLine(text);
    });
    if (!whole) problems.push(`${name}: its last line is cut off`);
  }
  const last = readHash(join(dir, LAST_FILE));
  if (last === undefined) {
    if (count > 0) problems.push(`${LAST_FILE}: missing, so the end of the trail cannot be checked`);
  } else if (last !== expected)
    problems.push(
      "the trail does not end with the line written last: lines were removed from its end, or its last line edited",
    );
  return { lines: count, problems };
}
