/**
 * Pruning off the critical path (docs/releases.md, step 7): a repository of 20 000 files deployed with releases,
 * `keep: 2` (from the third deploy on, each one prunes a release of 20 000 files after its `[done]` line) against
 * `keep: 10` (nothing pruned), the two interleaved on one remote: from the POST to the answer's `[done]`, and, with
 * `keep: 2`, to the moment the record names what was pruned (`result.release.pruned`, polled every 20 ms).
 */
import { mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { git, makeRepoIn, waitFor } from "../../../test/_support/repo.ts";
import { deploy, recordFile, recordOf } from "../deploys.ts";
import type { Bench, Case, Server } from "../lab.ts";
import { fmtMs, fmtX, log, median } from "../measure.ts";

const FILES = 20_000;
const DEPLOYS = 6;
/** Deploys before this one prune nothing under `keep: 2` (the live release, the one it replaced, the new one). */
const FIRST_PRUNING = 3;
/** From the deploy's end to the client's `[done]`: the final record and one chunk, nothing of the pruning. */
const DONE_LAG_MS = 20;

async function pruning(bench: Bench): Promise<void> {
  log(`pruning: ${FILES} files, releases keep 2 against keep 10, ${DEPLOYS} deploys each`);
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) files[`src/d${Math.floor(i / 200)}/f${i}.txt`] = `file ${i}\n`;
  const repo = makeRepoIn(join(bench.tmpRoot, "pruning-repo"), files);
  const other = join(repo.dir, "app-keep-10");
  git(repo.dir, "clone", "--quiet", repo.remote, other);
  const start = (clone: string, keep: number) => {
    const path = join(bench.tmpRoot, `pruning-releases-${keep}`);
    mkdirSync(path);
    return bench.startService(clone, "true", { SERVICE_RELEASES_PATH: path, SERVICE_RELEASES_KEEP: String(keep) });
  };
  const servers: Server[] = [];
  try {
    const pruned = await start(repo.clone, 2);
    servers.push(pruned);
    const kept = await start(other, 10);
    servers.push(kept);
    const done: number[] = [];
    const prunedAt: number[] = [];
    const keptDone: number[] = [];
    let doneFirst = 0;
    const doneLag: number[] = [];
    const pruneEnd: number[] = [];
    for (let n = 1; n <= DEPLOYS; n++) {
      repo.push({ "rev.txt": `${n}\n` }, `rev ${n}`);
      const t0 = performance.now();
      const a = await deploy(pruned.url);
      const receivedAt = Date.now();
      if (!a.ok) throw new Error(`a keep 2 deploy failed:\n${a.text.slice(-2000)}`);
      if (n >= FIRST_PRUNING) {
        await waitFor(() => recordOf(pruned.cwd, a.id)?.result?.release?.pruned?.length, "the pruning", 60_000);
        // On the server's clock: from the deploy's end (finishedAt) to the client's `[done]`, and to the record
        // rewritten with what was pruned (its mtime).
        const end = Date.parse(recordOf(pruned.cwd, a.id)?.result?.finishedAt ?? "");
        doneLag.push(receivedAt - end);
        pruneEnd.push(statSync(recordFile(pruned.cwd, a.id)).mtimeMs - end);
        if (doneLag.at(-1)! < pruneEnd.at(-1)!) doneFirst++;
        done.push(a.ms);
        prunedAt.push(performance.now() - t0);
      }
      const b = await deploy(kept.url);
      if (!b.ok) throw new Error(`a keep 10 deploy failed:\n${b.text.slice(-2000)}`);
      if (n >= FIRST_PRUNING) keptDone.push(b.ms);
    }
    const samples = DEPLOYS - FIRST_PRUNING + 1;
    bench.report.row(
      `pruning: POST → \`[done]\`, keep 2 (each prunes a release of ${FILES} files) vs keep 10 (median of ${samples})`,
      "≤ keep 10's + 10 %",
      fmtMs(median(done)),
      `keep 10 ${fmtMs(median(keptDone))}`,
      fmtX(median(done) / median(keptDone)),
      median(done) <= median(keptDone) * 1.1,
    );
    bench.report.row(
      `pruning: the deploy's end (finishedAt) → the client's \`[done]\`, keep 2 (median of ${samples})`,
      `≤ ${DONE_LAG_MS} ms, before the pruning ends`,
      fmtMs(median(doneLag)),
      `the pruning ended at ${fmtMs(median(pruneEnd))}`,
      "",
      median(doneLag) <= DONE_LAG_MS && doneFirst === samples,
    );
    bench.report.note(
      `pruning: [done] came before the pruning ended in ${doneFirst} of ${samples} deploys; POST → [done] keep 2: ${done.map((ms) => ms.toFixed(0)).join(", ")} ms, keep 10: ${keptDone.map((ms) => ms.toFixed(0)).join(", ")} ms; POST → the record naming what was pruned: ${prunedAt.map((ms) => ms.toFixed(0)).join(", ")} ms; on the server's clock, from the deploy's finishedAt to the client's [done] ${doneLag.map((ms) => ms.toFixed(0)).join(", ")} ms, to that record's rewrite (its mtime) ${pruneEnd.map((ms) => ms.toFixed(0)).join(", ")} ms`,
    );
  } finally {
    for (const server of servers) await server.stop();
  }
}

export default { name: "pruning", run: pruning } satisfies Case;
