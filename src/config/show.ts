/** A value as a problem names it: a string quoted, anything else by its string form, or its kind when it has none. */
export function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  try {
    return String(value);
  } catch {
    // A mapping (or a list holding one) whose keys shadow toString/valueOf (`{toString: 1}`) has no string form.
    return Object.prototype.toString.call(value);
  }
}
