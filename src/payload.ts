/**
 * The little the service reads of a request body: the raw bytes when a signature covers them, and the pushed
 * branch when a branch filter asks for it. Nothing else of a payload is interpreted.
 */

/** The body, or undefined when it is larger than `limit` bytes (reading stops there: nothing unbounded is kept). */
export async function readBoundedBody(request: Request, limit: number): Promise<Uint8Array | undefined> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limit) return undefined;
  if (!request.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

/**
 * The branch a push payload names, for GitHub, Gitea/Forgejo and GitLab (`ref: refs/heads/<branch>`) and
 * Bitbucket (`push.changes[].new`), JSON or GitHub's form encoding (`payload=<json>`). Undefined when the body
 * names no ref (a ping, curl with no body): such a request is not filtered.
 */
export function branchOfPush(body: Uint8Array, contentType: string | null): { ref: string; branch: string } | undefined {
  let text = new TextDecoder().decode(body);
  if (contentType?.includes("application/x-www-form-urlencoded")) text = new URLSearchParams(text).get("payload") ?? "";
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!payload || typeof payload !== "object") return undefined;
  const ref = (payload as { ref?: unknown }).ref;
  if (typeof ref === "string" && ref) return { ref, branch: ref.startsWith("refs/heads/") ? ref.slice(11) : ref };
  const change = (payload as { push?: { changes?: { new?: { type?: string; name?: string } | null }[] } }).push?.changes?.[0]?.new;
  if (change && typeof change.name === "string") {
    const kind = change.type === "tag" ? "tags" : "heads";
    return { ref: `refs/${kind}/${change.name}`, branch: change.type === "tag" ? `refs/tags/${change.name}` : change.name };
  }
  return undefined;
}
