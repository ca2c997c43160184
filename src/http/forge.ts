/**
 * Forge deliveries: which event a request is and its delivery id (from the forge's headers), and whether an app
 * that set `branch` or `events` deploys it. Without those keys every authorized POST deploys, as docs/http.md says.
 */
import { branchOfPush, type Payload } from "./payload.ts";
import { jsonResponse } from "./json.ts";
import type { ForgeDelivery } from "../types.ts";

/**
 * Each forge's event and delivery headers. Gitea and Forgejo also send Gogs' and GitHub's headers, with the
 * same values, so the first present pair is the answer.
 */
const HEADERS: readonly (readonly [event: string, delivery: string])[] = [
  ["x-github-event", "x-github-delivery"],
  ["x-gitlab-event", "x-gitlab-event-uuid"],
  ["x-gitea-event", "x-gitea-delivery"],
  ["x-forgejo-event", "x-forgejo-delivery"],
  ["x-gogs-event", "x-gogs-delivery"],
  ["x-event-key", "x-request-uuid"],
];

/** Longest event name or delivery id kept: they go into logs, the script's environment and the terminal. */
const MAX_HEADER_CHARS = 200;

/** Printable ASCII only, bounded: a header value never carries terminal escapes or control bytes into a log. */
function clean(value: string | null): string | null {
  if (value === null) return null;
  const printable = value.trim().replace(/[^\x20-\x7e]/g, "?");
  if (!printable) return null;
  return printable.length > MAX_HEADER_CHARS ? `${printable.slice(0, MAX_HEADER_CHARS)}…` : printable;
}

export function forgeDelivery(headers: Headers): ForgeDelivery {
  for (const [event, delivery] of HEADERS) {
    const name = clean(headers.get(event));
    if (name !== null) return { event: name, delivery: clean(headers.get(delivery)) };
  }
  return { event: null, delivery: null };
}

/**
 * The delivery id as the forge sent it (trimmed, never cut): what tells two deliveries apart (http/dedupe.ts keeps
 * its hash). `forgeDelivery`'s is cut for logs and may name two deliveries alike.
 */
export function wholeDeliveryId(headers: Headers): string | null {
  for (const [event, delivery] of HEADERS)
    if (clean(headers.get(event)) !== null) return headers.get(delivery)?.trim() || null;
  return null;
}

/** Each forge's name of a push (GitLab names a tag push apart): what the word `push` in `events` matches. */
const PUSH_EVENTS = new Set(["push", "push hook", "tag push hook", "repo:push"]);

const isPush = (event: string) => PUSH_EVENTS.has(event.toLowerCase());

/** Whether `events` lists `event`: the forge's own name (any case), or `push` for any forge's push. */
function listed(events: readonly string[], event: string): boolean {
  const name = event.toLowerCase();
  return events.some((entry) => {
    const wanted = entry.toLowerCase();
    return wanted === name || (wanted === "push" && isPush(event));
  });
}

export interface Skip extends ForgeDelivery {
  message: string;
  ref?: string;
  /** A push skipped by triggers/ (paths, a marker): its text again, as `reason`. */
  reason?: string;
}

/**
 * Why an app does not deploy a delivery, or undefined when it does. Only with `branch` or `events` set: then an
 * event that is not listed (with `branch` alone: not a push) is skipped, and so is a push or ref event whose
 * body names another ref than `branch`. A request without a forge event header (curl) is not a forge delivery:
 * `events` leaves it alone, and `branch` only looks at a ref its body names.
 */
export function skipReason(
  app: { branch?: string; events?: readonly string[]; tags?: string },
  delivery: ForgeDelivery,
  payload: Payload | undefined,
): Skip | undefined {
  if (!app.branch && !app.events && !app.tags) return undefined;
  const { event } = delivery;
  if (event !== null && !(app.events ? listed(app.events, event) : isPush(event))) {
    // A forge sends a ping when the webhook is created: answered 200, so the forge shows it green.
    if (event.toLowerCase() === "ping") return { ...delivery, message: "ping: the webhook works" };
    const deploys = app.events
      ? `on ${app.events.join(", ")}`
      : app.branch
        ? `pushes to branch ${app.branch}`
        : `pushes of tags (${app.tags})`;
    return { ...delivery, message: `${event} event; this app deploys ${deploys} only` };
  }
  if (!app.branch && !app.tags) return undefined;
  const pushed = branchOfPush(payload, app.branch);
  // With `tags`, a tag push is the tag trigger's to judge (triggers/tags.ts); a branch push deploys only by `branch`.
  if (!pushed || pushed.branch === app.branch || (app.tags && pushed.ref.startsWith("refs/tags/"))) return undefined;
  if (!app.branch)
    return {
      ...delivery,
      ref: pushed.ref,
      message: `a push to ${pushed.ref.replace(/^refs\/(heads|tags)\//, "")}: this app deploys tags (${app.tags})`,
    };
  const [kind, name] = pushed.ref.startsWith("refs/tags/")
    ? ["tag", pushed.ref.slice(10)]
    : pushed.ref.startsWith("refs/heads/")
      ? ["branch", pushed.ref.slice(11)]
      : ["ref", pushed.ref];
  const what = event === null || isPush(event) ? (kind === "branch" ? "push to" : "push of") : `${event} of`;
  return {
    ...delivery,
    ref: pushed.ref,
    message: `${what} ${kind} ${name} (${pushed.ref}); this app deploys branch ${app.branch} only`,
  };
}

/** The 200 answer to a skipped delivery: `[skipped] <why>`, or JSON with `skipped: true`. */
export function skippedResponse(skip: Skip, json: boolean): Response {
  if (json) return jsonResponse(200, { skipped: true, ok: true, ...skip });
  return new Response(`[skipped] ${skip.message}\n`, { headers: { "content-type": "text/plain; charset=utf-8" } });
}
