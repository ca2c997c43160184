/**
 * A real OpenID provider for the sign-in tests: npm `oidc-provider` (a certified implementation) on 127.0.0.1,
 * run by Node (it is a Node package). Its users are given as JSON; it prints `issuer <url>` once listening.
 *
 * Every request reaches it through a relay on the issuer's port, which can rewrite the ID token of the token
 * endpoint's answer, as an attacker between the service and the provider would: `POST /__test/id-token` with
 * `forged` (signed with another key under the provider's key id), `expired` (signed with the provider's own key,
 * `exp` an hour ago) or `as-is`.
 *
 *   node oidc-provider.mjs '{"clientId": "...", "clientSecret": "...", "redirectUris": [...], "users": {...}}'
 */
import { createServer, request } from "node:http";
import { generateKeyPairSync } from "node:crypto";
import Provider from "oidc-provider";
import { SignJWT, decodeJwt, decodeProtectedHeader, importJWK } from "jose";

const options = JSON.parse(process.argv[2]);

/** The provider's signing key (its private JWK), so that an expired token can be signed by it. */
const key = {
  ...generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" }),
  kid: "k1",
  alg: "RS256",
  use: "sig",
};
const other = {
  ...generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ format: "jwk" }),
  kid: "k1",
  alg: "RS256",
};

let rewrite = "as-is";

const front = createServer();
await new Promise((resolve) => front.listen(0, "127.0.0.1", resolve));
// `localhost`, not 127.0.0.1: another site than the service's, as a real provider is (cookies are per site).
const issuer = `http://${options.host ?? "127.0.0.1"}:${front.address().port}`;

const provider = new Provider(issuer, {
  clients: [
    {
      client_id: options.clientId,
      client_secret: options.clientSecret,
      redirect_uris: options.redirectUris,
      response_types: ["code"],
      grant_types: ["authorization_code"],
    },
  ],
  jwks: { keys: [key] },
  pkce: { required: () => true },
  claims: {
    openid: ["sub"],
    profile: ["preferred_username", "groups"],
    email: ["email", "email_verified"],
  },
  // The claims go in the ID token when the scope asks for them (as Keycloak's mappers put `groups` there); with
  // `userInfoOnly`, only in the user info (the ID token has `sub`), as the specification's default has it.
  conformIdTokenClaims: options.userInfoOnly === true,
  features: { devInteractions: { enabled: true } },
  async findAccount(_ctx, id) {
    const user = options.users[id];
    if (!user) return undefined;
    return { accountId: id, claims: () => ({ sub: id, ...user }) };
  },
  cookies: { keys: ["test-cookie-key-0123456789"] },
});
const back = provider.listen(0, "127.0.0.1");
await new Promise((resolve) => back.once("listening", resolve));
const backUrl = `http://127.0.0.1:${back.address().port}`;

/** The token answer's ID token, rewritten as asked. */
async function rewritten(body) {
  const answer = JSON.parse(body);
  if (!answer.id_token || rewrite === "as-is") return body;
  const claims = decodeJwt(answer.id_token);
  const header = decodeProtectedHeader(answer.id_token);
  const now = Math.floor(Date.now() / 1000);
  const [signer, payload] =
    rewrite === "forged"
      ? [other, { ...claims, groups: ["ops"] }]
      : [key, { ...claims, iat: now - 7200, exp: now - 3600 }];
  answer.id_token = await new SignJWT(payload)
    .setProtectedHeader({ alg: header.alg, kid: header.kid })
    .sign(await importJWK(signer, "RS256"));
  return JSON.stringify(answer);
}

/** One request relayed to the provider as it came (its Host kept: the provider's URLs are made from it). */
function relay(req, body) {
  return new Promise((resolve, reject) => {
    const upstream = request(
      `${backUrl}${req.url}`,
      { method: req.method, headers: { ...req.headers, "content-length": String(body.length) } },
      async (answer) => {
        const chunks = [];
        for await (const chunk of answer) chunks.push(chunk);
        resolve({ status: answer.statusCode, headers: answer.headers, body: Buffer.concat(chunks) });
      },
    );
    upstream.on("error", reject);
    upstream.end(body);
  });
}

front.on("request", async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = Buffer.concat(chunks);
  if (req.url === "/__test/id-token" && req.method === "POST") {
    rewrite = body.toString();
    res.end("ok");
    return;
  }
  const answer = await relay(req, body);
  let text = answer.body;
  if (req.url.startsWith("/token") && answer.status === 200) text = Buffer.from(await rewritten(text.toString()));
  const headers = { ...answer.headers };
  delete headers["content-length"];
  delete headers["transfer-encoding"];
  delete headers.connection;
  res.writeHead(answer.status, { ...headers, "content-length": String(text.length) });
  res.end(text);
});

process.stdout.write(`issuer ${issuer}\n`);
