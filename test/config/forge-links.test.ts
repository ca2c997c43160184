/**
 * docs/admin.md "Links to the forge": a commit and a comparison link to the forge the clone's origin is on (GitHub,
 * GitLab, Gitea/Forgejo, Bitbucket, or a self-hosted one `status` names), credentials dropped, ssh mapped to https;
 * no link for anything else.
 */
import { describe, expect, test } from "bun:test";
import { forgeLinks } from "../../src/config/forge-links.ts";

describe("links to the forge, from the origin URL", () => {
  test("each public forge gets its own commit and compare pages", () => {
    expect(forgeLinks("https://github.com/acme/web.git")).toEqual({
      commit: "https://github.com/acme/web/commit/{sha}",
      compare: "https://github.com/acme/web/compare/{from}...{to}",
    });
    expect(forgeLinks("https://gitlab.com/group/sub/web.git")).toEqual({
      commit: "https://gitlab.com/group/sub/web/-/commit/{sha}",
      compare: "https://gitlab.com/group/sub/web/-/compare/{from}...{to}",
    });
    expect(forgeLinks("https://codeberg.org/acme/web")).toEqual({
      commit: "https://codeberg.org/acme/web/commit/{sha}",
      compare: "https://codeberg.org/acme/web/compare/{from}...{to}",
    });
    expect(forgeLinks("https://bitbucket.org/acme/web.git")).toEqual({
      commit: "https://bitbucket.org/acme/web/commits/{sha}",
      compare: "https://bitbucket.org/acme/web/branches/compare/{to}%0D{from}",
    });
  });

  test("credentials in the origin URL are dropped from the links", () => {
    const links = forgeLinks("https://x-access-token:ghp_secret123@github.com/acme/web.git");
    expect(links?.commit).toBe("https://github.com/acme/web/commit/{sha}");
    expect(JSON.stringify(links)).not.toContain("secret");
    expect(JSON.stringify(forgeLinks("https://oauth2:glpat-abc@gitlab.com/acme/web"))).not.toContain("glpat");
  });

  test("an ssh remote (git@host:owner/name.git, ssh://) maps to the forge's https pages", () => {
    expect(forgeLinks("git@github.com:acme/web.git")?.commit).toBe("https://github.com/acme/web/commit/{sha}");
    expect(forgeLinks("ssh://git@gitlab.com:22/acme/web.git")?.commit).toBe(
      "https://gitlab.com/acme/web/-/commit/{sha}",
    );
  });

  test("a self-hosted forge is recognised by the app's status provider and an API URL on its host", () => {
    const status = { provider: "gitea" as const, apiUrl: "https://git.example.com/api/v1" };
    expect(forgeLinks("https://git.example.com/acme/web.git", status)).toEqual({
      commit: "https://git.example.com/acme/web/commit/{sha}",
      compare: "https://git.example.com/acme/web/compare/{from}...{to}",
    });
    expect(
      forgeLinks("git@gh.example.com:acme/web.git", { provider: "github", apiUrl: "https://api.gh.example.com" })
        ?.compare,
    ).toBe("https://gh.example.com/acme/web/compare/{from}...{to}");
    // An API on another host names another forge: no link.
    expect(
      forgeLinks("https://git.example.com/acme/web.git", { provider: "gitea", apiUrl: "https://other.example/api/v1" }),
    ).toBeNull();
  });

  test("an unknown host, a path, file:// and git:// get no link", () => {
    expect(forgeLinks("https://git.example.com/acme/web.git")).toBeNull();
    expect(forgeLinks("/srv/git/web.git")).toBeNull();
    expect(forgeLinks("file:///srv/git/web.git")).toBeNull();
    expect(forgeLinks("git://github.com/acme/web.git")).toBeNull();
    expect(forgeLinks("https://github.com/acme")).toBeNull();
    expect(forgeLinks("https://github.com/acme/../web")).toBeNull();
    expect(forgeLinks(undefined)).toBeNull();
  });
});
