/**
 * An age-encrypted env file opened in memory (docs/security.md "Secrets"), through `age-encryption`, the
 * implementation of age's author. Loaded only when a deploy meets such a file (config/age.ts tells): the text is
 * never written anywhere.
 */
import { armor, Decrypter } from "age-encryption";
import { ARMOR_HEADER } from "./age.ts";

/** The header's stanzas end at the line that starts with `---` (its MAC). */
const HEADER_END = Buffer.from("\n---", "latin1");

/**
 * The plain text of `content` (an age file, binary or armored) opened with one of `identities`, or why it cannot
 * be: a passphrase file, none of the identities among its recipients, a damaged or truncated file. `file` and
 * `identityFile` name them in the problem; no byte of the content is ever in it.
 */
export async function decryptAge(
  content: Uint8Array,
  identities: string[],
  file: string,
  identityFile: string,
): Promise<{ text: string } | { problem: string }> {
  const cannot = (why: string) => ({ problem: `${file} (envFile) cannot be decrypted: ${why}` });
  let bytes: Uint8Array;
  const text = Buffer.from(content).toString("latin1");
  if (text.trimStart().startsWith(ARMOR_HEADER)) {
    try {
      bytes = armor.decode(text);
    } catch (error) {
      return cannot(`its armor is damaged or truncated (${(error as Error).message})`);
    }
  } else bytes = content;
  const header = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = header.indexOf(HEADER_END);
  const stanzas = header.subarray(0, end < 0 ? Math.min(header.length, 4096) : end).toString("latin1");
  if (/\n-> scrypt /.test(stanzas))
    return cannot(
      "it is encrypted with a passphrase (age -p), which is not supported: encrypt it to the public key of an identity in ageIdentityFile (age -r age1…)",
    );
  const decrypter = new Decrypter();
  for (const identity of identities) decrypter.addIdentity(identity);
  try {
    return { text: await decrypter.decrypt(bytes, "text") };
  } catch (error) {
    const message = (error as Error).message;
    if (/no identity matched/.test(message))
      return cannot(`none of the identities in ${identityFile} is one of its recipients`);
    return cannot(`it is damaged or truncated (${message})`);
  }
}
