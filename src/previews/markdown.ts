/**
 * Text from outsiders (a pull request's title, its branch, a failure's reason) in a forge's Markdown (GitHub,
 * Gitea/Forgejo, GitLab, Bitbucket): shown as inline code, where no forge reads a link, a mention, a reference, an
 * emphasis or HTML; on one line, its invisible and control characters dropped, its backticks made look-alikes (so
 * the span cannot be closed early), and every `@` followed by a zero-width space besides (a mention defused even
 * where code were read).
 */
import { shown } from "../system/shown.ts";

/** The longest outsider's text shown in a comment. */
const MAX_TEXT = 200;

/** `text` as inline code, safe in any of the forges' Markdown; an empty text is an em dash. */
export function outsider(text: string, max = MAX_TEXT): string {
  let line = shown(text).replace(/\s+/g, " ").trim();
  if (line.length > max) line = `${line.slice(0, max - 1)}…`;
  if (!line) return "—";
  // U+02CB (modifier letter grave accent) looks like a backtick and closes nothing.
  const safe = line.replace(/`/g, "\u02cb").replace(/@/g, "@\u200b");
  return `\`${safe}\``;
}

/**
 * A link whose address is the operator's (the preview's URL, the dashboard's): only http(s), its address encoded
 * so nothing in it ends the link, its text the address itself in a code span. Undefined for anything else.
 */
export function link(url: string | undefined, text?: string): string | undefined {
  if (!url) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return undefined;
  const href = parsed.href.replace(
    /[()<>\s"'`\\[\]]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`,
  );
  const label = text ?? href;
  return `[${label.replace(/[\\`*_{}[\]()#+\-.!<>|@~]/g, (c) => `\\${c}`)}](${href})`;
}
