/**
 * The checks of the keys whose value is one plain thing (a port, a count, milliseconds, a flag, a string, a list
 * of names, a URL path or URL, an address to listen on), as written in a file or the environment. keys.ts names
 * each key's kind; the keys with a shape of their own are checked by their concept's file.
 */
import { isIP } from "../system/ip.ts";
import { ConfigError, MAX_TIMER_MS } from "./schema.ts";
import { show } from "./show.ts";

const SCALAR_KINDS = [
  "port",
  "positiveInt",
  "count",
  "ms",
  "boolean",
  "string",
  "hostname",
  "names",
  "urlPath",
  "httpUrl",
] as const;
export type ScalarKind = (typeof SCALAR_KINDS)[number];

export const isScalar = (kind: string): kind is ScalarKind => (SCALAR_KINDS as readonly string[]).includes(kind);

const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/** `value` as a key of `kind` takes it; a ConfigError naming `where` when it cannot. */
export function coerceScalar(kind: ScalarKind, value: unknown, fromEnv: boolean, where: string, min = 0): unknown {
  const fail = (expected: string) => {
    throw new ConfigError(`${where}: expected ${expected}, got ${show(value)}`);
  };
  switch (kind) {
    case "port":
    case "count":
    case "ms":
    case "positiveInt": {
      const n = typeof value === "string" && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
      const expected = {
        port: "an integer port (0-65535)",
        count: "a whole number (0 or more)",
        ms: `a positive integer of milliseconds, at most ${MAX_TIMER_MS} (about 24.8 days, the longest timer)`,
        positiveInt: "a positive integer",
      }[kind];
      if (typeof n !== "number" || !Number.isSafeInteger(n)) return fail(expected);
      if (kind === "count" && n < 0) return fail(expected);
      if (kind === "port" && (n < 0 || n > 65535)) return fail(expected);
      if ((kind === "positiveInt" || kind === "ms") && n <= 0) return fail(expected);
      if (kind === "ms" && n > MAX_TIMER_MS) return fail(expected);
      if (n < min) return fail(`at least ${min} milliseconds`);
      return n;
    }
    case "boolean": {
      if (typeof value === "boolean") return value;
      const s = typeof value === "string" ? value.trim().toLowerCase() : undefined;
      if (fromEnv || typeof value === "string") {
        if (s && ["1", "true", "yes", "on"].includes(s)) return true;
        if (s && ["0", "false", "no", "off"].includes(s)) return false;
      }
      return fail("true or false");
    }
    case "string":
      if (typeof value === "string") return value;
      if (typeof value === "number" && !fromEnv) return String(value);
      return fail("a string");
    case "names": {
      // A list, or one string of comma-separated names (the environment's only form).
      const items = typeof value === "string" ? value.split(",") : value;
      if (!Array.isArray(items) || !items.every((item) => typeof item === "string")) return fail("a list of names");
      const names = items.map((item: string) => item.trim()).filter(Boolean);
      if (names.length === 0) return fail("a list of at least one name");
      return names;
    }
    case "urlPath":
      if (typeof value !== "string" || !value.startsWith("/")) return fail('a URL path starting with "/"');
      // A request's path never holds these raw (they arrive percent-encoded): such a webhook could never match.
      if (/[\x00-\x20\x7f?#]/.test(value))
        return fail('a URL path starting with "/", without spaces, control characters, "?" or "#"');
      return value;
    case "httpUrl": {
      // Checked now: a typo would otherwise fail every deploy, after the whole health check timeout.
      const url = typeof value === "string" && URL.canParse(value) ? new URL(value) : undefined;
      if (url && (url.protocol === "http:" || url.protocol === "https:")) return value;
      return fail("an http:// or https:// URL (like http://127.0.0.1:8080/up)");
    }
    case "hostname":
      // An address the listener can bind: a typo here must not leave the server on another address.
      if (typeof value === "string" && (isIP(value) || HOST_NAME.test(value))) return value;
      return fail(
        "an IP address or host name to listen on (like 127.0.0.1, ::1, 0.0.0.0 or localhost; no scheme, no port)",
      );
  }
}
