/**
 * Signed tags (docs/security.md "Tags"), with real keys: the tag check alone, and a deploy of a tag, which checks
 * the tag and then the commit it points at.
 */
import { describe, expect, test } from "bun:test";
import type { DeploySettings } from "../../src/steps/context.ts";
import { verifyTag } from "../../src/verify/signatures.ts";
import type { RollbackTarget } from "../../src/types.ts";
import { baseEnv, git, makeRepo, type Repo } from "../_support/helpers.ts";
import { deploySigned, makeKeys, noSshKeygen, pushSigned, pushTag } from "../_support/signing.ts";

const keys = noSshKeygen ? (undefined as never) : makeKeys();

/** A deploy through the pipeline, alice's key allowed. */
const deploy = (repo: Repo, settings: Partial<DeploySettings> = {}, target?: RollbackTarget) =>
  deploySigned(repo, { allowedSigners: keys.allowed, ...settings }, target);

const short = (commit: string) => commit.slice(0, 12);

describe.skipIf(noSshKeygen)('the tag check (docs/security.md "Tags")', () => {
  test("verifyTag: an annotated tag signed by an allowed key passes; unknown key, unsigned, lightweight are refused", async () => {
    const repo = makeRepo();
    const commit = pushSigned(repo, keys.alice);
    pushTag(repo, "v1", keys.alice);
    pushTag(repo, "v1-mallory", keys.mallory);
    pushTag(repo, "v1-unsigned", null);
    pushTag(repo, "v1-light", "light");
    git(repo.clone, "fetch", "--quiet", "--tags");
    const check = (tag: string) => verifyTag(repo.clone, tag, keys.allowed, baseEnv());
    expect(await check("v1")).toEqual({ ok: true, commit, signer: "alice@example.com", reason: null });
    expect(await check("refs/tags/v1")).toMatchObject({ ok: true, signer: "alice@example.com" });
    expect((await check("v1-mallory")).reason).toBe(
      "tag v1-mallory: it is signed by a key the allowed signers do not accept",
    );
    expect((await check("v1-unsigned")).reason).toBe("tag v1-unsigned: it is not signed");
    expect((await check("v1-light")).reason).toStartWith("tag v1-light: it is a lightweight tag");
    expect((await check("v9")).reason).toStartWith("tag v9: there is no such tag");
    expect((await verifyTag(repo.clone, "v1", `${keys.allowed}.gone`, baseEnv())).reason).toStartWith(
      `tag v1: the allowedSigners file ${keys.allowed}.gone cannot be read`,
    );
  });
});

describe.skipIf(noSshKeygen)('a deploy of a tag checks the tag and its commit (docs/security.md "Tags")', () => {
  /** A signed commit tagged `name` (signed with `key`, or lightweight), fetched by the clone; the target naming it. */
  function tagged(repo: Repo, name: string, key: string | null | "light") {
    const commit = pushSigned(repo, keys.alice);
    pushTag(repo, name, key);
    git(repo.clone, "fetch", "--quiet", "--tags");
    return { commit, target: { commit, deployId: null, ref: name, tag: name } };
  }

  test("a signed tag on a signed commit deploys: [verify] tag <name> signed by, then the commit; the record's verify names the tag", async () => {
    const repo = makeRepo();
    const { commit, target } = tagged(repo, "v1", keys.alice);
    const { result, lines, ran, record } = await deploy(repo, {}, target);
    expect(result.ok).toBe(true);
    expect(ran).toBe(true);
    expect(lines).toContain("[verify] tag v1 signed by alice@example.com");
    expect(lines).toContain(`[verify] ${short(commit)} signed by alice@example.com`);
    expect(record.result.verify).toEqual({
      ok: true,
      commit,
      signer: "alice@example.com",
      reason: null,
      tag: { name: "v1", signer: "alice@example.com" },
    });
  });

  for (const [kind, key, reason] of [
    ["a lightweight tag", "light", "tag v1: it is a lightweight tag: only an annotated tag carries a signature"],
    ["an unsigned annotated tag", null, "tag v1: it is not signed"],
    [
      "a tag signed by a key not in the file",
      "mallory",
      "tag v1: it is signed by a key the allowed signers do not accept",
    ],
  ] as const) {
    test(`${kind} is refused though its commit is signed: the clone goes back, nothing runs`, async () => {
      const repo = makeRepo();
      const before = repo.head();
      const { commit, target } = tagged(repo, "v1", key === "mallory" ? keys.mallory : key);
      const { result, lines, ran, record } = await deploy(repo, {}, target);
      expect(ran).toBe(false);
      expect(repo.head()).toBe(before);
      expect(result.error).toBe(`commit ${short(commit)} refused: ${reason}`);
      expect(lines).toContain(`[verify] commit ${short(commit)} refused: ${reason}; nothing runs`);
      expect(record.result.verify).toEqual({
        ok: false,
        commit,
        signer: null,
        reason,
        tag: { name: "v1", signer: null },
      });
    });
  }

  test("a tag the remote no longer has cannot be fetched: refused, naming the fetch, nothing runs", async () => {
    const repo = makeRepo();
    const commit = pushSigned(repo, keys.alice);
    git(repo.clone, "fetch", "--quiet");
    const { result, ran } = await deploy(repo, {}, { commit, deployId: null, ref: "v9", tag: "v9" });
    expect(ran).toBe(false);
    expect(result.error).toStartWith(`commit ${short(commit)} refused: tag v9: git fetch origin refs/tags/v9 failed (`);
  });

  test("a signed tag on an unsigned commit is refused for the commit", async () => {
    const repo = makeRepo();
    const commit = pushSigned(repo, null);
    pushTag(repo, "v1", keys.alice);
    git(repo.clone, "fetch", "--quiet", "--tags");
    const { result, ran, record } = await deploy(repo, {}, { commit, deployId: null, ref: "v1", tag: "v1" });
    expect(ran).toBe(false);
    expect(result.error).toBe(`commit ${short(commit)} refused: it is not signed`);
    expect(record.result.verify.tag).toEqual({ name: "v1", signer: "alice@example.com" });
  });
});
