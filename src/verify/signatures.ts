/**
 * Signed commits only (docs/security.md "Signed commits"): with `allowedSigners`, the commit a deploy is about to
 * run must carry a good SSH signature by a key of that file. git checks it with the file named on its command
 * line: the repository's own configuration never chooses the signers, the program, or the signature format.
 */
import { isInside, readUserFile } from "../system/files.ts";
import { gitQuery, short } from "../system/git.ts";
import type { VerifyResult } from "../types.ts";

/** The largest allowed-signers file read (it is read at every deploy). */
const MAX_SIGNERS_BYTES = 1024 * 1024;

/** A key type of OpenSSH (`ssh-ed25519`, `ecdsa-sha2-nistp256`, `sk-ssh-ed25519@openssh.com`, certificates…). */
const KEY_TYPE = /^(ssh|ecdsa|sk|rsa)-[A-Za-z0-9@.-]+$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The words of a line, a double-quoted option value (`namespaces="git,file"`) kept whole. */
const words = (line: string) => line.match(/(?:[^\s"]+|"[^"]*")+/g) ?? [];

export interface AllowedSigners {
  /** How many keys the file holds. */
  keys: number;
  /** What works but will not do what the user expects (a key whose namespaces leave out `git`). */
  warnings: string[];
  /** The lines whose `namespaces` leave out `git`, by line number: what the key signed there is refused. */
  outOfGit: Map<number, string>;
}

/**
 * The allowed-signers file checked (`ssh-keygen -Y verify`'s format: principals, options, key type, key), or why
 * it cannot be used: unreadable, a malformed line, no key at all. Any problem refuses every deploy.
 */
export function readAllowedSigners(file: string, repoPath: string): AllowedSigners | { problem: string } {
  // A file the pull can change lets the commit being checked choose who may sign it.
  if (isInside(file, repoPath))
    return { problem: `the allowedSigners file ${file} is inside the repository ${repoPath}: keep it outside` };
  let text: string;
  try {
    text = readUserFile(file, MAX_SIGNERS_BYTES);
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return { problem: `the allowedSigners file ${file} cannot be read (${why})` };
  }
  const warnings: string[] = [];
  const outOfGit = new Map<number, string>();
  let keys = 0;
  for (const [index, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const [, second = "", third = "", fourth = ""] = words(line);
    const withOptions = !KEY_TYPE.test(second);
    const [type, key] = withOptions ? [third, fourth] : [second, third];
    if (!KEY_TYPE.test(type) || !BASE64.test(key))
      return {
        problem: `the allowedSigners file ${file}, line ${index + 1}: expected "principals [options] key-type key" (as ssh-keygen -Y verify reads it)`,
      };
    const namespaces = withOptions ? /(?:^|,)namespaces="([^"]*)"/.exec(second)?.[1] : undefined;
    if (namespaces !== undefined && !namespaces.split(",").includes("git")) {
      outOfGit.set(index + 1, namespaces);
      warnings.push(
        `the allowedSigners file ${file}, line ${index + 1}: namespaces="${namespaces}" leaves out "git": that key verifies no commit`,
      );
    }
    keys++;
  }
  if (keys === 0) return { problem: `the allowedSigners file ${file} holds no key` };
  return { keys, warnings, outOfGit };
}

/**
 * The reason for a key its own line's `namespaces` exclude, from ssh-keygen's words (`<file>:<line>: key is not
 * permitted for use in signature namespace "git"`); git reports such a signature as a bad one, as if the commit had
 * been changed. Undefined for any other failure.
 */
function excludedKey(stderr: string, file: string, signers: AllowedSigners): string | undefined {
  const line = /:(\d+): key is not permitted for use in signature namespace/.exec(stderr)?.[1];
  if (!line) return undefined;
  const namespaces = signers.outOfGit.get(Number(line));
  const option = namespaces === undefined ? "options" : `namespaces="${namespaces}"`;
  return `it is signed by a key whose line in the allowedSigners file (${file}, line ${line}) has ${option}, which leaves out "git": add git to it`;
}

/** git's options for a check: the signers and the programs from here, never from the repository's config. */
function checkedGit(allowedSigners: string): string[] {
  return [
    "-c",
    "gpg.format=ssh",
    "-c",
    `gpg.ssh.allowedSignersFile=${allowedSigners}`,
    "-c",
    "gpg.ssh.program=ssh-keygen",
    // Only SSH signatures are accepted (checked below); these make sure no other kind could ever pass.
    "-c",
    "gpg.openpgp.program=false",
    "-c",
    "gpg.x509.program=false",
  ];
}

/** The environment of a check: no configuration passed to git through variables (they would override -c). */
function checkEnv(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = { ...env, LC_ALL: "C", LANGUAGE: "" };
  for (const name of Object.keys(out)) if (/^GIT_CONFIG/.test(name)) delete out[name];
  return out;
}

/** The kind of signature a commit's or tag's text carries. */
function signatureKind(text: string): "ssh" | "openpgp" | "x509" | "none" {
  if (text.includes("-----BEGIN SSH SIGNATURE-----")) return "ssh";
  if (text.includes("-----BEGIN PGP SIGNATURE-----")) return "openpgp";
  if (text.includes("-----BEGIN SIGNED MESSAGE-----")) return "x509";
  return "none";
}

/** Why a signature of the kind found is not one this check accepts; undefined for an SSH signature. */
function kindProblem(kind: ReturnType<typeof signatureKind>): string | undefined {
  if (kind === "none") return "it is not signed";
  if (kind !== "ssh")
    return `it is signed with ${kind === "openpgp" ? "an OpenPGP" : "an X.509"} key: only SSH signatures are accepted`;
  return undefined;
}

/** git's verdict (`%G?`) said as a reason. */
function reasonOf(status: string | undefined, key: string | undefined): string {
  const by = key ? ` (${key})` : "";
  switch (status) {
    case "N":
      return "it is not signed";
    case "U":
      return `it is signed by a key the allowed signers do not accept${by}`;
    case "B":
      return `its signature does not verify: the commit was changed after it was signed${by}`;
    case "X":
      return `its signature has expired${by}`;
    case "Y":
      return `it is signed by an expired key${by}`;
    case "R":
      return `it is signed by a revoked key${by}`;
    default:
      return `its signature cannot be checked${by}`;
  }
}

/** The commit-signature check: a good SSH signature by a key of `allowedSigners` (an absolute path). */
export async function verifyCommit(
  repoPath: string,
  commit: string,
  allowedSigners: string,
  env: Record<string, string | undefined>,
): Promise<VerifyResult> {
  const refuse = (reason: string): VerifyResult => ({ ok: false, commit, signer: null, reason });
  const signers = readAllowedSigners(allowedSigners, repoPath);
  if ("problem" in signers) return refuse(signers.problem);
  const checked = checkEnv(env);
  const object = await gitQuery(repoPath, ["cat-file", "commit", commit], checked);
  if (object.code !== 0) return refuse(`${commit} is not a commit of ${repoPath}`);
  // Only the header: a commit message may quote a signature.
  const header = object.stdout.slice(0, `${object.stdout}\n\n`.indexOf("\n\n"));
  const wrongKind = kindProblem(signatureKind(header));
  if (wrongKind) return refuse(wrongKind);
  const git = checkedGit(allowedSigners);
  const [shown, verified] = await Promise.all([
    gitQuery(repoPath, [...git, "log", "-1", "--no-show-signature", "--format=%G?%n%GS%n%GK", commit], checked),
    gitQuery(repoPath, [...git, "verify-commit", commit], checked),
  ]);
  const [status, signer, key] = shown.stdout.split("\n");
  if (verified.code === 0 && status === "G" && signer) return { ok: true, commit, signer, reason: null };
  if (status === "G") return refuse("git verify-commit refused its signature");
  return refuse(excludedKey(verified.stderr, allowedSigners, signers) ?? reasonOf(status, key));
}

/**
 * The tag-signature check of a tag ref (`v1.2.0` or `refs/tags/v1.2.0`): an annotated tag with a good SSH
 * signature by a key of `allowedSigners`. `commit` is the commit it points at, which a deploy of the tag
 * checks as well (verifyCommit).
 */
export async function verifyTag(
  repoPath: string,
  tag: string,
  allowedSigners: string,
  env: Record<string, string | undefined>,
): Promise<VerifyResult> {
  const ref = tag.startsWith("refs/tags/") ? tag : `refs/tags/${tag}`;
  const checked = checkEnv(env);
  const target = await gitQuery(repoPath, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], checked);
  const commit = target.code === 0 && target.stdout ? target.stdout : null;
  const refuse = (reason: string): VerifyResult => ({
    ok: false,
    commit,
    signer: null,
    reason: `tag ${tag}: ${reason}`,
  });
  const signers = readAllowedSigners(allowedSigners, repoPath);
  if ("problem" in signers) return refuse(signers.problem);
  if (!commit) return refuse(`there is no such tag in ${repoPath}`);
  const object = await gitQuery(repoPath, ["cat-file", "tag", ref], checked);
  if (object.code !== 0) return refuse("it is a lightweight tag: only an annotated tag carries a signature");
  const wrongKind = kindProblem(signatureKind(object.stdout));
  if (wrongKind) return refuse(wrongKind);
  const verified = await gitQuery(repoPath, [...checkedGit(allowedSigners), "verify-tag", ref], checked);
  // LC_ALL=C: ssh-keygen's own words, `Good "git" signature for <principal> with <type> key <fingerprint>`.
  const signer = /Good "git" signature for (.+?) with /.exec(verified.stderr)?.[1];
  if (verified.code === 0 && signer) return { ok: true, commit, signer, reason: null };
  const excluded = excludedKey(verified.stderr, allowedSigners, signers);
  if (excluded) return refuse(excluded);
  if (/No principal matched/i.test(verified.stderr))
    return refuse("it is signed by a key the allowed signers do not accept");
  return refuse(`its signature does not verify (${verified.stderr.split("\n").pop() || "git verify-tag failed"})`);
}

/** How a refused commit is said in the deploy's error, its commit status and its notifications. */
export const refusal = (result: VerifyResult) => `commit ${short(result.commit)} refused: ${result.reason}`;
