/**
 * One line of the audit trail (docs/audit.md): who did what, to which app and target, from where, and how it
 * ended; never a secret. Each line carries the SHA-256 of the line before it (`prev`), across the monthly files,
 * so an edited, removed or reordered line breaks the chain.
 */
import { sha256Hex } from "../system/digest.ts";
import { cleanActor, oneLine } from "../system/actor.ts";

/** What was done. `login` and `logout` carry their `method` (`token`, and whatever a sign-in adds). */
export type AuditAction =
  | "login ok"
  | "login refused"
  | "logout"
  | "session ended"
  | "deploy asked"
  | "rollback"
  | "cancel"
  | "pause"
  | "resume"
  | "catch-up"
  | "catch-up dropped"
  | "config reloaded"
  | "token added"
  | "token revoked"
  | "token rotated"
  | "started"
  | "stopped"
  | "mcp tool"
  | "preview deploy"
  | "preview teardown"
  | "preview refused";

/** How it ended: done, refused (a role, a pause, a bad request), or failed inside the service. */
export type AuditOutcome = "ok" | "refused" | "failed";

/** What a caller says about one action; the time and the chain are the trail's. */
export interface AuditEvent {
  /** `token:ci-web`, `admin:alice`, `cli:deploy`, `service` … (no address: that is `address`). */
  actor: string;
  /** The identity provider's subject, where the actor has one. */
  sub?: string;
  /** The client's address, for what came over the network. */
  address?: string;
  action: AuditAction;
  app?: string;
  /** What was acted on: a deploy id, a ref, a rollback's target, a token's name, a tool's name. */
  target?: string;
  outcome: AuditOutcome;
  /** Why it was refused or failed: an error's name (`paused`, `forbidden`), never a value sent. */
  reason?: string;
  /** How a login was made (`token`). */
  method?: string;
  force?: boolean;
  skipGate?: boolean;
  /** The deploy an action queued or acted on. */
  deploy?: string;
  /** The way it came when not the API or a command: `mcp` (an agent's tool call), `dashboard`. */
  via?: string;
  /** The keys a reload changed (names only). */
  keys?: string[];
}

/** A line as written. */
export interface AuditLine extends AuditEvent {
  time: string;
  /** The SHA-256 (hex) of the previous line's text; 64 zeros before the first line ever. */
  prev: string;
}

export const GENESIS = "0".repeat(64);

export const hashLine = (text: string): string => sha256Hex(text);

const MAX_TEXT = 200;

/** The event cleaned (one line, cut) and in a fixed field order, as the JSON text of its line. */
export function formatLine(event: AuditEvent, time: Date, prev: string): string {
  const text = (value: string | undefined) => oneLine(value, MAX_TEXT);
  const line: Record<string, unknown> = {
    time: time.toISOString(),
    actor: cleanActor(event.actor) ?? "unknown",
    sub: text(event.sub),
    address: text(event.address),
    action: event.action,
    app: text(event.app),
    target: text(event.target),
    outcome: event.outcome,
    reason: text(event.reason),
    method: text(event.method),
    force: event.force || undefined,
    skipGate: event.skipGate || undefined,
    deploy: text(event.deploy),
    via: text(event.via),
    keys: event.keys?.length ? event.keys.slice(0, 100).map((key) => text(key)) : undefined,
    prev,
  };
  return JSON.stringify(line);
}

/** An actor as the admin listener writes it (`token:ci-web@10.0.0.5`) split into the name and the address. */
export function splitActor(actor: string): { actor: string; address?: string } {
  const at = actor.lastIndexOf("@");
  if (at <= 0) return { actor };
  return { actor: actor.slice(0, at), address: actor.slice(at + 1) };
}

/** The line's text parsed, or undefined when it is no audit line. */
export function parseLine(text: string): AuditLine | undefined {
  try {
    const value = JSON.parse(text) as AuditLine;
    if (value && typeof value === "object" && typeof value.time === "string" && typeof value.prev === "string")
      return value;
  } catch {}
  return undefined;
}
