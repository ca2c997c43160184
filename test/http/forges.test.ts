/**
 * The Git hosts for real (docs/forges.md "Git hosts"): GitHub, Gitea/Forgejo and Bitbucket Cloud sign the
 * body with the webhook's secret, GitLab sends it as a token. Deliveries shaped like the recorded ones, against
 * the real server; plus the body limit, the opt-in branch filter and the opt-in immediate acknowledgement.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { makeGate, StreamReader, startGated } from "../_support/gate.ts";
import { chunkedBytes, exchange } from "../_support/raw-http.ts";
import {
  defer,
  lastLine,
  logFiles,
  makeRepo,
  post,
  readJson,
  runCli,
  SECRET,
  startServer,
  tempDir,
  waitFor,
} from "../_support/helpers.ts";
import { envConfig } from "../../src/config/env-keys.ts";
import { normalizeUserConfig } from "../../src/config/keys.ts";
import { ConfigError } from "../../src/config/schema.ts";
import { verifyRequestSecret } from "../../src/http/signature.ts";
import {
  atCommit,
  bitbucketHeaders,
  bitbucketPush,
  deployRecords,
  giteaPush,
  githubEvent,
  githubHeaders,
  githubPush,
  gitlabHeaders,
  gitlabPush,
  gitlabTagPush,
  hmacHex,
  jsonLogFiles,
  markerScript,
  postAs,
  writeServiceYaml,
} from "../_support/webhook-fixtures.ts";

const DONE_OK = "[done] ok=true exitCode=0";
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const bytes = (text: string) => new TextEncoder().encode(text);

/** Bitbucket's delivery for a deleted branch: `new` is null, `old` names the branch. */
function bitbucketDeletion(branch: string): Record<string, unknown> {
  const payload = bitbucketPush(branch) as { push: { changes: Record<string, unknown>[] } };
  payload.push.changes[0]!.new = null;
  payload.push.changes[0]!.closed = true;
  return payload;
}

/** GitHub's published example: https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries */
const VECTOR = {
  secret: "It's a Secret to Everybody",
  body: "Hello, World!",
  sha256: "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
};

/**
 * A repository served on its own (single-app mode) with SECRET and a run script that just says it ran:
 * `await using server = await serveRepo()`, with `server.repo` and `server.deploys()` (how many deploys logged).
 */
async function serveRepo(env: Record<string, string> = {}) {
  const repo = makeRepo();
  const server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo deployed", ...env });
  return Object.assign(server, { repo, deploys: () => jsonLogFiles(repo.clone).length });
}

/** Sends a request that must be refused with 401 JSON. */
async function expectUnauthorized(what: string, response: Promise<Response>) {
  const res = await response;
  const body = await res.text();
  expect({ what, status: res.status }).toEqual({ what, status: 401 });
  expect(res.headers.get("content-type")).toContain("application/json");
  expect(JSON.parse(body).error).toBe("unauthorized");
}

async function expectDeployed(what: string, response: Promise<Response>) {
  const res = await response;
  const body = await res.text();
  expect({ what, status: res.status, last: lastLine(body) }).toEqual({ what, status: 200, last: DONE_OK });
}

describe("verifyRequestSecret (signatures over the raw body, constant-time)", () => {
  const body = bytes(VECTOR.body);
  const check = (headers: Record<string, string>, secret = VECTOR.secret, raw: Uint8Array | undefined = body) =>
    verifyRequestSecret(new Headers(headers), secret, raw);

  test("GitHub's published test vector: the fixture's HMAC matches it, and X-Hub-Signature-256: sha256=<it> is accepted", () => {
    expect(hmacHex(VECTOR.secret, VECTOR.body)).toBe(VECTOR.sha256);
    expect(check({ "x-hub-signature-256": `sha256=${VECTOR.sha256}` })).toBe(true);
  });

  test("the same signature as Bitbucket Cloud (X-Hub-Signature: sha256=…) and Gitea/Forgejo (bare hex) send it is accepted", () => {
    expect(check({ "x-hub-signature": `sha256=${VECTOR.sha256}` })).toBe(true);
    expect(check({ "x-gitea-signature": VECTOR.sha256 })).toBe(true);
    expect(check({ "x-forgejo-signature": VECTOR.sha256 })).toBe(true);
    expect(
      check({
        "x-gitea-signature": VECTOR.sha256,
        "x-gogs-signature": VECTOR.sha256,
        "x-hub-signature-256": `sha256=${VECTOR.sha256}`,
      }),
    ).toBe(true);
  });

  test("GitHub's legacy X-Hub-Signature: sha1=… beside a right sha256 is accepted when right, refused when wrong", () => {
    const sha1 = hmacHex(VECTOR.secret, VECTOR.body, "sha1");
    expect(check({ "x-hub-signature-256": `sha256=${VECTOR.sha256}`, "x-hub-signature": `sha1=${sha1}` })).toBe(true);
    expect(
      check({ "x-hub-signature-256": `sha256=${VECTOR.sha256}`, "x-hub-signature": `sha1=${"0".repeat(40)}` }),
    ).toBe(false);
  });

  test("a tampered body, another secret, a missing body, a malformed or truncated header: refused", () => {
    const good = { "x-hub-signature-256": `sha256=${VECTOR.sha256}` };
    expect(check(good, VECTOR.secret, bytes("Hello, World?"))).toBe(false);
    expect(check(good, VECTOR.secret, bytes("Hello, World! "))).toBe(false);
    expect(check(good, "It's a Secret to Everybody!")).toBe(false);
    expect(verifyRequestSecret(new Headers(good), VECTOR.secret)).toBe(false);
    expect(check({ "x-hub-signature-256": "sha256=zz" })).toBe(false);
    expect(check({ "x-hub-signature-256": `sha256=${VECTOR.sha256.slice(0, 63)}` })).toBe(false);
    expect(check({ "x-hub-signature-256": `sha512=${VECTOR.sha256}` })).toBe(false);
    expect(check({ "x-hub-signature-256": "sha256=" })).toBe(false);
    expect(check({})).toBe(false);
  });

  test("a header present but wrong is refused even beside a right one", () => {
    const good = { "x-hub-signature-256": `sha256=${VECTOR.sha256}` };
    expect(check({ ...good, "x-service-secret": "wrong" })).toBe(false);
    expect(check({ ...good, authorization: "Bearer wrong" })).toBe(false);
    expect(check({ ...good, "x-gitlab-token": "wrong" })).toBe(false);
    expect(check({ ...good, "x-service-secret": VECTOR.secret })).toBe(true);
  });

  test("the empty signatures Gitea/Forgejo send with no webhook secret (sha1=, sha256=, '') neither help nor hurt an Authorization header", () => {
    const unsigned = {
      "x-gitea-signature": "",
      "x-gogs-signature": "",
      "x-hub-signature": "sha1=",
      "x-hub-signature-256": "sha256=",
    };
    expect(
      verifyRequestSecret(new Headers({ ...unsigned, authorization: `Bearer ${VECTOR.secret}` }), VECTOR.secret),
    ).toBe(true);
    expect(verifyRequestSecret(new Headers({ ...unsigned, authorization: "Bearer wrong" }), VECTOR.secret)).toBe(false);
    expect(verifyRequestSecret(new Headers(unsigned), VECTOR.secret, body)).toBe(false);
  });

  test("X-Gitlab-Token: <secret> is accepted as it is; a wrong or empty token is refused", () => {
    // No signature header: the body is not needed (the server does not read it).
    expect(verifyRequestSecret(new Headers({ "x-gitlab-token": VECTOR.secret }), VECTOR.secret)).toBe(true);
    expect(verifyRequestSecret(new Headers({ "x-gitlab-token": "It's a secret to everybody" }), VECTOR.secret)).toBe(
      false,
    );
    expect(verifyRequestSecret(new Headers({ "x-gitlab-token": "" }), VECTOR.secret)).toBe(false);
  });
});

