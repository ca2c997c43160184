/** Which refs an app may deploy by name: `deployRefs` (control/deploy-ref.ts, a deployment event). */

/**
 * Whether the ref may be deployed under the `deployRefs` patterns (`*` any characters, `?` one). A pattern written
 * `refs/tags/…` or `refs/heads/…` matches only that kind: `full` is the tag's or branch's full ref the ref named
 * (undefined for a commit); a bare pattern matches a tag or a branch by its name, or a commit as named.
 */
export function refAllowed(patterns: readonly string[], ref: string, full: string | undefined): boolean {
  const name = full ? full.replace(/^refs\/(heads|tags)\//, "") : ref;
  return patterns.some((pattern) => {
    const source = pattern
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".");
    const regex = new RegExp(`^${source}$`);
    return pattern.startsWith("refs/") ? full !== undefined && regex.test(full) : regex.test(name);
  });
}
