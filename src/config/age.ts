/**
 * Age-encrypted env files (docs/security.md "Secrets"): how one is recognised, and the identity file that opens
 * it (`ageIdentityFile`, `age-keygen`'s format), read and checked. The decryption itself is config/age-decrypt.ts,
 * loaded only when such a file is met: a server without one never loads the age implementation.
 */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { readUserFile } from "../system/files.ts";

/** The first line of a binary age file. */
const BINARY_HEADER = "age-encryption.org/v1\n";
/** The first line of an armored (`age -a`) one. */
export const ARMOR_HEADER = "-----BEGIN AGE ENCRYPTED FILE-----";

/** The largest identity file read: a few keys take a few hundred bytes. */
const MAX_IDENTITY_BYTES = 64 * 1024;

/** Whether a file's content (bytes, or text as read) is an age-encrypted file, binary or armored. */
export function isAgeEncrypted(content: Uint8Array | string): boolean {
  const head =
    typeof content === "string" ? content.slice(0, 64) : Buffer.from(content.subarray(0, 64)).toString("latin1");
  return head.startsWith(BINARY_HEADER) || head.trimStart().startsWith(ARMOR_HEADER);
}

/**
 * Why the identity file cannot be used, said before it is read: it is missing, or readable by others (this key
 * opens every file encrypted to it, so it is refused, where a plain envFile is only warned about).
 */
export function identityFileProblem(file: string): string | undefined {
  let mode: number;
  try {
    mode = statSync(file).mode & 0o777;
  } catch (error) {
    return `the ageIdentityFile ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  if ((mode & 0o044) !== 0)
    return `the ageIdentityFile ${file} can be read by other users (mode ${mode.toString(8).padStart(4, "0")}): it opens every file encrypted to it; run chmod 600 ${file}`;
  return undefined;
}

/**
 * The problem of an app's `ageIdentityFile` (named by `label`), when it sets one. `onlyLoose`: only a file others
 * can read (which stops the start); a missing one refuses the deploys that need it.
 */
export function ageIdentityProblem(
  settings: { ageIdentityFile?: string },
  cwd: string,
  label = "",
  onlyLoose = false,
): string | undefined {
  if (!settings.ageIdentityFile) return undefined;
  const file = resolve(cwd, settings.ageIdentityFile);
  const problem = identityFileProblem(file);
  if (!problem || (onlyLoose && !existsSync(file))) return undefined;
  return `${label}${problem}`;
}

/**
 * The identities of an identity file: one `AGE-SECRET-KEY-1…` a line, blank lines and `#` comments skipped (what
 * `age-keygen -o` writes). Any other line (a plugin's or an SSH key) is a problem naming its line, never its text.
 */
export function readIdentities(file: string): { identities: string[] } | { problem: string } {
  const unusable = identityFileProblem(file);
  if (unusable) return { problem: unusable };
  let text: string;
  try {
    text = readUserFile(file, MAX_IDENTITY_BYTES);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { problem: `the ageIdentityFile ${file} cannot be read (${code ?? (error as Error).message})` };
  }
  const identities: string[] = [];
  for (const [index, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    if (!/^AGE-SECRET-KEY-(PQ-)?1[0-9A-Z]+$/.test(line))
      return {
        problem: `the ageIdentityFile ${file} line ${index + 1} is not an age identity (AGE-SECRET-KEY-1…, as age-keygen writes; plugin and SSH identities are not supported)`,
      };
    identities.push(line);
  }
  if (identities.length === 0) return { problem: `the ageIdentityFile ${file} holds no identity (AGE-SECRET-KEY-1…)` };
  return { identities };
}