describe("GitHub deliveries (X-Hub-Signature-256)", () => {
  test("a push signed with the secret deploys, with or without the legacy sha1 header beside it", async () => {
    await using server = await serveRepo();
    const { deploys } = server;
    const body = JSON.stringify(githubPush());
    await expectDeployed(
      "sha256 only",
      post(server.url, {
        headers: { ...githubHeaders(), "x-hub-signature-256": `sha256=${hmacHex(SECRET, body)}` },
        body,
      }),
    );
    await expectDeployed(
      "sha256 and sha1",
      post(server.url, {
        headers: {
          ...githubHeaders(),
          "x-hub-signature-256": `sha256=${hmacHex(SECRET, body)}`,
          "x-hub-signature": `sha1=${hmacHex(SECRET, body, "sha1")}`,
        },
        body,
      }),
    );
    expect(deploys()).toBe(2);
  });

  test("wrong secret, missing signature, tampered body, malformed header, wrong sha1 beside a right sha256, right signature with a wrong X-Service-Secret: 401, nothing runs", async () => {
    await using server = await serveRepo();
    const { deploys } = server;
    const body = JSON.stringify(githubPush());
    const signature = `sha256=${hmacHex(SECRET, body)}`;
    const tampered = body.replace('"Update README.md"', '"Update README.mD"');
    expect(tampered).not.toBe(body);
    expect(tampered.length).toBe(body.length);
    const cases: [string, Record<string, string>, string][] = [
      ["signed with another secret", { "x-hub-signature-256": `sha256=${hmacHex(`${SECRET}x`, body)}` }, body],
      ["no signature at all", {}, body],
      ["one byte of the body changed", { "x-hub-signature-256": signature }, tampered],
      ["malformed header sha256=zz", { "x-hub-signature-256": "sha256=zz" }, body],
      [
        "right sha256, wrong legacy sha1",
        { "x-hub-signature-256": signature, "x-hub-signature": `sha1=${hmacHex("other", body, "sha1")}` },
        body,
      ],
      [
        "right sha256, wrong X-Service-Secret",
        { "x-hub-signature-256": signature, "x-service-secret": "not-the-secret" },
        body,
      ],
    ];
    for (const [what, headers, sent] of cases) {
      await expectUnauthorized(what, post(server.url, { headers: { ...githubHeaders(), ...headers }, body: sent }));
    }
    expect(deploys()).toBe(0);
    await expectDeployed(
      "the right delivery afterwards",
      post(server.url, { headers: { ...githubHeaders(), "x-hub-signature-256": signature }, body }),
    );
    expect(deploys()).toBe(1);
  });

  test("GitHub's form-encoded delivery (application/x-www-form-urlencoded, payload=<json>) with a right signature deploys", async () => {
    await using server = await serveRepo();
    const { deploys } = server;
    const body = `payload=${encodeURIComponent(JSON.stringify(githubPush()))}`;
    const headers = githubHeaders("application/x-www-form-urlencoded");
    await expectDeployed(
      "form-encoded",
      post(server.url, { headers: { ...headers, "x-hub-signature-256": `sha256=${hmacHex(SECRET, body)}` }, body }),
    );
    await expectUnauthorized(
      "form-encoded, signature of the JSON inside",
      post(server.url, {
        headers: { ...headers, "x-hub-signature-256": `sha256=${hmacHex(SECRET, JSON.stringify(githubPush()))}` },
        body,
      }),
    );
    expect(deploys()).toBe(1);
  });
});

