/**
 * Text from outside (refs, actors, delivery ids, commit subjects …) is shown without what would reorder, hide or
 * drive anything: one rule, `shown`, for the CLI and the dashboard.
 */
import { describe, expect, test } from "bun:test";
import { shown } from "../../src/system/shown.ts";

describe("shown: text from outside as the CLI and the dashboard show it", () => {
  const cases: [string, string, string][] = [
    ["plain text", "feature/login-2", "feature/login-2"],
    ["a right-to-left override", "main\u202Egpj.exe", "maingpj.exe"],
    ["the other bidi embeddings, marks and isolates", "a\u202Ab\u202Bc\u202Cd\u202De\u200Ef\u200Fg\u061Ch", "abcdefgh"],
    ["bidi isolates", "a\u2066b\u2067c\u2068d\u2069e", "abcde"],
    ["a soft hyphen", "re\u00ADlease", "release"],
    ["a combining grapheme joiner", "ma\u034Fin", "main"],
    ["tag characters", "v1\u{E0041}\u{E0001}\u{E007F}.0", "v1.0"],
    ["C1 controls", "a\u0080b\u009Bc\u009Fd", "abcd"],
    ["C0 controls, an escape and DEL", "a\u0000b\u001B[31mc\u007Fd", "ab[31mcd"],
    ["zero-width spaces and joiners, a byte order mark, invisible operators", "a\u200Bb\u200Dc\uFEFFd\u2062e", "abcde"],
    [
      "line breaks and tabs: one space each",
      "one\ntwo\r\nthree\tfour\u2028five\u0085six",
      "one two  three four five six",
    ],
    ["letters of any script, emoji and combining accents stay", "Zoë/Straße/日本/👍/é", "Zoë/Straße/日本/👍/é"],
    ["every mark at once, in a branch name", "fix\u202E\u00AD\u034F\u{E0041}\u0085-it", "fix -it"],
  ];
  test.each(cases)("%s", (_, input, expected) => {
    expect(shown(input)).toBe(expected);
  });
});
