/**
 * The little the service interprets of a request body: the pushed branch when a branch filter asks for it
 * (reading the body is `body.ts`). Nothing else of a payload is interpreted.
 */

/** A pushed ref: `ref` as Git names it, `branch` as the `branch` key names it (tags keep `refs/tags/`). */
export interface PushedRef {
  ref: string;
  branch: string;
}

/**
 * The branch a push payload names, for GitHub, Gitea/Forgejo and GitLab (`ref: refs/heads/<branch>`) and
 * Bitbucket (`push.changes[].new`), JSON or GitHub's form encoding (`payload=<json>`). Undefined when the body
 * names no ref (a ping, curl with no body): such a request is not filtered.
 *
 * Bitbucket sends one delivery for a push of several refs (`git push origin dev main`): with `wanted`, the
 * change naming that branch is returned when there is one, so such a push is not skipped because another of
 * its refs came first.
 */
export function branchOfPush(body: Uint8Array, contentType: string | null, wanted?: string): PushedRef | undefined {
  let text = new TextDecoder().decode(body);
  // Media types are case-insensitive (RFC 9110 8.3.1).
  if (contentType?.toLowerCase().includes("application/x-www-form-urlencoded"))
    text = new URLSearchParams(text).get("payload") ?? "";
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!payload || typeof payload !== "object") return undefined;
  const { ref, ref_type: refType } = payload as { ref?: unknown; ref_type?: unknown };
  if (typeof ref === "string" && ref) {
    // A create or delete event names the ref short, with its kind beside it (`ref: v1, ref_type: tag`).
    if (!ref.startsWith("refs/") && (refType === "tag" || refType === "branch")) {
      return refType === "tag"
        ? { ref: `refs/tags/${ref}`, branch: `refs/tags/${ref}` }
        : { ref: `refs/heads/${ref}`, branch: ref };
    }
    return { ref, branch: ref.startsWith("refs/heads/") ? ref.slice(11) : ref };
  }
  const changes = (payload as { push?: { changes?: unknown } }).push?.changes;
  const pushed = Array.isArray(changes) ? changes.map(bitbucketRef).filter((r): r is PushedRef => r !== undefined) : [];
  return pushed.find((r) => r.branch === wanted) ?? pushed[0];
}

type BitbucketSide = { type?: unknown; name?: unknown } | null | undefined;

/** One Bitbucket change: its `new` side, or its `old` side when the ref was deleted (`new` is null then). */
function bitbucketRef(change: unknown): PushedRef | undefined {
  if (!change || typeof change !== "object") return undefined;
  const { new: after, old: before } = change as { new?: BitbucketSide; old?: BitbucketSide };
  const side = after ?? before;
  if (!side || typeof side.name !== "string" || !side.name) return undefined;
  if (side.type === "tag") return { ref: `refs/tags/${side.name}`, branch: `refs/tags/${side.name}` };
  return { ref: `refs/heads/${side.name}`, branch: side.name };
}