describe("Gitea/Forgejo, Bitbucket Cloud and GitLab deliveries", () => {
  test("Gitea/Forgejo: X-Gitea-Signature (bare hex) and X-Hub-Signature-256 deploy; wrong, tampered or missing: 401; the Authorization Header field works without a Secret", async () => {
    await using server = await serveRepo();
    const { deploys } = server;
    const body = JSON.stringify(giteaPush());
    const hex = hmacHex(SECRET, body);
    const base = {
      "content-type": "application/json",
      "user-agent": "Go-http-client/1.1",
      "x-gitea-event": "push",
      "x-gitea-event-type": "push",
      "x-gitea-delivery": "4e1bd1d6-0c7c-4b7d-9a5e-2f0f7a3c6b1e",
    };
    // What Gitea sends: its own header, Gogs' and GitHub's two (sha1 and sha256).
    const giteaSigned = {
      ...base,
      "x-gitea-signature": hex,
      "x-gogs-signature": hex,
      "x-hub-signature": `sha1=${hmacHex(SECRET, body, "sha1")}`,
      "x-hub-signature-256": `sha256=${hex}`,
    };
    await expectDeployed("Gitea's four headers", post(server.url, { headers: giteaSigned, body }));
    await expectDeployed(
      "X-Gitea-Signature alone",
      post(server.url, { headers: { ...base, "x-gitea-signature": hex }, body }),
    );
    await expectDeployed(
      "Forgejo's header",
      post(server.url, { headers: { ...base, "x-forgejo-signature": hex, "x-forgejo-event": "push" }, body }),
    );
    await expectDeployed(
      "X-Hub-Signature-256 alone",
      post(server.url, { headers: { ...base, "x-hub-signature-256": `sha256=${hex}` }, body }),
    );
    expect(deploys()).toBe(4);
    await expectUnauthorized(
      "wrong secret",
      post(server.url, { headers: { ...base, "x-gitea-signature": hmacHex("other", body) }, body }),
    );
    await expectUnauthorized(
      "tampered",
      post(server.url, { headers: { ...base, "x-gitea-signature": hex }, body: body.replace("main", "mail") }),
    );
    await expectUnauthorized(
      "right X-Hub-Signature-256, wrong X-Gitea-Signature",
      post(server.url, {
        headers: { ...base, "x-gitea-signature": hmacHex("other", body), "x-hub-signature-256": `sha256=${hex}` },
        body,
      }),
    );
    await expectUnauthorized("missing", post(server.url, { headers: base, body }));
    expect(deploys()).toBe(4);
    // No Secret in Gitea, the "Authorization Header" field set instead: the signature headers come empty.
    const unsigned = {
      ...base,
      "x-gitea-signature": "",
      "x-gogs-signature": "",
      "x-hub-signature": "sha1=",
      "x-hub-signature-256": "sha256=",
    };
    await expectDeployed(
      "Authorization header, empty signatures",
      post(server.url, { headers: { ...unsigned, authorization: `Bearer ${SECRET}` }, body }),
    );
    await expectUnauthorized(
      "wrong Authorization header, empty signatures",
      post(server.url, { headers: { ...unsigned, authorization: "Bearer wrong" }, body }),
    );
    await expectUnauthorized("empty signatures only", post(server.url, { headers: unsigned, body }));
    expect(deploys()).toBe(5);
  });

  test("Bitbucket Cloud: X-Hub-Signature: sha256=… deploys; wrong, tampered or missing: 401", async () => {
    await using server = await serveRepo();
    const { deploys } = server;
    const body = JSON.stringify(bitbucketPush());
    const signature = `sha256=${hmacHex(SECRET, body)}`;
    await expectDeployed(
      "signed",
      post(server.url, { headers: { ...bitbucketHeaders(), "x-hub-signature": signature }, body }),
    );
    await expectUnauthorized(
      "wrong secret",
      post(server.url, {
        headers: { ...bitbucketHeaders(), "x-hub-signature": `sha256=${hmacHex("other", body)}` },
        body,
      }),
    );
    await expectUnauthorized(
      "tampered",
      post(server.url, {
        headers: { ...bitbucketHeaders(), "x-hub-signature": signature },
        body: body.replace('"main"', '"mainx"'),
      }),
    );
    await expectUnauthorized("missing", post(server.url, { headers: bitbucketHeaders(), body }));
    expect(deploys()).toBe(1);
  });

  test("GitLab: X-Gitlab-Token: <secret> deploys; a wrong or missing token: 401", async () => {
    await using server = await serveRepo();
    const { deploys } = server;
    const body = JSON.stringify(gitlabPush());
    await expectDeployed(
      "right token",
      post(server.url, { headers: { ...gitlabHeaders(), "x-gitlab-token": SECRET }, body }),
    );
    await expectUnauthorized(
      "wrong token",
      post(server.url, { headers: { ...gitlabHeaders(), "x-gitlab-token": `${SECRET}-old` }, body }),
    );
    await expectUnauthorized(
      "token of another case",
      post(server.url, { headers: { ...gitlabHeaders(), "x-gitlab-token": SECRET.toUpperCase() }, body }),
    );
    await expectUnauthorized("missing token", post(server.url, { headers: gitlabHeaders(), body }));
    expect(deploys()).toBe(1);
  });
});

