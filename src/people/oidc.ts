/**
 * `adminOidc` (docs/admin.md "Sign in with your provider"): the authorization code flow with PKCE, `state` and
 * `nonce`, through oauth4webapi. The ID token's algorithm, `iss`, `aud`, `exp` and `nonce` are checked by it, its
 * signature against the issuer's JWKS. Loaded only when `adminOidc` is configured.
 */
import * as oauth from "oauth4webapi";
import type { OidcSettings } from "../config/people.ts";
import { oneLine } from "../system/actor.ts";
import { isLoopback } from "../system/address.ts";
import type { Person } from "./roles.ts";
import type { FollowedSecret } from "./secret-file.ts";

/** How long a browser has between leaving for the provider and coming back. */
export const SIGN_IN_TTL_MS = 10 * 60 * 1000;
/** Sign-ins under way at most (anyone can start one): past it the oldest is forgotten. */
export const MAX_PENDING = 1000;
/** Every call to the provider (discovery, token, keys, user info) ends within this. */
const CALL_TIMEOUT_MS = 10_000;
/** Longest name kept from the claims, and most groups. */
const MAX_NAME_CHARS = 100;
const MAX_GROUPS = 200;

/** The cookie that ties the browser that left to the one that comes back: it holds the sign-in's `state`. */
export const SIGN_IN_COOKIE = "service_oidc";

interface Pending {
  verifier: string;
  nonce: string;
  expires: number;
}

/** A sign-in that cannot go on; the message is said on the login page (it names nothing secret). */
export class SignInError extends Error {
  override name = "SignInError";
}

export class OidcLogin {
  /** `state` → the sign-in under way; insertion order = oldest first. */
  private readonly pending = new Map<string, Pending>();
  private server: oauth.AuthorizationServer | undefined;

  constructor(
    private readonly settings: OidcSettings,
    private readonly clientSecret: FollowedSecret,
  ) {}

  get name(): string {
    return this.settings.name;
  }

  /** http:// only for a loopback issuer (the config refuses any other). */
  private get options() {
    const issuer = new URL(this.settings.issuer);
    return {
      [oauth.allowInsecureRequests]: issuer.protocol === "http:" && isLoopback(issuer.hostname),
      signal: () => AbortSignal.timeout(CALL_TIMEOUT_MS),
    };
  }

  private get client(): oauth.Client {
    return { client_id: this.settings.clientId };
  }

  /** The issuer's metadata, discovered once (again after a failure). */
  private async discover(): Promise<oauth.AuthorizationServer> {
    if (this.server) return this.server;
    const issuer = new URL(this.settings.issuer);
    try {
      const response = await oauth.discoveryRequest(issuer, { ...this.options, algorithm: "oidc" });
      this.server = await oauth.processDiscoveryResponse(issuer, response);
    } catch (error) {
      throw new SignInError(`the provider at ${this.settings.issuer} could not be asked: ${reason(error)}`);
    }
    return this.server;
  }

  /** A new sign-in: where to send the browser, and the `state` its cookie keeps. */
  async begin(redirectUri: string, now = Date.now()): Promise<{ location: string; state: string }> {
    const server = await this.discover();
    if (!server.authorization_endpoint) throw new SignInError("the provider names no authorization endpoint");
    for (const [state, pending] of this.pending) if (pending.expires <= now) this.pending.delete(state);
    while (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    this.pending.set(state, { verifier, nonce, expires: now + SIGN_IN_TTL_MS });
    const url = new URL(server.authorization_endpoint);
    url.search = new URLSearchParams({
      client_id: this.settings.clientId,
      redirect_uri: redirectUri,
      response_type: "code",
      scope: "openid profile email",
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
      nonce,
    }).toString();
    return { location: url.href, state };
  }

  /**
   * The provider's answer (the callback's query), for the sign-in whose `state` the browser's cookie holds: the
   * person, or a SignInError. A `state` is used once: a replayed callback finds nothing.
   */
  async finish(params: URLSearchParams, cookieState: string | undefined, redirectUri: string): Promise<Person> {
    const pending = cookieState ? this.pending.get(cookieState) : undefined;
    if (cookieState) this.pending.delete(cookieState);
    if (!pending || pending.expires <= Date.now())
      throw new SignInError("this sign-in has expired or was already used: sign in again");
    const server = await this.discover();
    const secret = this.clientSecret.current();
    if (!secret) throw new SignInError(this.clientSecret.problem ?? "the client secret cannot be read");
    const auth =
      server.token_endpoint_auth_methods_supported?.includes("client_secret_basic") === false
        ? oauth.ClientSecretPost(secret)
        : oauth.ClientSecretBasic(secret);
    try {
      const callback = oauth.validateAuthResponse(server, this.client, params, cookieState!);
      const response = await oauth.authorizationCodeGrantRequest(
        server,
        this.client,
        auth,
        callback,
        redirectUri,
        pending.verifier,
        this.options,
      );
      const tokens = await oauth.processAuthorizationCodeResponse(server, this.client, response, {
        expectedNonce: pending.nonce,
        requireIdToken: true,
      });
      // The claims were checked above; the signature is checked here, against the issuer's keys.
      await oauth.validateApplicationLevelSignature(server, response, this.options);
      const claims: Record<string, unknown> = { ...oauth.getValidatedIdTokenClaims(tokens)! };
      if (claims[this.settings.roles.claim] === undefined && server.userinfo_endpoint) {
        const info = await oauth.userInfoRequest(server, this.client, tokens.access_token, this.options);
        const more = await oauth.processUserInfoResponse(server, this.client, claims.sub as string, info);
        for (const [key, value] of Object.entries(more)) if (!(key in claims)) claims[key] = value;
      }
      return personOf(claims, this.settings.roles.claim);
    } catch (error) {
      if (error instanceof SignInError) throw error;
      throw new SignInError(`the sign-in was refused: ${reason(error)}`);
    }
  }
}

/** The person the claims name: `preferred_username`, else a verified email, else `sub`; `sub` kept beside. */
export function personOf(claims: Record<string, unknown>, claim: string): Person {
  const sub = String(claims.sub);
  const username = oneLine(claims.preferred_username, MAX_NAME_CHARS);
  const email = claims.email_verified === true ? oneLine(claims.email, MAX_NAME_CHARS) : undefined;
  const named = claims[claim];
  const groups = (Array.isArray(named) ? named : typeof named === "string" ? [named] : [])
    .filter((group): group is string => typeof group === "string")
    .slice(0, MAX_GROUPS);
  return { actor: `oidc:${username ?? email ?? oneLine(sub, MAX_NAME_CHARS)}`, sub, groups };
}

/** An error of the flow in one line, no secret in it (oauth4webapi's messages name claims, never values of tokens). */
function reason(error: unknown): string {
  if (error instanceof oauth.AuthorizationResponseError || error instanceof oauth.ResponseBodyError)
    return oneLine(`${error.error}${error.error_description ? `: ${error.error_description}` : ""}`, 200) ?? "refused";
  const message = error instanceof Error ? error.message : String(error);
  return oneLine(message, 200) ?? "unknown error";
}
