import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { randomHex } from "./digest.ts";
import { processAlive } from "./liveness.ts";

/**
 * How the service writes its own files under `.service/`: never through a symbolic link (a link planted at a
 * file's name would have the service overwrite the link's target), temp files under unpredictable names
 * created exclusively, directories private to the service's user.
 */

const { O_APPEND, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_WRONLY } = constants;

/**
 * Creates `dir` (and missing parents) with mode 0700, whatever the umask: the one way `.service/` and its folders
 * are made (deploy logs carry scripts and output; tokens and secrets live there).
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Removes `file` (a link itself, never its target); one already gone, or that cannot go, is left as it is. */
export function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {}
}

/** Whether a write failed for want of room (a full disk, a quota): room may come back, so it is worth a retry. */
export function isNoSpace(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOSPC" || code === "EDQUOT";
}

/**
 * Writes all of `bytes`: a write on a nearly full disk can be short, and the rest must not vanish silently.
 * A failure carries `written`, how many bytes did go, so a caller can try the rest again.
 */
export function writeAll(fd: number, bytes: Uint8Array, position?: number): void {
  let done = 0;
  try {
    while (done < bytes.length) {
      const written = writeSync(fd, bytes, done, bytes.length - done, position === undefined ? null : position + done);
      if (written <= 0) throw Object.assign(new Error("no space left on device, write"), { code: "ENOSPC" });
      done += written;
    }
  } catch (error) {
    throw Object.assign(error as Error, { written: done });
  }
}

/** Creates a new file for appending; fails (EEXIST, ELOOP) rather than open what is already at `file`. */
export function createExclusive(file: string, mode = 0o640): number {
  return openSync(file, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
}

/** Opens an existing file for appending, not through a link. */
export function openForAppend(file: string): number {
  return openSync(file, O_WRONLY | O_APPEND | O_NOFOLLOW);
}

/**
 * Opens `file` for reading only when it is a regular file, without ever waiting: O_NONBLOCK because opening a
 * FIFO waits for a writer (one planted at a control file would hang every request that reads it), and a FIFO,
 * a device or a directory is refused after the open (EFTYPE, "not a regular file"). Never through a link
 * (ELOOP) unless `follow` (a secret file the operator linked in on purpose).
 */
export function openRegular(file: string, follow = false): number {
  const fd = openSync(file, O_RDONLY | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW));
  let regular = false;
  try {
    regular = fstatSync(fd).isFile();
  } finally {
    if (!regular) closeSync(fd);
  }
  if (!regular) throw Object.assign(new Error(`${file} is not a regular file`), { code: "EFTYPE" });
  return fd;
}

