/**
 * The audit line of a command run in a shell (`service deploy`, `rollback`, `cancel`, `pause`, `resume`), written to
 * the trail of the service directory it acts for, as `cli:<unix user>` (docs/audit.md).
 */
import type { AuditEvent } from "../audit/entry.ts";
import { AuditTrail } from "../audit/trail.ts";
import { loadConfig } from "../config/load.ts";
import { cliActor } from "../system/actor.ts";
import { consola } from "../system/consola.ts";

/** The days the trail is kept, as the service's config says; a config that does not load prunes nothing. */
function keepDays(cwd: string): number {
  try {
    return loadConfig({ cwd }).audit?.keepDays ?? 365;
  } catch {
    return 0;
  }
}

export function auditCli(cwd: string, event: Omit<AuditEvent, "actor">): void {
  new AuditTrail(cwd, { keepDays: keepDays(cwd) }).record({ actor: cliActor(), ...event }, (line) =>
    consola.warn(line),
  );
}

/** Runs `work`; its line says ok, or refused with the first line of why it threw. */
export async function audited<T>(
  cwd: string,
  event: Omit<AuditEvent, "actor" | "outcome">,
  work: () => T | Promise<T>,
): Promise<T> {
  try {
    const done = await work();
    auditCli(cwd, { ...event, outcome: "ok" });
    return done;
  } catch (error) {
    auditCli(cwd, { ...event, outcome: "refused", reason: String((error as Error).message).split("\n")[0] });
    throw error;
  }
}
