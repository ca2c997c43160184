/**
 * `service token add` and `revoke` in the config file: the `tokens` list edited through the YAML document, so
 * comments, key order and the rest of the file stay as written, and the file replaced in one rename.
 */
import { accessSync, constants, existsSync, lstatSync, realpathSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { Document, isMap, isSeq, parseDocument } from "yaml";
import { readConfigText } from "../config/load.ts";
import { writeFileAtomic } from "../system/files.ts";
import type { Role } from "./scope.ts";

/** One entry of `tokens`, as the command writes it. */
export interface TokenEntry {
  name: string;
  role: Role;
  apps?: string[];
  file: string;
}

/** The config file, parsed for editing; throws when it cannot be read or is not valid YAML. */
export function readConfigDocument(file: string): Document {
  const read = readConfigText(file);
  if ("invalid" in read) throw new Error(read.invalid);
  const doc = parseDocument(read.text);
  if (doc.errors.length > 0)
    throw new Error(`${file} is not valid YAML (${doc.errors[0]!.message.split("\n")[0]}): fix it first`);
  if (doc.contents !== null && !isMap(doc.contents))
    throw new Error(`${file}: the top level must be a mapping of keys to values`);
  return doc;
}

/** The entries of `tokens` in the document, as written (mappings, or whatever else is there). */
export function tokenEntries(doc: Document): unknown[] {
  const list = doc.toJS()?.tokens;
  return Array.isArray(list) ? list : [];
}

/** The document with `entry` appended to `tokens` (the key added at the end when there is none). */
export function addEntry(doc: Document, entry: TokenEntry): string {
  let list = doc.get("tokens");
  if (list === undefined || list === null) {
    if (doc.contents === null) doc.contents = doc.createNode({}) as never;
    doc.set("tokens", doc.createNode([]));
    list = doc.get("tokens");
  }
  if (!isSeq(list)) throw new Error("the tokens key is not a list: fix it first");
  list.items.push(doc.createNode(entry, { flow: true }));
  return doc.toString({ lineWidth: 0 });
}

/** The document without the entry named `name`; undefined when no entry has that name. */
export function removeEntry(doc: Document, name: string): string | undefined {
  const list = doc.get("tokens");
  if (!isSeq(list)) return undefined;
  const index = list.items.findIndex((item) => isMap(item) && item.get("name") === name);
  if (index < 0) return undefined;
  list.items.splice(index, 1);
  return doc.toString({ lineWidth: 0 });
}

/** The entry as a YAML line to paste under `tokens:`. */
export function entryLine(entry: TokenEntry): string {
  const doc = new Document();
  doc.contents = doc.createNode(entry, { flow: true }) as never;
  return `  - ${doc.toString({ lineWidth: 0 }).trim()}`;
}

/** Why `file` cannot be rewritten in place of itself (it or its directory is not writable); undefined when it can. */
export function notWritable(file: string): string | undefined {
  const target = existsSync(file) ? realpathSync(file) : file;
  try {
    accessSync(target, constants.W_OK);
    accessSync(dirname(target), constants.W_OK);
    return undefined;
  } catch (error) {
    return `${file} is not writable (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
}

/** Replaces the config file with `text` in one rename, its mode kept; a link is followed to the file it names. */
export function writeConfig(file: string, text: string): void {
  const target = lstatSync(file).isSymbolicLink() ? realpathSync(file) : file;
  writeFileAtomic(target, text, statSync(target).mode & 0o777);
}
