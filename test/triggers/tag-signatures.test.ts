/**
 * A tag push under `allowedSigners` (docs/forges.md "Tag pushes"): the tag's own signature is verified as well
 * as its commit's, as for `service deploy --ref <tag>`; a lightweight tag carries none and is refused.
 */
import { describe, expect, test } from "bun:test";
import { makeRepo, post, SECRET, startServer } from "../_support/helpers.ts";
import { short } from "../../src/system/git.ts";
import { makeKeys, noSshKeygen, pushSigned, pushTag } from "../_support/signing.ts";
import { githubPush } from "../_support/webhook-fixtures.ts";

const pushOf = (url: string, tag: string) =>
  post(url, {
    headers: { "x-service-secret": SECRET, "x-github-event": "push", "content-type": "application/json" },
    body: JSON.stringify(githubPush(`refs/tags/${tag}`)),
  }).then((response) => response.text());

describe.skipIf(noSshKeygen)("tags under allowedSigners", () => {
  test("a pushed signed tag deploys with both signatures checked; a lightweight tag is refused and nothing runs", async () => {
    const keys = makeKeys();
    const repo = makeRepo();
    const signed = pushSigned(repo, keys.alice, {}, "release 1.0");
    pushTag(repo, "v1.0.0", keys.alice);
    const next = pushSigned(repo, keys.alice, {}, "release 1.1");
    pushTag(repo, "v1.1.0", "light");
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "echo ran the script",
      SERVICE_TAGS: "v*",
      SERVICE_ALLOWED_SIGNERS: keys.allowed,
    });

    const good = await pushOf(server.url, "v1.0.0");
    expect(good).toContain("[verify] tag v1.0.0 signed by alice@example.com");
    expect(good).toContain(`[verify] ${short(signed)} signed by alice@example.com`);
    expect(good).toContain("[done] ok=true");
    expect(repo.head()).toBe(signed);

    const light = await pushOf(server.url, "v1.1.0");
    expect(light).toContain(
      `[verify] commit ${short(next)} refused: tag v1.1.0: it is a lightweight tag: only an annotated tag carries a signature; nothing runs`,
    );
    expect(light).not.toContain("ran the script");
    expect(light).toContain("[done] ok=false");
  });
});
