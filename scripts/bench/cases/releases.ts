/**
 * Releases (docs/releases.md): nginx serves the site while 10 deploys of commits that change both the page and its
 * script run; clients count failed requests and pages whose files come from two commits. With releases
 * (`<path>/current/public`) and, for contrast, in place (the plain flow: the clone's `public/`, built where it is
 * served). Then the rollback to the previous deploy: an instant switch with releases, a reset and a rebuild in place.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { baseEnv, makeRepoIn } from "../../../test/_support/repo.ts";
import {
  nginxPath,
  SITE_BUILD,
  SITE_SHARED,
  siteFiles,
  type Visits,
  visitDuring,
} from "../../../test/_support/zero-downtime.ts";
import { BIN, type Bench, type Case, post, SECRET, type Server } from "../lab.ts";
import { bounded, fmtMs, fmtX, log } from "../measure.ts";

const DEPLOYS = 10;

interface Measured {
  visits: Visits;
  /** The deploy ids, one per revision (0 = the first deploy). */
  ids: string[];
  /** Wall time of `service rollback` to the deploy before the last. */
  rollbackMs: number;
  rollbackText: string;
}

/** The first deploy, nginx on `root`, DEPLOYS deploys under the clients' loop, then a rollback by the CLI. */
async function measure(
  bench: Bench,
  name: string,
  extra: Record<string, string>,
  root: (clone: string) => string,
): Promise<Measured> {
  const repo = makeRepoIn(join(bench.tmpRoot, `${name}-repo`), siteFiles(0));
  const server = await bench.startService(repo.clone, SITE_BUILD, extra);
  const ids: string[] = [];
  const deploy = async () => {
    const text = await bounded(
      post(server.url).then((r) => r.text()),
      60_000,
      `a ${name} deploy`,
    );
    if (!text.trimEnd().endsWith("[done] ok=true exitCode=0")) throw new Error(`a ${name} deploy failed:\n${text}`);
    ids.push(/\[deploy\] (\S+) started/.exec(text)![1]!);
  };
  try {
    await deploy();
    const visits = await visitDuring(
      join(bench.tmpRoot, `${name}-nginx`),
      root(repo.clone),
      DEPLOYS,
      async (rev) => {
        repo.push(siteFiles(rev), `rev ${rev}`);
        await deploy();
      },
      (nginx) => bench.track(nginx),
    );
    const { ms, text } = await rollback(bench, server, repo.clone, extra, ids[ids.length - 2]!);
    return { visits, ids, rollbackMs: ms, rollbackText: text };
  } finally {
    await server.stop();
  }
}

/** `service rollback <id>` with the server's configuration, timed from spawn to exit. */
async function rollback(
  bench: Bench,
  server: Server,
  clone: string,
  extra: Record<string, string>,
  id: string,
): Promise<{ ms: number; text: string }> {
  const env = baseEnv({ SERVICE_SECRET: SECRET, SERVICE_REPO_PATH: clone, SERVICE_RUN_SCRIPT: SITE_BUILD, ...extra });
  const t0 = performance.now();
  const proc = Bun.spawn([BIN, "rollback", id], { cwd: server.cwd, env, stdout: "pipe", stderr: "pipe" });
  bench.track(proc);
  const [text, code] = await bounded(Promise.all([new Response(proc.stdout).text(), proc.exited]), 60_000, "rollback");
  const ms = performance.now() - t0;
  bench.untrack(proc);
  if (code !== 0) throw new Error(`the rollback failed:\n${text}`);
  return { ms, text };
}

async function releases(bench: Bench): Promise<void> {
  const figures = [
    [`releases: failed requests during ${DEPLOYS} deploys (nginx)`, "0"],
    [`releases: pages mixing two commits during ${DEPLOYS} deploys`, "0"],
    ["releases: rollback to the previous deploy", "< a rebuild"],
  ];
  if (!nginxPath) {
    for (const [figure, target] of figures)
      bench.report.na(figure!, target!, "nginx is not installed (apt-get install nginx)");
    return;
  }
  log(`releases: ${DEPLOYS} deploys behind nginx, with releases and in place`);
  const site = join(bench.tmpRoot, "releases-path");
  mkdirSync(site);
  const ours = await measure(
    bench,
    "releases",
    { SERVICE_RELEASES_PATH: site, SERVICE_RELEASES_SHARED: SITE_SHARED },
    () => join(site, "current", "public"),
  );
  if (!ours.rollbackText.includes("[release] instant switch"))
    throw new Error("the rollback was not an instant switch");
  const inPlace = await measure(bench, "in-place", {}, (clone) => join(clone, "public"));
  const { visits } = ours;
  bench.report.note(
    `releases: clients loaded ${visits.pages} pages with releases (${visits.revisions.size} revisions seen), ${inPlace.visits.pages} in place; the build takes 0.2 s; ` +
      `the peer column is the same site deployed in place (the plain flow)${inPlace.visits.samples[0] ? `, e.g. ${inPlace.visits.samples[0]}` : ""}`,
  );
  bench.report.row(
    figures[0]![0]!,
    "0",
    `${visits.failed}`,
    `in place: ${inPlace.visits.failed}`,
    "",
    visits.failed === 0,
  );
  bench.report.row(
    figures[1]![0]!,
    "0",
    `${visits.mixed}`,
    `in place: ${inPlace.visits.mixed}`,
    "",
    visits.mixed === 0,
  );
  bench.report.row(
    figures[2]![0]!,
    figures[2]![1]!,
    `${fmtMs(ours.rollbackMs)} (instant switch)`,
    `in place: ${fmtMs(inPlace.rollbackMs)} (reset + build)`,
    fmtX(inPlace.rollbackMs / ours.rollbackMs),
    ours.rollbackMs < inPlace.rollbackMs,
  );
}

export default { name: "releases", run: releases } satisfies Case;
