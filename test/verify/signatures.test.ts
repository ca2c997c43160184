/**
 * Signed commits only (docs/security.md "Signed commits"), with real keys: ssh-keygen makes two, the
 * allowed-signers file trusts one; commits signed by each, unsigned, or changed after signing. Tags: tags.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { DeploySettings } from "../../src/steps/context.ts";
import { readAllowedSigners, verifyTag } from "../../src/verify/signatures.ts";
import type { RollbackTarget } from "../../src/types.ts";
import { baseEnv, git, makeRepo, type Repo, tempDir } from "../_support/helpers.ts";
import { deploySigned, makeKeys, noSshKeygen, pushEdited, pushSigned, pushTag } from "../_support/signing.ts";

const keys = noSshKeygen ? (undefined as never) : makeKeys();

/** A deploy through the pipeline, alice's key allowed unless `settings` say otherwise. */
const deploy = (repo: Repo, settings: Partial<DeploySettings> = {}, target?: RollbackTarget) =>
  deploySigned(repo, { allowedSigners: keys.allowed, ...settings }, target);

const short = (commit: string) => commit.slice(0, 12);

describe.skipIf(noSshKeygen)('signed commits only (docs/security.md "Signed commits")', () => {
  test("a commit signed by an allowed key deploys: [verify] <sha> signed by <principal>, in the stream and the record", async () => {
    const repo = makeRepo();
    const signed = pushSigned(repo, keys.alice);
    const { result, lines, ran, record } = await deploy(repo);
    expect(lines).toContain(`[verify] ${short(signed)} signed by alice@example.com`);
    expect(result.ok).toBe(true);
    expect(ran).toBe(true);
    expect(record.result.verify).toEqual({ ok: true, commit: signed, signer: "alice@example.com", reason: null });
  });

  for (const [kind, push, reason] of [
    ["an unsigned commit", (repo: Repo) => pushSigned(repo, null), "it is not signed"],
    [
      "a commit signed by a key not in the file",
      (repo: Repo) => pushSigned(repo, keys.mallory),
      "it is signed by a key the allowed signers do not accept",
    ],
    [
      "a commit changed after it was signed",
      (repo: Repo) => pushEdited(repo, pushSigned(repo, keys.alice), (text) => text.replace(/change$/, "changed")),
      "its signature does not verify",
    ],
    [
      "a commit with an OpenPGP signature",
      (repo: Repo) =>
        pushEdited(repo, pushSigned(repo, null), (text) =>
          text.replace(
            /\ncommitter (.*)\n/,
            "\ncommitter $1\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n",
          ),
        ),
      "it is signed with an OpenPGP key: only SSH signatures are accepted",
    ],
  ] as const) {
    test(`${kind} is refused: the clone goes back, nothing runs, [done] ok=false exitCode=null, the record says why`, async () => {
      const repo = makeRepo();
      const before = repo.head();
      const pushed = push(repo);
      const { result, lines, ran, record } = await deploy(repo);
      expect(ran).toBe(false);
      expect(repo.head()).toBe(before);
      expect(result.ok).toBe(false);
      expect(result.run.exitCode).toBeNull();
      expect(result.error).toStartWith(`commit ${short(pushed)} refused: ${reason}`);
      expect(lines.join("\n")).toContain(`[verify] commit ${short(pushed)} refused: ${reason}`);
      expect(lines).toContain(`[verify] git reset --hard ${short(before)}: back to the commit from before`);
      expect(record.result.verify).toMatchObject({ ok: false, commit: pushed, signer: null });
      expect(record.result.verify.reason).toStartWith(reason);
    });
  }

  test('a key whose allowed-signers line has namespaces="file" is refused naming that option, not as a commit changed after signing', async () => {
    const repo = makeRepo();
    const file = join(tempDir(), "allowed_signers");
    const [principal, ...key] = keys.line("alice").split(" ");
    writeFileSync(file, `# scoped to files\n${principal} namespaces="file" ${key.join(" ")}\n`);
    const pushed = pushSigned(repo, keys.alice);
    const { result, ran, record } = await deploy(repo, { allowedSigners: file });
    expect(ran).toBe(false);
    const reason = `it is signed by a key whose line in the allowedSigners file (${file}, line 2) has namespaces="file", which leaves out "git": add git to it`;
    expect(result.error).toBe(`commit ${short(pushed)} refused: ${reason}`);
    expect(record.result.verify.reason).toBe(reason);
    pushTag(repo, "v1", keys.alice);
    git(repo.clone, "fetch", "--quiet", "--tags");
    expect((await verifyTag(repo.clone, "v1", file, baseEnv())).reason).toBe(`tag v1: ${reason}`);
  });

  test("the file is read at each deploy: a key added or removed applies at the next one, without a restart", async () => {
    const repo = makeRepo();
    const file = join(tempDir(), "allowed_signers");
    writeFileSync(file, `${keys.line("alice")}\n`);
    pushSigned(repo, keys.mallory);
    expect((await deploy(repo, { allowedSigners: file })).result.ok).toBe(false);
    // Rotated: mallory's key in, alice's out.
    writeFileSync(file, `${keys.line("mallory")}\n`);
    const { result, lines } = await deploy(repo, { allowedSigners: file });
    expect(result.ok).toBe(true);
    expect(lines.join("\n")).toContain("signed by mallory@example.com");
    pushSigned(repo, keys.alice);
    expect((await deploy(repo, { allowedSigners: file })).result.ok).toBe(false);
  });

  test("a missing, unreadable or empty file refuses every deploy, naming the file: it never falls open", async () => {
    const repo = makeRepo();
    pushSigned(repo, keys.alice);
    const dir = tempDir();
    const empty = join(dir, "empty");
    writeFileSync(empty, "# nobody yet\n");
    for (const [file, why] of [
      [join(dir, "missing"), "cannot be read (ENOENT)"],
      [dir, "cannot be read (not a regular file (a directory))"],
      [empty, "holds no key"],
    ]) {
      const { result, ran } = await deploy(repo, { allowedSigners: file });
      expect(ran).toBe(false);
      expect(result.error).toContain(`the allowedSigners file ${file} ${why}`);
    }
  });

  test("a file inside the repository refuses every deploy: the commit checked would choose its own signers", async () => {
    const repo = makeRepo();
    // The pushed commit trusts mallory in a file of its own; the service is pointed at that path.
    pushSigned(repo, keys.mallory, { allowed_signers: `${keys.line("mallory")}\n` });
    const file = join(repo.clone, "allowed_signers");
    const { result, ran } = await deploy(repo, { allowedSigners: file });
    expect(ran).toBe(false);
    expect(result.error).toContain(
      `the allowedSigners file ${file} is inside the repository ${repo.clone}: keep it outside`,
    );
  });

  test("the repository's own git config cannot choose the signers or the program", async () => {
    const repo = makeRepo();
    const lenient = join(tempDir(), "lenient");
    writeFileSync(lenient, `${keys.line("mallory")}\n`);
    git(repo.clone, "config", "gpg.ssh.allowedSignersFile", lenient);
    git(repo.clone, "config", "gpg.ssh.program", "true");
    git(repo.clone, "config", "gpg.format", "openpgp");
    pushSigned(repo, keys.mallory);
    const { result, ran } = await deploy(repo);
    expect(ran).toBe(false);
    expect(result.error).toContain("a key the allowed signers do not accept");
  });

  test("a service rollback to an unsigned commit is refused; to a signed one it runs", async () => {
    const repo = makeRepo();
    const unsigned = repo.head();
    const signed = pushSigned(repo, keys.alice);
    const newer = pushSigned(repo, keys.alice);
    expect((await deploy(repo)).result.ok).toBe(true);
    const refused = await deploy(repo, {}, { commit: unsigned, deployId: null });
    expect(refused.ran).toBe(false);
    expect(refused.result.error).toBe(`commit ${short(unsigned)} refused: it is not signed`);
    expect(repo.head()).toBe(newer);
    const back = await deploy(repo, {}, { commit: signed, deployId: null });
    expect(back.result.ok).toBe(true);
    expect(repo.head()).toBe(signed);
  });

  test("a failed deploy's rollback does not run an unsigned previous commit again", async () => {
    const repo = makeRepo();
    const unsigned = repo.head();
    pushSigned(repo, keys.alice);
    const { result, lines } = await deploy(repo, { runScript: "false", rollbackOnFailure: true });
    expect(repo.head()).toBe(unsigned);
    expect(result.ok).toBe(false);
    expect(result.rollback?.error).toBe(`commit ${short(unsigned)} refused: it is not signed`);
    expect(lines).not.toContain("[rollback] running the run script again at the previous commit");
  });

  test("without allowedSigners nothing is checked and the record has no verify", async () => {
    const repo = makeRepo();
    pushSigned(repo, null);
    const { result, lines } = await deploy(repo, { allowedSigners: undefined });
    expect(result.ok).toBe(true);
    expect(result.verify).toBeUndefined();
    expect(lines.some((line) => line.startsWith("[verify]"))).toBe(false);
  });
});

describe.skipIf(noSshKeygen)(
  'the allowed-signers file, as service check validates it (docs/security.md "Signed commits")',
  () => {
    test("a malformed line is named; a key without the git namespace is warned about", () => {
      const dir = tempDir();
      const bad = join(dir, "bad");
      writeFileSync(bad, `${keys.line("alice")}\nbob@example.com not-a-key\n`);
      expect(readAllowedSigners(bad, "/nonexistent-repo")).toEqual({
        problem: `the allowedSigners file ${bad}, line 2: expected "principals [options] key-type key" (as ssh-keygen -Y verify reads it)`,
      });
      const scoped = join(dir, "scoped");
      const [principal, ...key] = keys.line("alice").split(" ");
      writeFileSync(
        scoped,
        `${principal} namespaces="file" ${key.join(" ")}\n${principal} namespaces="git,file" ${key.join(" ")}\n`,
      );
      const read = readAllowedSigners(scoped, "/nonexistent-repo");
      expect(read).toMatchObject({ keys: 2 });
      expect("warnings" in read && read.warnings).toEqual([
        `the allowedSigners file ${scoped}, line 1: namespaces="file" leaves out "git": that key verifies no commit`,
      ]);
    });
  },
);
