/**
 * Checking a request's secret: the headers (constant time) and forge signatures over the body (HMAC-SHA256 or
 * SHA1), the latter also as the body streams in, so it need not be kept.
 */
import { hmac, sameBytes, sha256 as digest } from "../system/digest.ts";

/** The digest of the last expected secret: it is the same on every request, so it is hashed once. */
let expectedDigest = { secret: "", digest: digest("") };

/** Constant-time string comparison: both sides are hashed first so lengths never leak or throw. */
export function secretsEqual(given: string, expected: string): boolean {
  if (expectedDigest.secret !== expected) expectedDigest = { secret: expected, digest: digest(expected) };
  return sameBytes(digest(given), expectedDigest.digest);
}

/** Headers carrying an HMAC of the body: `<algorithm>=<hex>`, or bare hex (sha256) for Gitea/Forgejo/Gogs. */
const SIGNATURE_HEADERS = [
  "x-hub-signature-256",
  "x-hub-signature",
  "x-gitea-signature",
  "x-forgejo-signature",
  "x-gogs-signature",
];

/**
 * The signature headers that carry a digest. Gitea/Forgejo send all four even with no webhook secret (when
 * the user authenticates with their "Authorization Header" field instead): empty, or `sha1=` / `sha256=`
 * with nothing after. Such a header signs nothing, so it is not counted, neither for nor against.
 */
export function presentSignatures(headers: Headers): string[] {
  const present: string[] = [];
  for (const name of SIGNATURE_HEADERS) {
    const value = headers.get(name)?.trim();
    if (value && !EMPTY_SIGNATURE.test(value)) present.push(value);
  }
  return present;
}

const EMPTY_SIGNATURE = /^(sha1|sha256)=$/i;

/** HMACs (hex) of a body, by algorithm: computed as it streamed in, so the body itself need not be kept. */
export type BodyDigests = Partial<Record<"sha256" | "sha1", string>>;

const SIGNATURE = /^(?:(sha256|sha1)=)?([0-9a-f]+)$/i;
const signatureAlgorithm = (value: string) =>
  (SIGNATURE.exec(value.trim())?.[1] ?? "sha256").toLowerCase() as "sha256" | "sha1";

const hmacHex = (algorithm: "sha256" | "sha1", secret: string, body: Uint8Array) => {
  const h = hmac(algorithm, secret);
  h.update(body);
  return h.digest("hex");
};

/** `sha256=<hex>` (GitHub, Gitea, Bitbucket Cloud), `sha1=<hex>` (GitHub's legacy header) or bare hex. */
function signatureMatches(value: string, secret: string, body: Uint8Array | BodyDigests): boolean {
  const match = SIGNATURE.exec(value.trim());
  const algorithm = signatureAlgorithm(value);
  const expected = body instanceof Uint8Array ? hmacHex(algorithm, secret, body) : (body[algorithm] ?? "");
  return secretsEqual((match?.[2] ?? "").toLowerCase(), expected) && match !== null && expected !== "";
}

/**
 * The HMACs the request's signature headers call for, fed the body chunk by chunk as it arrives; `digests()`
 * is what `verifyRequestSecret` takes in place of the body.
 */
export function bodySigner(
  headers: Headers,
  secret: string,
): { update(chunk: Uint8Array): void; digests(): BodyDigests } {
  const algorithms = [...new Set(presentSignatures(headers).map(signatureAlgorithm))];
  const hmacs = algorithms.map((algorithm) => [algorithm, hmac(algorithm, secret.trim())] as const);
  return {
    update: (chunk) => {
      for (const [, hmac] of hmacs) hmac.update(chunk);
    },
    digests: () => Object.fromEntries(hmacs.map(([algorithm, hmac]) => [algorithm, hmac.digest("hex")])),
  };
}

/**
 * Checks a request's credentials against `secret`. Accepted: `X-Service-Secret: <secret>`,
 * `Authorization: Bearer <secret>`, `X-Gitlab-Token: <secret>` (GitLab's "Secret token"), and an HMAC of the
 * raw body in `X-Hub-Signature-256` / `X-Hub-Signature` (GitHub, Gitea/Forgejo, Bitbucket Cloud) or
 * `X-Gitea-Signature` / `X-Forgejo-Signature` / `X-Gogs-Signature`. At least one must be present, and every
 * one present must be right: a wrong header is a 401 even next to a right one. `body` (the raw body, or its
 * `bodySigner` digests) is needed only when a signature header is present; `signatures` (presentSignatures) when
 * the caller has them already.
 */
export function verifyRequestSecret(
  headers: Headers,
  secret: string,
  body?: Uint8Array | BodyDigests,
  signatures = presentSignatures(headers),
): boolean {
  const candidates: string[] = [];
  for (const name of ["x-service-secret", "x-gitlab-token"]) {
    const value = headers.get(name);
    if (value !== null) candidates.push(value.trim());
  }
  const authorization = headers.get("authorization");
  if (authorization !== null) {
    // Other schemes (Basic from a proxy, say) are not ours to judge.
    const match = /^Bearer(?:\s+(.*))?$/i.exec(authorization.trim());
    if (match) candidates.push((match[1] ?? "").trim());
  }
  // Header values arrive trimmed, so surrounding whitespace in the configured value (a YAML block scalar's
  // newline, say) is not part of the secret.
  const expected = secret.trim();
  if (!expected || candidates.length + signatures.length === 0 || candidates.some((c) => c === "")) return false;
  if (signatures.length > 0 && !body) return false;
  let ok = true;
  for (const candidate of candidates) ok = secretsEqual(candidate, expected) && ok;
  for (const signature of signatures) ok = signatureMatches(signature, expected, body!) && ok;
  return ok;
}
