/**
 * `paths` (docs/configuration.md): globs of files relative to the repository's root; a push deploys only when the
 * change since the live commit touches one. Pure: the files come from `git diff --name-only` (tip.ts).
 *
 * `**` matches any number of whole directories (none too), `*` any characters within one path segment, `?` one
 * character but `/`. Everything else is literal. A glob ending in `/` stands for everything under that directory.
 */

/** The regular expression of one glob, anchored at both ends. */
export function globPattern(glob: string): RegExp {
  let source = "";
  const text = (glob.startsWith("/") ? glob.slice(1) : glob).replace(/\/$/, "/**");
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "*" && text[i + 1] === "*") {
      // `**/` is any number of directories, `**` at the end (or before anything else) is anything.
      const slash = text[i + 2] === "/";
      source += slash ? "(?:.*/)?" : ".*";
      i += slash ? 2 : 1;
    } else if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else source += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

/** Each glob's pattern, made once per decision. */
export const globsOf = (globs: readonly string[]) => globs.map(globPattern);

/** Whether `file` (a repository-relative path, `/`-separated) matches one of `globs`. */
export function matchesAny(file: string, globs: readonly string[] | readonly RegExp[]): boolean {
  const patterns = globs.map((glob) => (typeof glob === "string" ? globPattern(glob) : glob));
  return patterns.some((pattern) => pattern.test(file));
}

/** The files among `files` that match one of `globs`, in their order. */
export function matchingFiles(files: readonly string[], globs: readonly string[]): string[] {
  const patterns = globsOf(globs);
  return files.filter((file) => patterns.some((pattern) => pattern.test(file)));
}
