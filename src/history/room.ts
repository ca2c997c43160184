/**
 * Room on a full disk: what a deploy's files leave free for the records, and the small record that fits the room a
 * "running" record reserved.
 */
import { statfsSync } from "node:fs";
import { writeAtStart } from "../system/files.ts";
import type { DeployResult } from "../types.ts";
import type { DeployRecord } from "./record.ts";

/** Bytes a "running" record takes on disk, so that its final outcome fits in place when the disk is full. */
export const RECORD_RESERVE = 8192;
/** The longest text a record keeps of each script and error when it has to fit in that reserve. */
const COMPACT_TEXT = 1000;
/**
 * Room a `.log` leaves free on its file system for the records (32 reserved "running" records), or an eighth
 * of a smaller file system: a deploy's output that fills the disk stops its `.log` there, so the deploys after
 * it still write their records.
 */
const RECORD_ROOM_BYTES = 32 * RECORD_RESERVE;
/** Output written between two looks at the free space, at most (a look is one statfs). */
export const MAX_LOG_BUDGET = 1024 * 1024;

/** Bytes free for this process in the file system of `dir` beyond the records' room; Infinity when unknown. */
export function spareBytes(dir: string): number {
  try {
    const fs = statfsSync(dir);
    return fs.bavail * fs.bsize - Math.min(RECORD_ROOM_BYTES, (fs.blocks * fs.bsize) / 8);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** The record without the captured output, its long texts cut: small enough for the reserve of a full disk. */
export function compactRecord(record: DeployRecord, result: DeployResult, why: string): DeployRecord {
  const cut = <T extends string | null>(text: T): T =>
    text && text.length > COMPACT_TEXT ? (`${text.slice(0, COMPACT_TEXT)}…` as T) : text;
  return {
    ...record,
    runScript: cut(record.runScript),
    note: `the captured output is not kept (${cut(why)})`,
    result: {
      ...result,
      error: cut(result.error),
      pull: { ...result.pull, stdout: "", stderr: "" },
      run: { ...result.run, script: cut(result.run.script), stdout: "", stderr: "" },
      ...(result.rollback
        ? { rollback: { ...result.rollback, stdout: "", stderr: "", error: cut(result.rollback.error) } }
        : {}),
    },
  };
}

/** What one write fills whole or not at all, even when the writer is killed: a page. */
const PAGE_BYTES = 4096;

/**
 * Writes the record `json` over the start of the padded record file `file`, whose JSON so far takes `before` bytes
 * (-1: the file is not padded), when both fit its first page: one write, spaces over what is left of the JSON
 * before (the rest of the file is spaces already). False when it cannot be written so: the caller writes a new file.
 */
export function rewriteInReserve(file: string, json: Uint8Array, before: number): boolean {
  if (before < 0 || Math.max(json.length, before) >= PAGE_BYTES) return false;
  try {
    writeAtStart(file, () => Buffer.concat([json, Buffer.alloc(Math.max(0, before - json.length), " ")]));
    return true;
  } catch {
    return false;
  }
}
