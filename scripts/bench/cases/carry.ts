/**
 * Carrying a build cache (docs/releases.md "Carrying a build cache"): the build is `npm install` of 100 local
 * packages (`file:` tarballs of 41 files each, made by the bench: nothing from the network, a cache of the bench's
 * own). With releases and `carry: [node_modules]` the next deploy copies node_modules from the live release and npm
 * finds it up to date; `service deploy --no-carry` installs from nothing; in place (no releases) node_modules stays
 * in the clone. Each figure is the median of ROUNDS deploys after the first, from their records: the build (`run`
 * phase), the release's preparation (`release` phases: checkout, carry, switch) and the whole deploy.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { baseEnv, makeRepoIn, type Repo } from "../../../test/_support/repo.ts";
import { type DeployRecord, deploy, phaseMs, recordOf } from "../deploys.ts";
import { BIN, type Bench, type Case, SECRET, type Server } from "../lab.ts";
import { bounded, fmtMB, fmtMs, fmtX, log, median } from "../measure.ts";

const PACKAGES = 100;
const FILES_PER_PACKAGE = 40;
const ROUNDS = 3;

/**
 * PACKAGES package tarballs (`package/package.json` and FILES_PER_PACKAGE files of random, hardly compressible
 * text) and the package.json of an app that depends on each by `file:`.
 */
function dependencies(bench: Bench): string {
  const dir = join(bench.tmpRoot, "carry-deps");
  const dependencies: Record<string, string> = {};
  for (let p = 0; p < PACKAGES; p++) {
    const name = `pkg-${p}`;
    const pkg = join(dir, name, "package");
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ name, version: "1.0.0" }));
    for (let f = 0; f < FILES_PER_PACKAGE; f++)
      writeFileSync(join(pkg, `file-${f}.js`), `// ${randomBytes(3 + (f % 8) * 1024).toString("base64")}\n`);
    const tarball = join(dir, `${name}-1.0.0.tgz`);
    const tar = Bun.spawnSync(["tar", "czf", tarball, "-C", join(dir, name), "package"], { stderr: "pipe" });
    if (tar.exitCode !== 0) throw new Error(`tar failed: ${tar.stderr}`);
    rmSync(join(dir, name), { recursive: true });
    dependencies[name] = `file:${tarball}`;
  }
  return JSON.stringify({ name: "app", version: "1.0.0", private: true, dependencies }, null, 2);
}

/** `service deploy --no-carry` in the server's directory, with its configuration: its record. */
async function deployNoCarry(bench: Bench, server: Server, env: Record<string, string>): Promise<DeployRecord> {
  const proc = Bun.spawn([BIN, "deploy", "--no-carry"], { cwd: server.cwd, env, stdout: "pipe", stderr: "pipe" });
  bench.track(proc);
  const [text, code] = await bounded(
    Promise.all([new Response(proc.stdout).text(), proc.exited]),
    60_000,
    "service deploy --no-carry",
  );
  bench.untrack(proc);
  const id = /\[deploy\] (\S+) started/.exec(text)?.[1];
  const record = id ? recordOf(server.cwd, id) : undefined;
  if (code !== 0 || !record) throw new Error(`service deploy --no-carry failed (${code}):\n${text.slice(-2000)}`);
  return record;
}

interface Figures {
  run: number;
  release: number;
  total: number;
}

const figures = (records: DeployRecord[]): Figures => ({
  run: median(records.map((r) => phaseMs(r, "run"))),
  release: median(records.map((r) => phaseMs(r, "release"))),
  total: median(records.map((r) => r.result?.durationMs ?? NaN)),
});

async function carry(bench: Bench): Promise<void> {
  log(`carry: npm install of ${PACKAGES} local packages, node_modules carried vs --no-carry vs in place`);
  const packageJson = dependencies(bench);
  const cache = join(bench.tmpRoot, "carry-npm-cache");
  const script = `npm install --offline --no-audit --no-fund --no-update-notifier --loglevel=error --cache ${cache}`;
  const deployed = async (server: Server, repo: Repo, round: number) => {
    repo.push({ "rev.txt": `${round}\n` }, `rev ${round}`);
    const run = await deploy(server.url);
    const record = recordOf(server.cwd, run.id);
    if (!run.ok || !record) throw new Error(`a carry deploy failed:\n${run.text.slice(-2000)}`);
    return record;
  };

  const releasesRepo = makeRepoIn(join(bench.tmpRoot, "carry-repo"), { "package.json": packageJson });
  const extra = {
    SERVICE_RELEASES_PATH: join(bench.tmpRoot, "carry-releases"),
    SERVICE_RELEASES_CARRY: "node_modules",
  };
  mkdirSync(extra.SERVICE_RELEASES_PATH);
  const env = baseEnv({
    SERVICE_SECRET: SECRET,
    SERVICE_REPO_PATH: releasesRepo.clone,
    SERVICE_RUN_SCRIPT: script,
    ...extra,
  });
  const carried: DeployRecord[] = [];
  const fresh: DeployRecord[] = [];
  const server = await bench.startService(releasesRepo.clone, script, extra);
  try {
    await deployed(server, releasesRepo, 0);
    for (let round = 1; round <= ROUNDS; round++) {
      carried.push(await deployed(server, releasesRepo, round));
      releasesRepo.push({ "rev.txt": `${round} again\n` }, `rev ${round} again`);
      fresh.push(await deployNoCarry(bench, server, env));
    }
  } finally {
    await server.stop();
  }

  const inPlaceRepo = makeRepoIn(join(bench.tmpRoot, "carry-in-place"), { "package.json": packageJson });
  const inPlace: DeployRecord[] = [];
  const plain = await bench.startService(inPlaceRepo.clone, script);
  try {
    await deployed(plain, inPlaceRepo, 0);
    for (let round = 1; round <= ROUNDS; round++) inPlace.push(await deployed(plain, inPlaceRepo, round));
  } finally {
    await plain.stop();
  }

  const c = figures(carried);
  const f = figures(fresh);
  const p = figures(inPlace);
  const size = carried[0]?.result?.release?.carried?.[0];
  bench.report.row(
    `carry: whole deploy, carried node_modules vs --no-carry (median of ${ROUNDS})`,
    "< --no-carry",
    fmtMs(c.total),
    `--no-carry ${fmtMs(f.total)}, in place ${fmtMs(p.total)}`,
    fmtX(f.total / c.total),
    c.total < f.total,
  );
  bench.report.row(
    `carry: build (run phase), carried vs --no-carry (median of ${ROUNDS})`,
    "(info)",
    fmtMs(c.run),
    `--no-carry ${fmtMs(f.run)}, in place ${fmtMs(p.run)}`,
    fmtX(f.run / c.run),
    undefined,
  );
  bench.report.row(
    `carry: release phases (checkout, carry, switch), carried vs --no-carry (median of ${ROUNDS})`,
    "(info)",
    fmtMs(c.release),
    `--no-carry ${fmtMs(f.release)}`,
    "",
    undefined,
  );
  bench.report.note(
    `carry: node_modules of ${size ? `${size.files} files, ${fmtMB(size.bytes)}` : "?"} carried (cp -a --reflink=auto) from the live release; npm install then finds it up to date (--no-carry, and the first deploy: npm installs all of it); in place it stays in the clone; durationMs carried ${carried.map((r) => r.result?.durationMs).join(", ")}, --no-carry ${fresh.map((r) => r.result?.durationMs).join(", ")}, in place ${inPlace.map((r) => r.result?.durationMs).join(", ")} ms`,
  );
}

export default { name: "carry", run: carry } satisfies Case;
