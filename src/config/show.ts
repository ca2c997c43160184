/**
 * A value as a problem names it: a string quoted, a list or a mapping by its kind (never a string form, which a
 * mapping shadowing `toString` does not have), anything else by its string form.
 */
export function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return "a list";
  if (value !== null && typeof value === "object") return "a mapping";
  return String(value);
}
