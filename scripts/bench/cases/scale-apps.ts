/**
 * Scale in apps: a service.yaml with 200 apps (each its own generated secret file, one repository) against a
 * single-app service on the same repository, the same path: refused POSTs per second to one app, and sequential
 * deploys of it, interleaved with the single app's.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { alternating, bareDeploy, interleaved, timedDeploy, WRK_SECONDS, wrongSecretRate } from "../drive.ts";
import { type Bench, type Case, SECRET } from "../lab.ts";
import { fmtMs, fmtX, log } from "../measure.ts";

export const APPS = 200;
const RUNS = 40;
const ROUNDS = 3;
/** The app every request goes to: one in the middle of the list. */
const TARGET = `app-${APPS / 2}`;
const hostOf = (name: string) => `${name}.example.com`;

async function scaleApps(bench: Bench, repo: string): Promise<void> {
  log(`scale: ${APPS} apps against one, refused POSTs and deploys of one app`);
  const apps = Array.from({ length: APPS }, (_, i) => ({
    name: `app-${i + 1}`,
    host: hostOf(`app-${i + 1}`),
    path: "/hook",
    repoPath: repo,
    runScript: "true",
  }));
  const many = await bench.startServiceWith({ "service.yaml": stringify({ apps }) }, {});
  const one = await bench.startServiceWith(
    {},
    { SERVICE_SECRET: SECRET, SERVICE_REPO_PATH: repo, SERVICE_RUN_SCRIPT: "true", SERVICE_PATH: "/hook" },
  );
  try {
    const secret = readFileSync(join(many.cwd, ".service", "secrets", `${TARGET}.secret`), "utf8").trim();
    const manyUrl = `http://127.0.0.1:${many.port}/hook`;
    const oneUrl = `http://127.0.0.1:${one.port}/hook`;
    if (bench.hasWrk) {
      const r = await alternating(ROUNDS, {
        many: async () => (await wrongSecretRate(bench, manyUrl, hostOf(TARGET))).rps,
        one: async () => (await wrongSecretRate(bench, oneUrl)).rps,
      });
      bench.report.row(
        `unauthorized POSTs/s, ${APPS} apps vs one (wrk -c32, ${WRK_SECONDS} s, median of ${ROUNDS})`,
        "≥ 90 % of one app's",
        `${r.many.median.toFixed(0)}/s`,
        `one app ${r.one.median.toFixed(0)}/s`,
        `${((100 * r.many.median) / r.one.median).toFixed(0)} %`,
        r.many.median >= 0.9 * r.one.median,
      );
    } else bench.report.na(`unauthorized POSTs/s, ${APPS} apps vs one`, "≥ 90 % of one app's", "needs wrk");
    const t = await interleaved(
      RUNS,
      3,
      {
        many: () => timedDeploy(manyUrl, { host: hostOf(TARGET), secret }),
        one: () => timedDeploy(oneUrl),
        bare: () => bareDeploy(bench, repo),
      },
      10,
    );
    const overhead = { many: t.many.p50 - t.bare.p50, one: t.one.p50 - t.bare.p50 };
    bench.report.row(
      `deploy overhead (p50 over bare), ${APPS} apps vs one (${RUNS} each, interleaved)`,
      "≤ one app's + 10 %",
      `+${fmtMs(overhead.many)}`,
      `one app +${fmtMs(overhead.one)}`,
      fmtX(overhead.many / overhead.one),
      overhead.many <= overhead.one * 1.1,
    );
    bench.report.note(
      `scale, ${APPS} apps: deploy p50 ${fmtMs(t.many.p50)} against ${fmtMs(t.one.p50)} for one app and ${fmtMs(t.bare.p50)} bare, in the same runs`,
    );
  } finally {
    await many.stop();
    await one.stop();
  }
}

export default { name: "scale-apps", run: (bench) => scaleApps(bench, bench.repo("scale")) } satisfies Case;
