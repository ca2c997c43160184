/**
 * docs/previews.md "The comment": with `previews.comment`, one comment per pull request on each forge (GitHub and
 * Gitea issue comments, GitLab notes, Bitbucket comments), made at the first report, edited at each later one,
 * found again by its marker after a restart; never a second one. The outsiders' words are escaped.
 */
import { describe, expect, test } from "bun:test";
import { commentMarker } from "../../src/previews/comment.ts";
import { commentBody } from "../../src/previews/comment-body.ts";
import { outsider } from "../../src/previews/markdown.ts";
import { reportPreview } from "../../src/previews/report.ts";
import type { Preview } from "../../src/previews/types.ts";
import { previewForge } from "../_support/preview-forge.ts";
import { forgeTarget, NEXT, previewOf, previewSettings, reportOf } from "../_support/preview-reports.ts";

const FORGES = ["github", "gitea", "gitlab", "bitbucket"] as const;
const LOG = "https://deploy.example.com/deploys/d-1";

describe("one comment per pull request", () => {
  for (const provider of FORGES)
    test(`${provider}: three builds and a restart that lost its id leave one comment, edited in place`, async () => {
      const forge = previewForge();
      forge.pageSize = 2;
      const thread = `${provider}#7`;
      // Others' comments before it: the marker is looked for on every page.
      forge.comments.set(thread, [
        { id: 1, body: "looks good", user: "alice" },
        { id: 2, body: "<!-- service-preview:default --> planted without the mark", user: "mallory" },
        { id: 3, body: "nit", user: "bob" },
      ]);
      const target = forgeTarget(provider, forge.url);
      const settings = previewSettings(true);
      let preview: Preview = previewOf(provider);
      const report = async (phase: "building" | "ok" | "failed" | "teardown", changes: Partial<Preview> = {}) => {
        preview = { ...preview, ...changes };
        const reported = await reportPreview(
          reportOf(target, preview, phase, { settings, logUrl: LOG, durationMs: 65_000 }),
        );
        expect(reported.problems).toEqual([]);
        preview = { ...preview, ...reported.keep };
        return reported;
      };
      const first = await report("building");
      expect(first.keep.commentId).toMatch(/^\d+$/);
      await report("ok");
      await report("building", { head: NEXT });
      await report("failed", { reason: "npm run build: exit 1" });
      // A restart that lost the comment's id finds it by its marker.
      const found = await report("ok", { commentId: undefined });
      expect(found.keep.commentId).toBe(first.keep.commentId);
      await report("teardown");
      expect(forge.refused).toEqual([]);
      const comments = forge.comments.get(thread)!;
      expect(comments.map((c) => c.id)).toEqual([1, 2, 3, Number(first.keep.commentId)]);
      expect(comments[1]!.body).toBe("<!-- service-preview:default --> planted without the mark");
      const ours = comments[3]!.body;
      expect(ours.startsWith(commentMarker(target, "default", 7))).toBe(true);
      expect(ours).toContain("The preview was removed");
      expect(forge.calls.filter((c) => c.call.startsWith("POST") && /comments|notes/.test(c.call))).toHaveLength(1);
    });

  test("a comment deleted on the forge is looked for, then made again; comments that cannot be read make none", async () => {
    const forge = previewForge();
    const target = forgeTarget("github", forge.url);
    const settings = previewSettings(true);
    const made = await reportPreview(
      reportOf(target, previewOf("github", { commentId: "424242" }), "ok", { settings }),
    );
    expect(made.problems).toEqual([]);
    expect(made.keep.commentId).toMatch(/^\d+$/);
    expect(made.keep.commentId).not.toBe("424242");
    forge.failing.add("GET /repos/");
    const blind = await reportPreview(reportOf(target, previewOf("github"), "ok", { settings }));
    expect(blind.keep.commentId).toBeUndefined();
    expect(blind.problems.some((p) => p.includes("500"))).toBe(true);
    expect(forge.comments.get("github#7")).toHaveLength(1);
  });

  test("a next page on another origin is not followed: the token stays with the API, and no comment is made", async () => {
    const elsewhere = previewForge();
    const forge = previewForge();
    forge.pageSize = 1;
    forge.nextOrigin = elsewhere.url;
    forge.comments.set("github#7", [
      { id: 1, body: "first", user: "alice" },
      { id: 2, body: "second", user: "bob" },
    ]);
    const reported = await reportPreview(
      reportOf(forgeTarget("github", forge.url), previewOf("github"), "ok", { settings: previewSettings(true) }),
    );
    expect(reported.problems).toEqual([expect.stringContaining("is on another origin")]);
    expect(elsewhere.calls).toEqual([]);
    expect(elsewhere.refused).toEqual([]);
    expect(forge.comments.get("github#7")).toHaveLength(2);
  });

  test("a comment that fails is a problem, never a throw, and the status is still posted", async () => {
    const forge = previewForge();
    forge.failing.add("POST /api/v1/repos/acme/web/issues");
    const reported = await reportPreview(
      reportOf(forgeTarget("gitea", forge.url), previewOf("gitea"), "ok", { settings: previewSettings(true) }),
    );
    expect(reported.problems).toEqual([expect.stringMatching(/^Gitea comment: 500/)]);
    expect(forge.calls.filter((c) => c.call.includes("/statuses/"))).toHaveLength(1);
  });
});

