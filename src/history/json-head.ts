/**
 * A top-level string of a JSON object read from the start of its text only, for files too large to parse
 * whole. The scan steps over the other values (strings, nested objects and arrays) without parsing them, so
 * the key may come anywhere among the others, and an `"app"` inside a nested object or a string is never
 * taken for the top-level one.
 */

/** The index just past the string literal that opens at `from`, or -1 when it does not end within `text`. */
function stringEnd(text: string, from: number): number {
  for (let i = from + 1; i < text.length; i++) {
    if (text[i] === "\\") i++;
    else if (text[i] === '"') return i + 1;
  }
  return -1;
}

/** The index just past the value that opens at `from`, or -1 when it does not end within `text`. */
function valueEnd(text: string, from: number): number {
  if (text[from] === '"') return stringEnd(text, from);
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      const end = stringEnd(text, i);
      if (end < 0) return -1;
      i = end - 1;
    } else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      // A number, literal or nothing ends at its object's closing brace; a nested value at its own.
      if (depth === 0) return i;
      if (--depth === 0) return i + 1;
    } else if (c === "," && depth === 0) return i;
  }
  return -1;
}

/** The index of the first character at or after `from` that is not JSON whitespace. */
function skipSpace(text: string, from: number): number {
  let i = from;
  while (i < text.length && " \t\r\n".includes(text[i]!)) i++;
  return i;
}

/**
 * The string value of `key` in the top-level object that `text` begins. Undefined when the key is not within
 * `text` (absent, or past a cut head), its value is not a string, or the text is not a JSON object.
 */
export function topLevelString(text: string, key: string): string | undefined {
  try {
    let i = skipSpace(text, 0);
    if (text[i] !== "{") return undefined;
    // Each turn consumes at least one key, so the loop ends within text.length turns.
    for (i = skipSpace(text, i + 1); text[i] === '"'; i = skipSpace(text, i + 1)) {
      const nameEnd = stringEnd(text, i);
      if (nameEnd < 0) return undefined;
      const name: unknown = JSON.parse(text.slice(i, nameEnd));
      i = skipSpace(text, nameEnd);
      if (text[i] !== ":") return undefined;
      i = skipSpace(text, i + 1);
      const end = valueEnd(text, i);
      if (end < 0) return undefined;
      if (name === key) {
        const value: unknown = JSON.parse(text.slice(i, end));
        return typeof value === "string" ? value : undefined;
      }
      i = skipSpace(text, end);
      if (text[i] !== ",") return undefined;
    }
    return undefined;
  } catch {
    return undefined;
  }
}
