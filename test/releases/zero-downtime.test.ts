/**
 * Zero downtime, measured (docs/releases.md "Zero downtime"): nginx serves `<releases.path>/current/public` while
 * ten deploys of commits that change both the page and its script run; clients loading pages all along see no
 * failed request and no page whose script comes from another release. Skipped where nginx is not installed.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { lastLine, post, SECRET, startServer, tempDir } from "../_support/helpers.ts";
import { currentRelease, makeReleasesSite } from "../_support/release-helpers.ts";
import { nginxPath, SITE_BUILD, SITE_SHARED, siteFiles, visitDuring } from "../_support/zero-downtime.ts";

const DEPLOYS = 10;

if (!nginxPath) console.warn("nginx is not installed: the zero-downtime test is skipped (apt-get install nginx)");

describe('zero downtime (docs/releases.md "Zero downtime")', () => {
  test.skipIf(!nginxPath)(
    `during ${DEPLOYS} deploys behind nginx: 0 failed requests, 0 pages whose files come from two releases`,
    async () => {
      const s = makeReleasesSite(siteFiles(0), {
        SERVICE_RUN_SCRIPT: SITE_BUILD,
        SERVICE_RELEASES_SHARED: SITE_SHARED,
        SERVICE_ACTIVATE_SCRIPT: "true",
      });
      await using server = await startServer(s.cwd, s.env);
      const deploy = async () => lastLine(await (await post(server.url, { secret: SECRET })).text());
      expect(await deploy()).toBe("[done] ok=true exitCode=0");
      const outcomes: string[] = [];
      const visits = await visitDuring(
        tempDir("service-nginx-"),
        join(s.site, "current", "public"),
        DEPLOYS,
        async (rev) => {
          s.repo.push(siteFiles(rev), `rev ${rev}`);
          outcomes.push(await deploy());
        },
      );
      expect(outcomes).toEqual(Array(DEPLOYS).fill("[done] ok=true exitCode=0"));
      expect(visits.samples).toEqual([]);
      expect({ failed: visits.failed, mixed: visits.mixed }).toEqual({ failed: 0, mixed: 0 });
      // The clients saw the site change, release after release: the measure covered the switches.
      expect(visits.revisions.size).toBeGreaterThanOrEqual(3);
      expect(currentRelease(s.site)).toEndWith(s.repo.head().slice(0, 12));
    },
    120_000,
  );
});
