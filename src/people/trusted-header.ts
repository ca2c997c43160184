/**
 * `adminTrustedHeader` (docs/admin.md "A header from a trusted proxy"): the user a proxy in front of the listener
 * names (`Remote-User`, `Remote-Groups`). Believed only from an address in `from` that also sends the proxy's
 * secret (`X-Service-Proxy-Secret`, compared in constant time); any other request naming someone is refused, so a
 * script on the host cannot become an admin by sending a header.
 */
import { inCidrs, PROXY_SECRET_HEADER, type TrustedHeaderSettings } from "../config/people.ts";
import { secretsEqual } from "../http/signature.ts";
import { oneLine } from "../system/actor.ts";
import type { Person } from "./roles.ts";
import { FollowedSecret } from "./secret-file.ts";

/** Longest user name kept from the header. */
const MAX_USER_CHARS = 100;
/** Most groups kept from the groups header. */
const MAX_GROUPS = 100;

export class TrustedHeader {
  readonly secret: FollowedSecret;

  constructor(private readonly settings: () => TrustedHeaderSettings | undefined) {
    const file = settings()?.secretFile ?? "";
    this.secret = new FollowedSecret(file, `adminTrustedHeader.secretFile: ${file}`);
  }

  /**
   * Who the request's proxy says it is: undefined when it names no one, `refused` when it names someone but does
   * not come from `from` with the secret (the caller counts it like a wrong token), else the person.
   */
  identify(request: Request, peer: string): Person | "refused" | undefined {
    const settings = this.settings();
    if (!settings) return undefined;
    const user = request.headers.get(settings.header);
    const groups = settings.groupsHeader ? request.headers.get(settings.groupsHeader) : null;
    if (user === null && groups === null) return undefined;
    const given = request.headers.get(PROXY_SECRET_HEADER) ?? "";
    const secret = this.secret.current();
    // Both checks always run: the time taken says nothing of which one failed.
    const fromProxy = inCidrs(peer, settings.from);
    const proven = secret !== undefined && secretsEqual(given, secret);
    if (!fromProxy || !proven) return "refused";
    const name = oneLine(user, MAX_USER_CHARS);
    if (!name) return "refused";
    const list = (groups ?? "")
      .split(",")
      .map((group) => group.trim())
      .filter(Boolean)
      .slice(0, MAX_GROUPS);
    return { actor: `proxy:${name}`, groups: list };
  }
}
