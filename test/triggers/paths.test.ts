import { describe, expect, test } from "bun:test";
import { globPattern, matchesAny, matchingFiles } from "../../src/triggers/paths.ts";

describe("paths globs", () => {
  test("** matches any depth under a directory, and nothing beside it", () => {
    expect(matchesAny("apps/web/index.ts", ["apps/web/**"])).toBe(true);
    expect(matchesAny("apps/web/src/deep/a.ts", ["apps/web/**"])).toBe(true);
    expect(matchesAny("apps/webby/index.ts", ["apps/web/**"])).toBe(false);
    expect(matchesAny("apps/api/index.ts", ["apps/web/**"])).toBe(false);
  });

  test("**/ matches zero or more whole directories", () => {
    expect(matchesAny("README.md", ["**/*.md"])).toBe(true);
    expect(matchesAny("docs/a/b.md", ["**/*.md"])).toBe(true);
    expect(matchesAny("apps/x/package.json", ["apps/**/package.json"])).toBe(true);
    expect(matchesAny("apps/package.json", ["apps/**/package.json"])).toBe(true);
    expect(matchesAny("apps/xpackage.json", ["apps/**/package.json"])).toBe(false);
  });

  test("* stays within one path segment", () => {
    expect(matchesAny("apps/web/index.ts", ["apps/*/index.ts"])).toBe(true);
    expect(matchesAny("apps/web/src/index.ts", ["apps/*/index.ts"])).toBe(false);
    expect(matchesAny("package.json", ["*.json"])).toBe(true);
    expect(matchesAny("apps/package.json", ["*.json"])).toBe(false);
  });

  test("? is one character, never a slash", () => {
    expect(matchesAny("v1.txt", ["v?.txt"])).toBe(true);
    expect(matchesAny("v10.txt", ["v?.txt"])).toBe(false);
    expect(matchesAny("v/.txt", ["v?.txt"])).toBe(false);
  });

  test("everything else is literal: dots, brackets, pluses", () => {
    expect(matchesAny("a.b", ["a.b"])).toBe(true);
    expect(matchesAny("axb", ["a.b"])).toBe(false);
    expect(matchesAny("c++/[x].ts", ["c++/[x].ts"])).toBe(true);
    expect(matchesAny("c/x.ts", ["c++/[x].ts"])).toBe(false);
  });

  test("a leading / is the root and a trailing / is everything under the directory", () => {
    expect(matchesAny("apps/web/a.ts", ["/apps/web/"])).toBe(true);
    expect(globPattern("/apps/web/").test("apps/web")).toBe(false);
  });

  test("matchingFiles keeps the files that match any glob, in order", () => {
    const files = ["apps/web/a.ts", "apps/api/b.ts", "packages/ui/c.ts", "README.md"];
    expect(matchingFiles(files, ["apps/web/**", "packages/ui/**"])).toEqual(["apps/web/a.ts", "packages/ui/c.ts"]);
    expect(matchingFiles(files, ["nothing/**"])).toEqual([]);
  });
});