describe("body limit (past the limit, 413, without buffering unbounded data)", () => {
  const LIMIT = 2000;

  test("a signed body over SERVICE_MAX_BODY_BYTES answers 413 JSON, sent with Content-Length or chunked; no deploy, no log file; a body of exactly the limit deploys", async () => {
    await using server = await serveRepo({ SERVICE_MAX_BODY_BYTES: String(LIMIT) });
    const { repo, deploys } = server;
    const big = JSON.stringify(githubPush("refs/heads/main", 10));
    expect(big.length).toBeGreaterThan(LIMIT * 2);
    const signed = (body: string) => ({
      ...githubHeaders(),
      "x-hub-signature-256": `sha256=${hmacHex(SECRET, body)}`,
    });
    const expectTooLarge = async (what: string, response: Response) => {
      const text = await response.text();
      expect({ what, status: response.status }).toEqual({ what, status: 413 });
      expect(response.headers.get("content-type")).toContain("application/json");
      expect(JSON.parse(text).error).toBe("payload too large");
    };

    await expectTooLarge("Content-Length, far over", await post(server.url, { headers: signed(big), body: big }));
    const oneOver = JSON.stringify(githubPush()).padEnd(LIMIT + 1, " ");
    await expectTooLarge(
      "Content-Length, one byte over",
      await post(server.url, { headers: signed(oneOver), body: oneOver }),
    );
    // A ReadableStream body goes out chunked: no Content-Length to refuse it by.
    const chunks = [big.slice(0, 1500), big.slice(1500, 3000), big.slice(3000)].map(bytes);
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    await expectTooLarge(
      "a stream body",
      await fetch(server.url, { method: "POST", headers: signed(big), body: stream }),
    );
    // The same on the wire, explicitly chunked.
    const head = [
      "POST / HTTP/1.1",
      `Host: localhost:${server.port}`,
      "Content-Type: application/json",
      `X-Hub-Signature-256: sha256=${hmacHex(SECRET, big)}`,
      "Transfer-Encoding: chunked",
      "Connection: close",
      "",
      "",
    ].join("\r\n");
    const raw = await exchange(server.port, [head, chunkedBytes(big, 700)], {
      timeoutMs: 20_000,
      until: (text) => text.includes("payload too large"),
    });
    expect(raw.status).toBe(413);
    expect(raw.headers["content-type"]).toContain("application/json");
    expect(raw.body.toString()).toContain('"payload too large"');

    expect(logFiles(repo.clone)).toEqual([]);
    const exact = JSON.stringify(githubPush()).padEnd(LIMIT, " ");
    await expectDeployed("exactly the limit", post(server.url, { headers: signed(exact), body: exact }));
    expect(deploys()).toBe(1);
  });

  test("with a branch filter the body is read, so an over-limit body is refused with 413 even with X-Service-Secret", async () => {
    const repo = makeRepo();
    writeServiceYaml(repo.clone, { branch: "main", maxBodyBytes: LIMIT });
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo deployed" });
    const big = JSON.stringify(githubPush("refs/heads/dev", 10));
    const res = await post(server.url, {
      secret: SECRET,
      headers: { "content-type": "application/json" },
      body: big,
    });
    expect(res.status).toBe(413);
    expect((await res.json()).error).toBe("payload too large");
    expect(logFiles(repo.clone)).toEqual([]);
  });
});

describe("branch filter (opt-in `branch`; without it the body decides nothing)", () => {
  test("branch: main — pushes to another branch or a tag answer 200 skipped (text and JSON) and deploy nothing; main, a Bitbucket main push and an empty body deploy", async () => {
    const repo = makeRepo();
    writeServiceYaml(repo.clone, { branch: "main" });
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo deployed" });
    const deploys = () => jsonLogFiles(repo.clone).length;
    const json = { "content-type": "application/json" };
    const dev = JSON.stringify(githubPush("refs/heads/dev"));

    const text = await post(server.url, { secret: SECRET, headers: { ...githubHeaders() }, body: dev });
    expect(text.status).toBe(200);
    const said = await text.text();
    expect(said).toStartWith("[skipped]");
    expect(said).toContain("refs/heads/dev");
    expect(said).not.toContain("[done]");

    const asJson = await post(`${server.url}/?format=json`, { secret: SECRET, headers: json, body: dev });
    expect(asJson.status).toBe(200);
    const skipped = await asJson.json();
    expect(skipped.skipped).toBe(true);

    const skips: [string, Record<string, string>, string][] = [
      ["signed GitHub dev push", { ...githubHeaders(), "x-hub-signature-256": `sha256=${hmacHex(SECRET, dev)}` }, dev],
      [
        "form-encoded GitHub dev push",
        { ...githubHeaders("application/x-www-form-urlencoded"), "x-service-secret": SECRET },
        `payload=${encodeURIComponent(dev)}`,
      ],
      [
        "Bitbucket push to dev",
        { ...bitbucketHeaders(), "x-service-secret": SECRET },
        JSON.stringify(bitbucketPush("dev")),
      ],
      [
        "Bitbucket deletion of dev (new: null)",
        { ...bitbucketHeaders(), "x-service-secret": SECRET },
        JSON.stringify(bitbucketDeletion("dev")),
      ],
      [
        "form-encoded, media type in capitals",
        { "content-type": "Application/X-WWW-Form-URLEncoded", "x-service-secret": SECRET },
        `payload=${encodeURIComponent(dev)}`,
      ],
      [
        "GitLab push to dev",
        { ...gitlabHeaders(), "x-gitlab-token": SECRET },
        JSON.stringify(gitlabPush("refs/heads/dev")),
      ],
      ["Gitea tag push", { ...json, "x-service-secret": SECRET }, JSON.stringify(giteaPush("refs/tags/main"))],
      [
        "a branch whose name only starts with main",
        { ...json, "x-service-secret": SECRET },
        JSON.stringify(githubPush("refs/heads/main-old")),
      ],
    ];
    for (const [what, headers, body] of skips) {
      const res = await post(server.url, { headers, body });
      const out = await res.text();
      expect({ what, status: res.status, skipped: out.startsWith("[skipped]") }).toEqual({
        what,
        status: 200,
        skipped: true,
      });
    }
    // The secret is still checked first: a wrong one is a 401, not a "skipped".
    await expectUnauthorized("dev push, wrong secret", post(server.url, { secret: "wrong", headers: json, body: dev }));
    expect(logFiles(repo.clone)).toEqual([]);

    const head = repo.head();
    await expectDeployed(
      "GitHub push to main",
      post(server.url, {
        secret: SECRET,
        headers: json,
        body: JSON.stringify(atCommit(githubPush("refs/heads/main"), head)),
      }),
    );
    await expectDeployed(
      "Bitbucket push to main",
      post(server.url, {
        secret: SECRET,
        headers: bitbucketHeaders(),
        body: JSON.stringify(atCommit(bitbucketPush("main"), head)),
      }),
    );
    // One Bitbucket delivery for `git push origin dev main`: main is among the changes, so it deploys.
    const both = bitbucketPush("dev") as { push: { changes: unknown[] } };
    both.push.changes.push(...(atCommit(bitbucketPush("main"), head) as { push: { changes: unknown[] } }).push.changes);
    await expectDeployed(
      "Bitbucket push of dev and main",
      post(server.url, { secret: SECRET, headers: bitbucketHeaders(), body: JSON.stringify(both) }),
    );
    await expectDeployed("an empty body", post(server.url, { secret: SECRET }));
    await expectDeployed("{}", post(server.url, { secret: SECRET, headers: json, body: "{}" }));
    expect(deploys()).toBe(5);
  });

  test("without the branch key a push to dev deploys, and the body is not waited for: a request whose body never finishes still deploys", async () => {
    await using server = await serveRepo();
    const { deploys } = server;
    await expectDeployed(
      "dev push",
      post(server.url, {
        secret: SECRET,
        headers: { "content-type": "application/json" },
        body: JSON.stringify(githubPush("refs/heads/dev")),
      }),
    );
    expect(deploys()).toBe(1);
    // Content-Length promises far more than is sent: a server that read the body would wait for the rest.
    const part = JSON.stringify(githubPush("refs/heads/dev"));
    const head = [
      "POST / HTTP/1.1",
      `Host: localhost:${server.port}`,
      `X-Service-Secret: ${SECRET}`,
      "Content-Type: application/json",
      "Content-Length: 1000000",
      "",
      "",
    ].join("\r\n");
    const raw = await exchange(server.port, [head, part], {
      timeoutMs: 20_000,
      until: (text) => text.includes("[done]"),
    });
    expect(raw.status).toBe(200);
    expect(raw.body.toString()).toContain(DONE_OK);
    await waitFor(() => deploys() === 2, "the second deploy's log");
  });
});