/** A regular file's bytes, not through a link (ELOOP when `file` is one; EFTYPE when it is no regular file). */
export function readBytesNoFollow(file: string, follow = false): Buffer {
  const fd = openRegular(file, follow);
  try {
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** A regular file's text, not through a link (ELOOP when `file` is one; EFTYPE when it is no regular file). */
export function readNoFollow(file: string, follow = false): string {
  return readBytesNoFollow(file, follow).toString("utf8");
}

/**
 * The text of a file the user names (a key file, a secret), at most `maxBytes`: opened without blocking (a FIFO
 * would wait for a writer), and refused unless it is a regular file. Throws an Error whose message says why.
 */
export function readUserFile(file: string, maxBytes: number): string {
  return readUserBytes(file, maxBytes).toString("utf8");
}

/** `readUserFile`'s bytes, for a file that is not text (an age-encrypted file). */
export function readUserBytes(file: string, maxBytes: number): Buffer {
  const fd = openSync(file, O_RDONLY | O_NONBLOCK);
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new Error(`not a regular file${stat.isDirectory() ? " (a directory)" : ""}`);
    if (stat.size > maxBytes) throw new Error(`${stat.size} bytes, over the ${maxBytes} bytes allowed`);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Whether `file` lies inside the directory `dir` (links resolved where they exist, so a link cannot hide it). */
export function isInside(file: string, dir: string): boolean {
  const real = (path: string) => {
    try {
      return realpathSync(path);
    } catch {
      return resolve(path);
    }
  };
  const rel = relative(real(dir), real(file));
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

/** `<file>.<pid>.<random>.tmp`: the pid tells whose it is, so a crashed writer's temp can be removed later. */
const TEMP_NAME = /\.(\d+)\.[0-9a-f]{16}\.tmp$/;
/**
 * A file's identity and version: device, inode, size, mtime and ctime (ns); undefined when it cannot be
 * stat'ed. An atomic replace (a new inode) always changes it.
 */
export function fileStamp(file: string): string | undefined {
  try {
    const st = statSync(file, { bigint: true });
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return undefined;
  }
}

/** The predictable temp name of earlier versions: whoever left one is long gone. */
const OLD_TEMP_NAME = /Z_[0-9a-f-]{36}\.json\.tmp$/;

/**
 * Replaces `file` with `text` atomically (a reader sees the old or the new file, never half). `sync`: on disk
 * before the rename (a secret that was shown must survive a crash). Throws.
 */
export function writeFileAtomic(file: string, text: string, mode = 0o640, sync = false): void {
  const temp = `${file}.${process.pid}.${randomHex(8)}.tmp`;
  let fd: number | undefined;
  try {
    fd = openSync(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
    fchmodSync(fd, mode);
    writeAll(fd, Buffer.from(text));
    if (sync) fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    // rename replaces a link at `file`; it never writes to the link's target.
    renameSync(temp, file);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    rmSync(temp, { force: true });
    throw error;
  }
}

/**
 * Rewrites an existing file in place, within the bytes it already holds (so no new block is needed on a full
 * disk), padding with spaces: for JSON, trailing whitespace keeps it valid. Throws when `text` is longer.
 */
export function overwriteInPlace(file: string, text: string): void {
  writeAtStart(file, (size) => {
    const bytes = Buffer.from(text);
    if (bytes.length >= size)
      throw Object.assign(new Error(`needs ${bytes.length} bytes, ${size} reserved`), { code: "ENOSPC" });
    return Buffer.concat([bytes, Buffer.alloc(size - bytes.length - 1, " "), Buffer.from("\n")]);
  });
}

/**
 * Writes the bytes `of(size)` gives at the start of an existing file of `size` bytes, in one write, never through
 * a link; the file is not created, nor cut short. Throws when it is gone, or `of` does.
 */
export function writeAtStart(file: string, of: (size: number) => Uint8Array): void {
  const fd = openSync(file, O_WRONLY | O_NOFOLLOW);
  try {
    writeAll(fd, of(fstatSync(fd).size), 0);
  } finally {
    closeSync(fd);
  }
}

/** Removes the temp files in `dir` whose writer is gone (a crash or a kill between create and rename). */
export function removeStaleTemps(dir: string, names?: string[]): void {
  try {
    names ??= readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.endsWith(".tmp")) continue;
    const pid = TEMP_NAME.exec(name)?.[1];
    // This process's own writes are synchronous and clean up on every path: a temp bearing its pid is a
    // leftover of an earlier process that had the same pid (a container's pid 1).
    const stale =
      pid !== undefined ? Number(pid) === process.pid || !processAlive(Number(pid)) : OLD_TEMP_NAME.test(name);
    // rm unlinks a link itself, never its target.
    if (stale) rmSync(join(dir, name), { force: true });
  }
}

/**
 * A small record of the service's own under `.service/` (a pause, a refused push, the last skipped push): written
 * atomically into its private directory; throws when it cannot be written.
 */
export function writeJsonRecord(file: string, value: unknown): void {
  ensurePrivateDir(dirname(file));
  writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** Such a record read without following a link, when it is there, parses and `valid` accepts it. */
export function readJsonRecord<T>(file: string, valid: (value: Partial<T>) => boolean): T | undefined {
  try {
    const value = JSON.parse(readNoFollow(file)) as T | null;
    return value && typeof value === "object" && valid(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `JSON.parse` of what `read` gives, read once more when it does not parse: its writer may have been rewriting it in
 * place (`writeAtStart`) at that moment. Throws the second parse's error.
 */
export function parseReadingAgain(read: () => string): unknown {
  try {
    return JSON.parse(read());
  } catch {
    return JSON.parse(read());
  }
}
