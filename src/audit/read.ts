/** The audit trail's lines, newest last, as `service audit` and `GET /api/audit` filter them. */
import { join } from "node:path";
import { type AuditLine, parseLine } from "./entry.ts";
import { auditFiles, fileLines, monthEnd } from "./trail.ts";

export interface AuditFilter {
  /** Lines at or after this time (ms since the epoch). */
  since?: number;
  /** `token:ci-web`, or the name after its kind (`ci-web`, `alice` for `cli:alice`). */
  actor?: string;
  app?: string;
  /** At most this many lines, the newest. */
  limit?: number;
}

const matchesActor = (actor: string, wanted: string) =>
  actor === wanted || actor.slice(actor.indexOf(":") + 1) === wanted;

export function readAudit(dir: string, filter: AuditFilter = {}): AuditLine[] {
  const out: AuditLine[] = [];
  for (const name of auditFiles(dir)) {
    if (filter.since !== undefined && monthEnd(name) <= filter.since) continue;
    for (const text of fileLines(join(dir, name)).lines) {
      const line = parseLine(text);
      if (!line) continue;
      if (filter.since !== undefined && Date.parse(line.time) < filter.since) continue;
      if (filter.actor !== undefined && !matchesActor(line.actor, filter.actor)) continue;
      if (filter.app !== undefined && line.app !== filter.app) continue;
      out.push(line);
    }
  }
  return filter.limit !== undefined && out.length > filter.limit ? out.slice(out.length - filter.limit) : out;
}
