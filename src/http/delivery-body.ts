/**
 * The body of a request that may deploy: a signed one's read within the shared budget of bodies not yet
 * authenticated, its signature checked as it streams in; a body read only to learn who pushed, read at best.
 */
import type { ResolvedApp } from "../config/apps.ts";
import { refusedBody, tooLarge } from "./answers.ts";
import { type ByteBudget, declaredLength, readBody, STREAMED_BODY_CHARGE_BYTES } from "./body.ts";
import { bodySigner, verifyRequestSecret } from "./signature.ts";

/** How long a body read only to learn who pushed may hold a deploy back (a forge's arrives at once). */
const ACTOR_READ_MS = 1000;

/**
 * The body (undefined when none was needed or it could not be read in time), the answer to a body refused, or
 * false when its signature is wrong.
 */
export async function deliveryBody(
  request: Request,
  app: ResolvedApp,
  signed: boolean,
  budget: ByteBudget,
): Promise<{ body: Uint8Array | undefined } | Response | false> {
  const secret = app.secret!;
  // A signed request's body read is charged to the shared budget, and the body is kept only when the branch
  // filter needs it or it costs no more than hashing it (who pushed is read from it); otherwise it is hashed as
  // it streams in.
  let body: Uint8Array | undefined;
  if (signed || app.branch || app.tags || app.previews) {
    const signer = signed ? bodySigner(request.headers, secret) : undefined;
    const small = (declaredLength(request) ?? Infinity) <= STREAMED_BODY_CHARGE_BYTES;
    const read = await readBody(request, {
      limit: app.maxBodyBytes,
      keep: !signer || Boolean(app.branch || app.tags || app.deploymentEvents || app.previews) || small,
      budget: signer && budget,
      onChunk: signer?.update,
    });
    if (!read.ok) return refusedBody(read.reason, tooLarge(app));
    const authorized = !signer || verifyRequestSecret(request.headers, secret, signer.digests());
    read.release();
    if (!authorized) return false;
    body = read.body;
  } else if (request.body) {
    // Authenticated by its headers, the body is needed only to learn who pushed: read at best, within
    // maxBodyBytes and ACTOR_READ_MS; a body too large or too slow deploys all the same, by its address.
    const read = await readBody(request, { limit: app.maxBodyBytes, keep: true, deadlineMs: ACTOR_READ_MS });
    if (read.ok) {
      read.release();
      body = read.body;
    }
  }
  return { body };
}
