/**
 * Text from outside as the CLI and the dashboard show it. Refs, actors, delivery ids, commit subjects, check
 * names, URLs, environments, tag and token names, pause reasons: anyone who can push a branch or send a delivery
 * chooses them, and a terminal or a page would obey the marks in them. A right-to-left override reorders the rest of
 * the line; an escape or a C1 control drives the terminal; a soft hyphen, a combining grapheme joiner or a tag
 * character is invisible, so two names that look the same differ. `shown` drops them all where text is shown;
 * the JSON that scripts read (`--json`, the API) gives it as it came.
 */

/** Line breaks and tabs (C0, NEL, the Unicode line and paragraph separators): one space each, so a value stays on its line. */
export const BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]/gu;

/**
 * What is dropped: C0 and C1 controls and DEL; the soft hyphen; the combining grapheme joiner; the Arabic letter
 * mark; zero-width spaces and joiners, the left-to-right and right-to-left marks; the bidi embeddings, overrides
 * and isolates; the invisible operators; the byte order mark; the tag characters.
 */
export const HIDDEN =
  // The combining grapheme joiner apart: in a class it would read as joined to the character before it.
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\u{e0000}-\u{e007f}]|\u034f/gu;

/** `text` as shown: its breaks one space each, its controls and invisible marks gone. */
export function shown(text: string): string {
  return text.replace(BREAKS, " ").replace(HIDDEN, "");
}

/** A message of several lines as shown: each line as `shown` makes it, the lines kept. */
export const shownLines = (text: string): string => text.split("\n").map(shown).join("\n");
