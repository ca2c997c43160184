/**
 * The fenced code blocks of a docs page, so that a test runs the very text the docs give (a proxy snippet, a
 * generated file): docs and tests cannot drift apart.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./repo.ts";

/** Every fenced block of `page` (a path from the repository's root): its info string, code and heading. */
function fencedBlocks(page: string): { lang: string; code: string; heading: string }[] {
  const blocks: { lang: string; code: string; heading: string }[] = [];
  let heading = "";
  let open: { lang: string; lines: string[] } | undefined;
  for (const line of readFileSync(join(ROOT, page), "utf8").split("\n")) {
    if (open) {
      if (line === "```") {
        blocks.push({ lang: open.lang, code: `${open.lines.join("\n")}\n`, heading });
        open = undefined;
      } else open.lines.push(line);
    } else if (line.startsWith("```")) open = { lang: line.slice(3).trim(), lines: [] };
    else if (/^#+ /.test(line)) heading = line.replace(/^#+ /, "");
  }
  return blocks;
}

/**
 * The one block fenced as `lang` (```` ```nginx ````) under the heading `section` of `page`. Fails when there is
 * none or several: a test must not pass on an empty snippet, nor pick one of two at random.
 */
export function docBlock(page: string, lang: string, section: string): string {
  const found = fencedBlocks(page).filter((block) => block.lang === lang && block.heading === section);
  if (found.length !== 1)
    throw new Error(`${page} "${section}" has ${found.length} \`\`\`${lang} blocks, expected one`);
  return found[0]!.code;
}
