/**
 * The little the service interprets of a request body, once it is authenticated: the pushed branch when a branch
 * filter asks for it, the commit the push names, and who pushed (reading the body is `body.ts`). Nothing else of
 * a payload is interpreted.
 */
import { cleanActor } from "../system/actor.ts";

/** A parsed JSON payload: an object, or nothing the service can read. */
export type Payload = Record<string, unknown>;

/** A pushed ref: `ref` as Git names it, `branch` as the `branch` key names it (tags keep `refs/tags/`). */
export interface PushedRef {
  ref: string;
  branch: string;
  /** The commit the push names for this ref (`after`, `checkout_sha`, Bitbucket's `new.target.hash`), when it does. */
  commit?: string;
}

/**
 * The body as a JSON object: JSON, GitHub's form encoding (`payload=<json>`), or JSON sent with a form content
 * type (what `curl -d '{"ref": …}'` sends). Undefined for anything else (empty, text, a list).
 */
export function parsePayload(body: Uint8Array | undefined, contentType: string | null): Payload | undefined {
  if (!body || body.length === 0) return undefined;
  let text = new TextDecoder().decode(body);
  // Media types are case-insensitive (RFC 9110 8.3.1).
  if (contentType?.toLowerCase().includes("application/x-www-form-urlencoded") && !/^\s*[{[]/.test(text))
    text = new URLSearchParams(text).get("payload") ?? "";
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    return undefined;
  }
  return payload && typeof payload === "object" && !Array.isArray(payload) ? (payload as Payload) : undefined;
}

/**
 * The payload of an authenticated body, and the warning a deploy says when there is a body that does not parse as
 * the JSON object it should be: a signed one (a forge signs what it sends), or one whose content type says JSON.
 * It then deploys as a request that names nothing (curl), by its address: without the warning, silently.
 */
export function payloadOf(
  body: Uint8Array | undefined,
  headers: Headers,
  signed: boolean,
): { payload: Payload | undefined; warnings: string[] } {
  const contentType = headers.get("content-type");
  const payload = parsePayload(body, contentType);
  const json = signed || Boolean(contentType?.toLowerCase().includes("json"));
  if (payload || !body?.length || !json) return { payload, warnings: [] };
  const warning = `the body did not parse as JSON (${body.length} bytes): who pushed and what it names are unknown; it deploys as a request that names nothing, by its address`;
  return { payload, warnings: [warning] };
}

const FULL_COMMIT = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
/** A full commit hash other than the all-zero one a forge sends for a deleted ref. */
const commitOf = (value: unknown) =>
  typeof value === "string" && FULL_COMMIT.test(value) && /[1-9a-f]/.test(value) ? value : undefined;

/**
 * The branch a push payload names, for GitHub, Gitea/Forgejo and GitLab (`ref: refs/heads/<branch>`) and
 * Bitbucket (`push.changes[].new`). Undefined when the payload names no ref (a ping, curl with no body): such
 * a request is not filtered.
 *
 * Bitbucket sends one delivery for a push of several refs (`git push origin dev main`): with `wanted`, the
 * change naming that branch is returned when there is one, so such a push is not skipped because another of
 * its refs came first.
 */
export function branchOfPush(payload: Payload | undefined, wanted?: string): PushedRef | undefined {
  if (!payload) return undefined;
  const { ref, ref_type: refType } = payload as { ref?: unknown; ref_type?: unknown };
  if (typeof ref === "string" && ref) {
    // A create or delete event names the ref short, with its kind beside it (`ref: v1, ref_type: tag`).
    if (!ref.startsWith("refs/") && (refType === "tag" || refType === "branch")) {
      return refType === "tag"
        ? { ref: `refs/tags/${ref}`, branch: `refs/tags/${ref}` }
        : { ref: `refs/heads/${ref}`, branch: ref };
    }
    // GitLab's checkout_sha is null when the push deleted the ref; `after` is then all zeros.
    const commit = commitOf(payload.checkout_sha) ?? commitOf(payload.after);
    return {
      ref,
      branch: ref.startsWith("refs/heads/") ? ref.slice(11) : ref,
      ...(commit ? { commit } : {}),
    };
  }
  const changes = (payload as { push?: { changes?: unknown } }).push?.changes;
  const pushed = Array.isArray(changes) ? changes.map(bitbucketRef).filter((r): r is PushedRef => r !== undefined) : [];
  return pushed.find((r) => r.branch === wanted) ?? pushed[0];
}

type BitbucketSide = { type?: unknown; name?: unknown; target?: { hash?: unknown } } | null | undefined;

/** One Bitbucket change: its `new` side, or its `old` side when the ref was deleted (`new` is null then). */
function bitbucketRef(change: unknown): PushedRef | undefined {
  if (!change || typeof change !== "object") return undefined;
  const { new: after, old: before } = change as { new?: BitbucketSide; old?: BitbucketSide };
  const side = after ?? before;
  if (!side || typeof side.name !== "string" || !side.name) return undefined;
  if (side.type === "tag") return { ref: `refs/tags/${side.name}`, branch: `refs/tags/${side.name}` };
  const commit = after ? commitOf(after.target?.hash) : undefined;
  return { ref: `refs/heads/${side.name}`, branch: side.name, ...(commit ? { commit } : {}) };
}

/** A field of a nested object, when every step is an object. */
function field(payload: Payload, ...path: string[]): unknown {
  let value: unknown = payload;
  for (const key of path) value = value && typeof value === "object" ? (value as Payload)[key] : undefined;
  return value;
}

/**
 * Who pushed, as the forge names them: GitHub, Gitea and Forgejo `sender.login` (or `pusher.name`, `pusher.login`),
 * GitLab `user_username` (or `user_name`), Bitbucket `actor.nickname` (or `display_name`). Cleaned like every
 * actor; undefined when the payload names nobody.
 */
export function pusherOf(payload: Payload | undefined): string | undefined {
  if (!payload) return undefined;
  const candidates = [
    field(payload, "sender", "login"),
    field(payload, "pusher", "name"),
    field(payload, "pusher", "login"),
    field(payload, "pusher", "username"),
    payload.user_username,
    payload.user_name,
    field(payload, "actor", "nickname"),
    field(payload, "actor", "display_name"),
  ];
  for (const candidate of candidates) {
    const actor = cleanActor(candidate);
    if (actor) return actor;
  }
  return undefined;
}