describe("the outsiders' words in the comment", () => {
  const HOSTILE = [
    "[click me](https://evil.example.com) @everyone @org/team #1 !2 ~bug %v1 $3 &4 :tada: www.evil.example.com",
    "<img src=x onerror=alert(1)> <script>alert(1)</script> <!-- --> **bold** _it_ | table |",
    "`code` ``more`` https://evil.example.com/x?a=1 javascript:alert(1)",
    "line\nbreak\r\n# heading\n> quote\n- list \u202eoverride\u200b \u0007bell",
  ];

  test("each is one code span, closed by nothing inside it, on one line, with every @ defused", () => {
    for (const text of HOSTILE) {
      const shown = outsider(text);
      expect(shown).not.toContain("\n");
      expect(shown.startsWith("`") && shown.endsWith("`")).toBe(true);
      expect(shown.slice(1, -1)).not.toContain("`");
      expect(shown).not.toMatch(/@(?!\u200b)/);
      expect(shown).not.toMatch(/[\u202e\u0007\r]/);
    }
    expect(outsider("")).toBe("—");
    expect(outsider("x".repeat(500))).toHaveLength(202);
  });

  test("a hostile title, branch and reason leave no link, mention, HTML or heading outside a code span", () => {
    const body = commentBody(
      reportOf(
        forgeTarget("github", "http://127.0.0.1:1"),
        previewOf("github", { title: HOSTILE[0]!, branch: HOSTILE[1]!, reason: HOSTILE[3]! }),
        "failed",
        { logUrl: LOG, reason: HOSTILE[2]!, durationMs: 65_000 },
      ),
    );
    // What is left once the code spans are taken out is the service's own words.
    const outside = body.replace(/`[^`\n]*`/g, "");
    expect(outside).not.toMatch(/evil|@|<img|<script|onerror|javascript/);
    expect(outside.match(/\]\(/g)).toHaveLength(2); // the preview's URL and the log: the operator's links only
    expect(body).toContain("[https://pr\\-7\\.preview\\.example\\.com/](https://pr-7.preview.example.com/)");
    expect(body).toContain(`[the deploy's log](${LOG})`);
    expect(body).toContain("- Duration: 1 min 5 s");
  });

  test("a log link that is not http(s) is left out", () => {
    const body = commentBody(
      reportOf(forgeTarget("github", "http://127.0.0.1:1"), previewOf("github"), "ok", {
        logUrl: "javascript:alert(1)",
      }),
    );
    expect(body).not.toContain("javascript");
  });
});
