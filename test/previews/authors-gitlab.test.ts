/**
 * docs/previews.md "GitLab": a merge request's author is judged by their access level in the project, asked of
 * `GET /projects/:id/members/all/:user_id` and kept a minute: Developer (30) counts as MEMBER, Maintainer (40) and
 * Owner (50) as OWNER, anyone else (or no member) as NONE; an API that does not say decides nothing.
 */
import { describe, expect, test } from "bun:test";
import { gitlabAccessLevel } from "../../src/previews/authors-gitlab.ts";
import { FORGE_TOKEN, previewForge } from "../_support/preview-forge.ts";
import { forgeTarget } from "../_support/preview-reports.ts";

describe("GitLab authors' access level", () => {
  test("each level counts as its association", async () => {
    const forge = previewForge();
    const target = forgeTarget("gitlab", forge.url);
    const levels: [number, string][] = [
      [10, "NONE"],
      [20, "NONE"],
      [30, "MEMBER"],
      [40, "OWNER"],
      [50, "OWNER"],
    ];
    for (const [level, association] of levels) {
      forge.members.set(`14/${level}`, level);
      expect(await gitlabAccessLevel(target, 14, level)).toEqual({ association, accessLevel: level } as never);
    }
    expect(await gitlabAccessLevel(target, 14, 999)).toEqual({ association: "NONE", accessLevel: 0 });
    expect(forge.refused).toEqual([]);
    expect(forge.calls.map((c) => c.call)).toContain("GET /api/v4/projects/14/members/all/30");
  });

  test("an answer is kept a minute: asked once within it, again after it", async () => {
    const forge = previewForge();
    const target = forgeTarget("gitlab", forge.url);
    forge.members.set("15/7", 30);
    const now = Date.now();
    expect(await gitlabAccessLevel(target, 15, 7, now)).toMatchObject({ association: "MEMBER" });
    forge.members.set("15/7", 40);
    expect(await gitlabAccessLevel(target, 15, 7, now + 59_000)).toMatchObject({ association: "MEMBER" });
    expect(await gitlabAccessLevel(target, 15, 7, now + 61_000)).toMatchObject({ association: "OWNER" });
    expect(forge.calls).toHaveLength(2);
  });

  test("a refusal or no answer is a problem (nothing decidable), never kept, the token never in it", async () => {
    const forge = previewForge();
    const wrong = { ...forgeTarget("gitlab", forge.url), token: "wrong-token-0123456789" };
    const refused = await gitlabAccessLevel(wrong, 16, 7);
    expect(refused).toEqual({ problem: expect.stringMatching(/^GitLab member 7 of project 16: 401/) });
    expect(JSON.stringify(refused)).not.toContain("wrong-token-0123456789");
    forge.failing.add("GET /api/v4/projects/16/");
    const broken = await gitlabAccessLevel(forgeTarget("gitlab", forge.url), 16, 8);
    expect(broken).toMatchObject({ problem: expect.stringContaining("500") });
    forge.failing.clear();
    forge.members.set("16/8", 40);
    expect(await gitlabAccessLevel(forgeTarget("gitlab", forge.url), 16, 8)).toMatchObject({ association: "OWNER" });
    expect(FORGE_TOKEN).not.toBe(wrong.token);
  });
});
