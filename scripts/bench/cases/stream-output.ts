/** The deploy output of the stream case, fast and slow client alike. */
import { MB } from "../measure.ts";

export const STREAM_BYTES = 100 * MB;
/** 80-byte lines: `yes` is a generator that is neither Bun nor Node, and fast (the pipe, not it, is the limit). */
export const GENERATOR = `yes ${"x".repeat(79)} | head -c ${STREAM_BYTES}`;
export const STREAM_RUNS = 3;