describe("opt-in acknowledgement (answer at once with the deploy id; the deploy runs to completion)", () => {
  /** Waits for the deploy `id` to be recorded as done and returns its record. */
  const finished = (cwd: string, id: string) =>
    waitFor(() => deployRecords(cwd).find((r) => r.id === id && r.status === "done"), `deploy ${id} to finish`);

  test("?ack=1: the answer has fully arrived while the script is still blocked; it names the deploy, which then finishes", async () => {
    await using gated = await startGated();
    const { repo, gate, server } = gated;
    const res = await post(`${server.url}/?ack=1`, { secret: SECRET });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(gate.lines().filter((l) => l.startsWith("end"))).toEqual([]);
    expect(text).not.toContain("[done]");
    const id = UUID.exec(text)?.[0];
    expect(id).toBeDefined();
    // Where its logs are, in the service's working directory: no directory of the server goes to the client.
    expect(text).toContain(`[accepted] logs: .service/logs/*_${id}.{json,log}\n`);
    expect(text).not.toContain(repo.clone);
    await waitFor(() => gate.lines().length === 1, "the acknowledged deploy's script to start");
    expect(gate.starts()).toEqual([id!]);
    gate.open();
    const record = await finished(repo.clone, id!);
    expect(record.id).toBe(id);
    expect(record.result.ok).toBe(true);
    expect(record.status).toBe("done");
  });

  test("?ack=1&format=json: the answer is JSON with accepted: true and the id of the deploy that then runs", async () => {
    await using gated = await startGated();
    const { repo, gate, server } = gated;
    const res = await post(`${server.url}/?ack=1&format=json`, { secret: SECRET });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    const answer = await res.json();
    expect(gate.lines().filter((l) => l.startsWith("end"))).toEqual([]);
    expect(answer.accepted).toBe(true);
    expect(answer.id).toMatch(UUID);
    expect(answer.logs).toBe(`.service/logs/*_${answer.id}.{json,log}`);
    gate.open();
    const record = await finished(repo.clone, answer.id);
    expect(record.result.ok).toBe(true);
    expect(readJson(record.result.log.json).id).toBe(answer.id);
  });

  test("the acknowledge: true key of an app answers at once for that app; another app still streams", async () => {
    const quick = makeRepo();
    const streamed = makeRepo();
    const gate = makeGate();
    const markers = tempDir("service-markers-");
    const cwd = tempDir("service-apps-");
    writeServiceYaml(cwd, {
      apps: [
        {
          name: "web",
          host: "web.example.com",
          path: "/hook",
          repoPath: quick.clone,
          runScript: gate.script,
          secret: SECRET,
          acknowledge: true,
        },
        {
          name: "api",
          host: "api.example.com",
          path: "/hook",
          repoPath: streamed.clone,
          runScript: markerScript(markers, "api"),
          secret: SECRET,
        },
      ],
    });
    await using server = await startServer(cwd, gate.env);
    await using _cleanup = defer(() => gate.open());
    const res = await postAs(server.url, "web.example.com", "/hook", {
      secret: SECRET,
      headers: githubHeaders(),
      body: JSON.stringify(githubPush()),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(gate.lines().filter((l) => l.startsWith("end"))).toEqual([]);
    const id = UUID.exec(text)?.[0];
    expect(id).toBeDefined();

    const other = new StreamReader(await postAs(server.url, "api.example.com", "/hook", { secret: SECRET }));
    expect(lastLine(await other.done)).toBe(DONE_OK);

    gate.open();
    const record = await finished(cwd, id!);
    expect(record.result.ok).toBe(true);
    expect(record.repoPath).toBe(quick.clone);
  });
});

/** A GitHub delivery of `event`, signed as GitHub signs it, with its own delivery id. */
function github(event: string, payload: Record<string, unknown>, delivery: string) {
  const body = JSON.stringify(payload);
  const headers = {
    ...githubHeaders(),
    "x-github-event": event,
    "x-github-delivery": delivery,
    "x-hub-signature-256": `sha256=${hmacHex(SECRET, body)}`,
  };
  return { headers, body };
}

/** A GitLab delivery: the token, the event name and its UUID. */
function gitlab(event: string, payload: Record<string, unknown>, delivery: string) {
  return {
    headers: { ...gitlabHeaders(), "x-gitlab-event": event, "x-gitlab-event-uuid": delivery, "x-gitlab-token": SECRET },
    body: JSON.stringify(payload),
  };
}

/** What Gitea sends (its own headers, Gogs' and GitHub's); Forgejo adds its own beside them. */
function gitea(event: string, payload: Record<string, unknown>, delivery: string, forgejo = false) {
  const body = JSON.stringify(payload);
  const hex = hmacHex(SECRET, body);
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "user-agent": "Go-http-client/1.1",
    "x-gitea-delivery": delivery,
    "x-gitea-event": event,
    "x-gitea-event-type": event,
    "x-gitea-signature": hex,
    "x-gogs-delivery": delivery,
    "x-gogs-event": event,
    "x-gogs-event-type": event,
    "x-gogs-signature": hex,
    "x-github-delivery": delivery,
    "x-github-event": event,
    "x-github-event-type": event,
    "x-hub-signature": `sha1=${hmacHex(SECRET, body, "sha1")}`,
    "x-hub-signature-256": `sha256=${hex}`,
    ...(forgejo
      ? {
          "x-forgejo-delivery": delivery,
          "x-forgejo-event": event,
          "x-forgejo-event-type": event,
          "x-forgejo-signature": hex,
        }
      : {}),
  };
  return { headers, body };
}

/** A Bitbucket Cloud delivery, signed. */
function bitbucket(event: string, payload: Record<string, unknown>, delivery: string) {
  const body = JSON.stringify(payload);
  return {
    headers: {
      ...bitbucketHeaders(),
      "x-event-key": event,
      "x-request-uuid": delivery,
      "x-hub-signature": `sha256=${hmacHex(SECRET, body)}`,
    },
    body,
  };
}

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

/** Sends a delivery that must be answered 200 `[skipped] …` without a deploy; returns the message. */
async function expectSkipped(
  what: string,
  url: string,
  request: { headers: Record<string, string>; body: string },
): Promise<string> {
  const res = await post(url, request);
  const text = await res.text();
  expect({ what, status: res.status, skipped: text.startsWith("[skipped] "), done: text.includes("[done]") }).toEqual({
    what,
    status: 200,
    skipped: true,
    done: false,
  });
  return text.trim().slice("[skipped] ".length);
}

describe("forge events (issue: every forge event deployed, and nothing said which one)", () => {
  test("each forge's event and delivery id are recorded: the JSON record, the .log, the stream, service logs (--json) and SERVICE_EVENT / SERVICE_DELIVERY; null without them", async () => {
    await using server = await serveRepo({
      SERVICE_RUN_SCRIPT: 'echo "event=[$SERVICE_EVENT] delivery=[$SERVICE_DELIVERY]"',
    });
    const { repo } = server;
    const deliveries: [string, { headers: Record<string, string>; body?: string }, string | null, string | null][] = [
      ["GitHub push", github("push", githubPush(), id(1)), "push", id(1)],
      ["GitLab Push Hook", gitlab("Push Hook", gitlabPush(), id(2)), "Push Hook", id(2)],
      ["Gitea push", gitea("push", giteaPush(), id(3)), "push", id(3)],
      ["Forgejo push", gitea("push", giteaPush(), id(4), true), "push", id(4)],
      [
        "Gogs push (X-Gogs-Event only)",
        {
          headers: { "x-gogs-event": "push", "x-gogs-delivery": id(5), "x-service-secret": SECRET },
          body: JSON.stringify(giteaPush()),
        },
        "push",
        id(5),
      ],
      ["Bitbucket repo:push", bitbucket("repo:push", bitbucketPush(), id(6)), "repo:push", id(6)],
      ["curl, no forge headers", { headers: { "x-service-secret": SECRET } }, null, null],
    ];
    for (const [what, request, event, delivery] of deliveries) {
      const text = await (await post(server.url, request)).text();
      expect({ what, last: lastLine(text) }).toEqual({ what, last: DONE_OK });
      expect({ what, env: text.includes(`event=[${event ?? ""}] delivery=[${delivery ?? ""}]`) }).toEqual({
        what,
        env: true,
      });
      if (event)
        expect({
          what,
          start: text.split("\n")[0]!.includes(`(webhook, event ${event}, delivery ${delivery})`),
        }).toEqual({ what, start: true });
    }
    const records = deployRecords(repo.clone);
    expect(records.map((r) => [r.event, r.delivery])).toEqual(
      deliveries.map(([, , event, delivery]) => [event, delivery]),
    );
    const bitbucketLog = readFileSync(records[5].result.log.log, "utf8");
    expect(bitbucketLog.split("\n")[0]).toContain(`(webhook, event repo:push, delivery ${id(6)})`);

    const listed = JSON.parse((await runCli(["logs", "--json"], { cwd: repo.clone })).stdout);
    expect(listed.map((e: { event: string | null; delivery: string | null }) => [e.event, e.delivery])).toEqual(
      deliveries.map(([, , event, delivery]) => [event, delivery]).reverse(),
    );
    const table = (await runCli(["logs"], { cwd: repo.clone })).stdout.split("\n");
    expect(table[0]).toContain("EVENT");
    expect(table[0]).toContain("DELIVERY");
    expect(table[1]).toMatch(/webhook\s+-\s+-/);
    expect(table[2]).toContain("repo:push");
    expect(table[2]).toContain(id(6));
    expect(table[6]).toContain("Push Hook");
  });

  test("without branch or events every delivery deploys, as the spec says: a GitHub ping and a star each run a deploy", async () => {
    await using server = await serveRepo();
    const { deploys } = server;
    await expectDeployed("ping", post(server.url, github("ping", githubEvent("ping"), id(1))));
    await expectDeployed("star", post(server.url, github("star", githubEvent("star"), id(2))));
    expect(deploys()).toBe(2);
  });

  test("branch: main — a GitHub ping answers [skipped] ping: the webhook works; star, issues, pull_request, release, workflow_run and a create of a tag skip naming the event; tag and dev pushes name the ref; a push to main deploys", async () => {
    const repo = makeRepo();
    writeServiceYaml(repo.clone, { branch: "main" });
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo deployed" });
    const deploys = () => jsonLogFiles(repo.clone).length;
    expect(await expectSkipped("ping", server.url, github("ping", githubEvent("ping"), id(1)))).toBe(
      "ping: the webhook works",
    );
    const pingJson = await (
      await post(`${server.url}/?format=json`, github("ping", githubEvent("ping"), id(2)))
    ).json();
    expect(pingJson).toMatchObject({ skipped: true, event: "ping", message: "ping: the webhook works" });

    for (const event of ["star", "issues", "pull_request", "release", "workflow_run"] as const) {
      const message = await expectSkipped(event, server.url, github(event, githubEvent(event), id(3)));
      expect({ event, message }).toEqual({
        event,
        message: `${event} event; this app deploys pushes to branch main only`,
      });
    }
    const created = await expectSkipped(
      "create of a tag",
      server.url,
      github("create", githubEvent("create", "simple-tag"), id(4)),
    );
    expect(created).toBe("create event; this app deploys pushes to branch main only");
    const asJson = await (
      await post(`${server.url}/?format=json`, github("release", githubEvent("release"), id(5)))
    ).json();
    expect(asJson).toMatchObject({ skipped: true, event: "release", delivery: id(5) });
    expect(asJson.message).toContain("release");

    const tag = await expectSkipped("push of a tag", server.url, github("push", githubPush("refs/tags/v1.0.0"), id(6)));
    expect(tag).toBe("push of tag v1.0.0 (refs/tags/v1.0.0); this app deploys branch main only");
    const dev = await expectSkipped("push to dev", server.url, github("push", githubPush("refs/heads/dev"), id(7)));
    expect(dev).toBe("push to branch dev (refs/heads/dev); this app deploys branch main only");
    const gitlabTag = await expectSkipped(
      "GitLab Tag Push Hook",
      server.url,
      gitlab("Tag Push Hook", gitlabTagPush("v2"), id(8)),
    );
    expect(gitlabTag).toBe("push of tag v2 (refs/tags/v2); this app deploys branch main only");
    await expectSkipped(
      "GitLab Merge Request Hook",
      server.url,
      gitlab("Merge Request Hook", { object_kind: "merge_request", ...gitlabPush() }, id(9)),
    );
    await expectSkipped(
      "Gitea create",
      server.url,
      gitea("create", { ref: "main", ref_type: "branch", ...giteaPush() }, id(10)),
    );
    expect(deploys()).toBe(0);

    const head = repo.head();
    await expectDeployed(
      "GitHub push to main",
      post(server.url, github("push", atCommit(githubPush("refs/heads/main"), head), id(11))),
    );
    await expectDeployed(
      "GitLab Push Hook to main",
      post(server.url, gitlab("Push Hook", atCommit(gitlabPush(), head), id(12))),
    );
    await expectDeployed(
      "Bitbucket repo:push to main",
      post(server.url, bitbucket("repo:push", atCommit(bitbucketPush("main"), head), id(13))),
    );
    await expectDeployed(
      "Forgejo push to main",
      post(server.url, gitea("push", atCommit(giteaPush(), head), id(14), true)),
    );
    expect(deployRecords(repo.clone).map((r) => r.delivery)).toEqual([id(11), id(12), id(13), id(14)]);
  });

  test("events: [push] — the word push matches each forge's push event (push, Push Hook, Tag Push Hook, repo:push); other events answer skipped in text and JSON; a request without a forge event header still deploys", async () => {
    const repo = makeRepo();
    writeServiceYaml(repo.clone, { events: ["push"] });
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo deployed" });
    const deploys = () => jsonLogFiles(repo.clone).length;
    expect(await expectSkipped("ping", server.url, github("ping", githubEvent("ping"), id(1)))).toBe(
      "ping: the webhook works",
    );
    expect(await expectSkipped("star", server.url, github("star", githubEvent("star"), id(2)))).toBe(
      "star event; this app deploys on push only",
    );
    await expectSkipped("GitLab Merge Request Hook", server.url, gitlab("Merge Request Hook", gitlabPush(), id(3)));
    await expectSkipped(
      "Bitbucket pullrequest:created",
      server.url,
      bitbucket("pullrequest:created", { pullrequest: { id: 1 } }, id(4)),
    );
    const json = await (
      await post(`${server.url}/?format=json`, github("workflow_run", githubEvent("workflow_run"), id(5)))
    ).json();
    expect(json).toEqual({
      skipped: true,
      ok: true,
      event: "workflow_run",
      delivery: id(5),
      message: "workflow_run event; this app deploys on push only",
    });
    expect(deploys()).toBe(0);

    await expectDeployed("GitHub push", post(server.url, github("push", githubPush(), id(6))));
    // No branch is set: a tag push is a push like any other.
    await expectDeployed("GitHub push of a tag", post(server.url, github("push", githubPush("refs/tags/v1"), id(7))));
    await expectDeployed("GitLab Push Hook", post(server.url, gitlab("Push Hook", gitlabPush(), id(8))));
    await expectDeployed("GitLab Tag Push Hook", post(server.url, gitlab("Tag Push Hook", gitlabTagPush(), id(9))));
    await expectDeployed("Gitea push", post(server.url, gitea("push", giteaPush(), id(10))));
    await expectDeployed("Bitbucket repo:push", post(server.url, bitbucket("repo:push", bitbucketPush(), id(11))));
    await expectDeployed("curl", post(server.url, { secret: SECRET }));
    expect(deploys()).toBe(7);
  });

  test("SERVICE_EVENTS (comma-separated) takes the forge's own names: Push Hook deploys GitLab pushes only, release deploys GitHub releases", async () => {
    await using server = await serveRepo({ SERVICE_EVENTS: "Push Hook, release" });
    const { deploys } = server;
    await expectDeployed("GitLab Push Hook", post(server.url, gitlab("Push Hook", gitlabPush(), id(1))));
    await expectDeployed("GitHub release", post(server.url, github("release", githubEvent("release"), id(2))));
    expect(await expectSkipped("GitHub push", server.url, github("push", githubPush(), id(3)))).toBe(
      "push event; this app deploys on Push Hook, release only",
    );
    await expectSkipped("GitLab Tag Push Hook", server.url, gitlab("Tag Push Hook", gitlabTagPush(), id(4)));
    expect(deploys()).toBe(2);
  });

  test("events per app: an app with events: [push] skips a star; an app without events deploys it", async () => {
    const web = makeRepo();
    const api = makeRepo();
    const cwd = tempDir("service-apps-");
    writeServiceYaml(cwd, {
      apps: [
        {
          name: "web",
          host: "web.example.com",
          path: "/hook",
          repoPath: web.clone,
          runScript: "echo web",
          secret: SECRET,
          events: ["push"],
        },
        {
          name: "api",
          host: "api.example.com",
          path: "/hook",
          repoPath: api.clone,
          runScript: "echo api",
          secret: SECRET,
        },
      ],
    });
    await using server = await startServer(cwd);
    const star = github("star", githubEvent("star"), id(1));
    const skipped = await postAs(server.url, "web.example.com", "/hook", star);
    expect(await skipped.text()).toBe("[skipped] star event; this app deploys on push only\n");
    await expectDeployed("api star", postAs(server.url, "api.example.com", "/hook", star));
    await expectDeployed(
      "web push",
      postAs(server.url, "web.example.com", "/hook", github("push", githubPush(), id(2))),
    );
    expect(deployRecords(cwd).map((r) => [r.app, r.event])).toEqual([
      ["api", "star"],
      ["web", "push"],
    ]);
  });

  test("the events key: a list or a comma-separated string of names; an empty list or a non-name is an error naming the key", () => {
    expect(normalizeUserConfig({ events: ["push", "Push Hook"] }, "service.yaml").events).toEqual([
      "push",
      "Push Hook",
    ]);
    expect(normalizeUserConfig({ events: "push, repo:push" }, "service.yaml").events).toEqual(["push", "repo:push"]);
    expect(envConfig({ SERVICE_EVENTS: "push,Tag Push Hook" }).events).toEqual(["push", "Tag Push Hook"]);
    for (const bad of [[], "", " , ", [1], [["push"]], { push: true }, true]) {
      expect(() => normalizeUserConfig({ events: bad }, "service.yaml")).toThrow(ConfigError);
      expect(() => normalizeUserConfig({ events: bad }, "service.yaml")).toThrow(
        'service.yaml: key "events": expected',
      );
    }
    expect(() => envConfig({ SERVICE_EVENTS: " , " })).toThrow("SERVICE_EVENTS");
  });
});

describe("forge event headers from a hostile client (authenticated, but never trusted with the logs or the terminal)", () => {
  test("an event name of 5000 characters and a delivery id with a tab and non-ASCII bytes are recorded bounded and printable; the deploy runs", async () => {
    await using server = await serveRepo({ SERVICE_RUN_SCRIPT: 'echo "delivery=[$SERVICE_DELIVERY]"' });
    const { repo } = server;
    const head = Buffer.concat([
      Buffer.from(
        [
          "POST / HTTP/1.1",
          `Host: localhost:${server.port}`,
          `X-Service-Secret: ${SECRET}`,
          `X-GitHub-Event: ${"p".repeat(5000)}`,
          "X-GitHub-Delivery: a\t",
        ].join("\r\n"),
      ),
      // Bun refuses control bytes in a header itself (400); obs-text bytes reach the service.
      Buffer.from([0xff, 0xfe]),
      Buffer.from("[31mred\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
    ]);
    const raw = await exchange(server.port, [head], { timeoutMs: 20_000, until: (text) => text.includes("[done]") });
    expect(raw.status).toBe(200);
    expect(raw.body.toString()).toContain(DONE_OK);
    const [record] = await waitFor(() => {
      const done = deployRecords(repo.clone).filter((r) => r.status === "done");
      return done.length === 1 ? done : undefined;
    }, "the deploy's record");
    expect(record.event).toBe(`${"p".repeat(200)}…`);
    expect(record.delivery).toMatch(/^a\?+\[31mred$/);
    const log = readFileSync(record.result.log.log, "utf8");
    expect(log).not.toMatch(/[^\x20-\x7e\n…]/);
    expect(log).toContain(`delivery=[${record.delivery}]`);
  });
});
