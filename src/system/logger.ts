import { writeSync } from "node:fs";
import { sep } from "node:path";
import type { ConsolaInstance } from "consola";

/**
 * Where the library's own messages go: the server's `logger` option, or the CLI's. A consola instance is one; so
 * is any object with these three methods.
 */
export interface Logger {
  info(...args: unknown[]): void;
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

/** The service's console: the CLI's messages and the server's, and the library's default logger. */
export interface ServiceConsole extends Logger {
  success(...args: unknown[]): void;
  log(...args: unknown[]): void;
  /** The same console, each line tagged `[tag]` after its level. */
  withTag(tag: string): ServiceConsole;
}

/** consola's levels of the types the console writes: error and warn go to stderr, the others to stdout. */
const LEVELS = { error: 0, warn: 1, log: 2, info: 3, success: 3 } as const;
type Type = keyof typeof LEVELS;

/** Messages above this level are not written: consola's CONSOLA_LEVEL (the CLI sets it to info, 3). */
let level = Number.parseInt(process.env.CONSOLA_LEVEL ?? "", 10);
if (Number.isNaN(level)) level = LEVELS.info;

/** On a terminal, consola with its terminal reporter writes the messages (see useTerminalStyle). */
let terminal: ConsolaInstance | undefined;

/** Only messages of this level or lower are written from now on (consola's levels: info is 3). */
export function setConsoleLevel(value: number): void {
  level = value;
}

/** From now on the console's messages go through `instance`: consola with its badges and colours. */
export function writeThrough(instance: ConsolaInstance): void {
  terminal = instance;
}

/**
 * Writes `text` to standard output (fd 1) or error (fd 2) at once, in one system call when it fits: the same
 * text whoever reads it. Output that went away (a closed terminal, a pipe whose reader exited) drops the text.
 */
export function writeOut(text: string, fd: 1 | 2 = 1): void {
  let bytes = Buffer.from(text);
  for (let tries = 0; bytes.length > 0 && tries < 10_000; tries++) {
    try {
      bytes = bytes.subarray(writeSync(fd, bytes));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") return;
    }
  }
}

/**
 * node:util's formatWithOptions, loaded with the first message that is not one string (the server's are): the
 * module is a sizeable part of a server's idle memory under Bun (2 MB).
 */
const formatWithOptions = (options: object, ...args: unknown[]): string => {
  // Node.js before 20.16 has no getBuiltinModule: each value as a string there.
  const util = process.getBuiltinModule?.("node:util") as typeof import("node:util") | undefined;
  return util ? util.formatWithOptions(options, ...args) : args.map(String).join(" ");
};

/** consola's basic reporter's text of an error: its message, then its stack without the cwd, then its cause. */
function errorText(error: Error, depth = 0): string {
  const message = error.message ?? formatWithOptions({}, error);
  const indent = "  ".repeat(depth + 1);
  const cwd = process.cwd() + sep;
  const stack = error.stack
    ? indent +
      error.stack
        .split("\n")
        .splice(message.split("\n").length)
        .map((l) => l.trim().replace("file://", "").replace(cwd, ""))
        .join(`\n${indent}`)
    : "";
  const caused = depth > 0 ? `${"  ".repeat(depth)}[cause]: ` : "";
  const cause = error.cause ? `\n\n${errorText(error.cause as Error, depth + 1)}` : "";
  return `${caused}${message}\n${stack}${cause}`;
}

/** One message as consola's basic reporter writes it: `[type] [tag] text`. */
function line(type: Type, tag: string, args: unknown[]): string {
  const text =
    args.length === 1 && typeof args[0] === "string"
      ? args[0]
      : formatWithOptions(
          {},
          ...args.map((a) => (a && typeof (a as Error).stack === "string" ? errorText(a as Error) : a)),
        );
  return [`[${type}]`, tag && `[${tag}]`, text].filter(Boolean).join(" ");
}

/**
 * A console with consola's plain output, written without consola: one `[level] [tag] text` line per message, as
 * a journal, a pipe or a file wants them, each in one write. Like consola, a message repeated more than 5 times
 * within a second each is written once more, with `(repeated N times)`, when the repetition ends.
 */
function createConsole(tag: string): ServiceConsole {
  const last = {
    key: undefined as string | undefined,
    count: 0,
    time: 0,
    type: "log" as Type,
    args: [] as unknown[],
    timer: undefined as Timer | undefined,
  };
  let fancy: ConsolaInstance | undefined;
  const write = (type: Type, args: unknown[]) => {
    const text = line(type, tag, args);
    writeOut(`${text}\n`, LEVELS[type] < 2 ? 2 : 1);
  };
  const flush = () => {
    const repeated = last.count - 5;
    if (repeated > 0) write(last.type, repeated > 1 ? [...last.args, `(repeated ${repeated} times)`] : last.args);
    if (repeated > 0) last.count = 1;
  };
  const log =
    (type: Type) =>
    (...args: unknown[]) => {
      if (LEVELS[type] > level) return;
      if (terminal) {
        fancy ??= tag ? terminal.withTag(tag) : terminal;
        (fancy[type] as (...a: unknown[]) => void)(...args);
        return;
      }
      clearTimeout(last.timer);
      const now = Date.now();
      const within = last.time === 0 || now - last.time < 1000;
      last.time = now;
      if (within) {
        let key: string | undefined;
        try {
          key = JSON.stringify([type, tag, args]);
        } catch {}
        if (key !== undefined) {
          const same = key === last.key;
          last.key = key;
          if (same && ++last.count > 5) {
            last.timer = setTimeout(flush, 1000);
            return;
          }
        }
      }
      flush();
      Object.assign(last, { type, args });
      write(type, args);
    };
  return {
    error: log("error"),
    warn: log("warn"),
    log: log("log"),
    info: log("info"),
    success: log("success"),
    withTag: (more) => createConsole(tag ? `${tag}:${more}` : more),
  };
}

/** The service's console, the CLI's and the library's default (see createConsole). */
export const serviceConsole: ServiceConsole = createConsole("");

/** The logger of a caller that named none: the service's tagged console. */
export function defaultLogger(): ServiceConsole {
  return serviceConsole.withTag("service");
}
