/**
 * Previews of pull requests (docs/previews.md): a repository of 20 000 files, its pull request's preview from the
 * POST of the `opened` event to the preview running (the run script does nothing: the build is the app's), against
 * a bare `git archive | tar -x` and a bare `git worktree add --detach` of the same head; the teardown from the POST
 * of `closed` to the preview gone; the disk of 10 previews against 10 clones of the repository.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { git, makeRepoIn, post } from "../../../test/_support/repo.ts";
import { type Bench, type Case, SECRET, type Server } from "../lab.ts";
import { fmtMB, fmtMs, fmtX, log, median } from "../measure.ts";

const FILES = 20_000;
const RUNS = 3;
const PREVIEWS = 10;

/** Pushes a commit as PR `number`'s head (`refs/pull/<n>/head`), main untouched; returns it. */
function pullHead(dir: string, number: number): string {
  const pusher = join(dir, "pusher");
  git(pusher, "commit", "--quiet", "--allow-empty", "-m", `pull request ${number}`);
  const head = git(pusher, "rev-parse", "HEAD");
  git(pusher, "push", "--quiet", "origin", `+HEAD:refs/pull/${number}/head`);
  git(pusher, "reset", "--quiet", "--hard", "HEAD~1");
  return head;
}

function event(number: number, head: string, action: string): Record<string, string> {
  const body = JSON.stringify({
    action,
    number,
    pull_request: {
      number,
      title: `bench ${number}`,
      user: { login: "alice" },
      author_association: "OWNER",
      labels: [],
      head: { ref: `bench-${number}`, sha: head, repo: { full_name: "acme/web" } },
      base: { ref: "main", repo: { full_name: "acme/web" } },
    },
    sender: { login: "alice" },
  });
  return { body, event: "pull_request" };
}

const deliver = (server: Server, number: number, head: string, action: string) => {
  const { body } = event(number, head, action);
  return post(server.url, {
    secret: SECRET,
    headers: { "content-type": "application/json", "x-github-event": "pull_request" },
    body,
  }).then((r) => r.text());
};

function previewsOf(cwd: string): { number: number; status: string }[] {
  try {
    return JSON.parse(readFileSync(join(cwd, ".service", "previews", "default.json"), "utf8")).previews;
  } catch {
    return [];
  }
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 10));
  }
}

const du = (path: string) => Number(Bun.spawnSync(["du", "-sb", path]).stdout.toString().split("\t")[0]);

async function previews(bench: Bench): Promise<void> {
  log(`previews: ${FILES} files, ${RUNS} previews against git archive and worktree add, ${PREVIEWS} for the disk`);
  const files: Record<string, string> = {};
  for (let i = 0; i < FILES; i++) files[`src/d${Math.floor(i / 200)}/f${i}.txt`] = `file ${i}\n`;
  const repo = makeRepoIn(join(bench.tmpRoot, "previews-repo"), files);
  const path = join(bench.tmpRoot, "previews");
  const cwd = join(bench.tmpRoot, "previews-service");
  mkdirSync(cwd, { recursive: true });
  const yaml = [
    `repoPath: ${repo.clone}`,
    'runScript: "true"',
    "previews:",
    `  path: ${path}`,
    "  url: https://pr-{number}.preview.example.com",
    "  ports: 41000-41099",
    '  runScript: "true"',
    "  slots: 4",
    "  max: 20",
  ].join("\n");
  const server = await bench.startServiceWith({ "service.yaml": yaml }, { SERVICE_SECRET: SECRET }, cwd);
  try {
    const preview: number[] = [];
    const archive: number[] = [];
    const worktree: number[] = [];
    const teardown: number[] = [];
    for (let n = 1; n <= RUNS; n++) {
      const head = pullHead(repo.dir, n);
      let t0 = performance.now();
      await deliver(server, n, head, "opened");
      await until(() => previewsOf(cwd).some((p) => p.number === n && p.status === "running"), "the preview");
      preview.push(performance.now() - t0);
      const bare = join(bench.tmpRoot, `previews-archive-${n}`);
      mkdirSync(bare);
      // The head's objects are in the clone already (the preview fetched them): the bare commands only write files.
      t0 = performance.now();
      Bun.spawnSync([
        "sh",
        "-c",
        'git -C "$1" archive --format=tar "$2" | tar -x -C "$3"',
        "sh",
        repo.clone,
        head,
        bare,
      ]);
      archive.push(performance.now() - t0);
      t0 = performance.now();
      git(repo.clone, "worktree", "add", "--quiet", "--detach", join(bench.tmpRoot, `previews-worktree-${n}`), head);
      worktree.push(performance.now() - t0);
      t0 = performance.now();
      await deliver(server, n, head, "closed");
      await until(() => !previewsOf(cwd).some((p) => p.number === n), "the teardown");
      teardown.push(performance.now() - t0);
      if (existsSync(join(path, `pr-${n}`))) throw new Error(`pr-${n} is still there after its teardown`);
    }
    // Each preview against the archive made right after it: the machine's load changes between runs.
    const ratio = median(preview.map((ms, i) => ms / archive[i]!));
    bench.report.row(
      `previews: POST opened → preview running, ${FILES} files, a run script that does nothing (median of ${RUNS})`,
      "≤ 1.3× a bare git archive | tar -x",
      fmtMs(median(preview)),
      `archive ${fmtMs(median(archive))}, worktree add ${fmtMs(median(worktree))}`,
      fmtX(ratio),
      ratio <= 1.3,
    );
    bench.report.row(
      `previews: POST closed → preview gone (its directory of ${FILES} files removed; median of ${RUNS})`,
      "",
      fmtMs(median(teardown)),
      "",
      "",
      undefined,
    );
    for (let n = 100; n < 100 + PREVIEWS; n++) {
      const head = pullHead(repo.dir, n);
      await deliver(server, n, head, "opened");
    }
    await until(() => previewsOf(cwd).filter((p) => p.status === "running").length === PREVIEWS, "10 previews");
    const clones = join(bench.tmpRoot, "previews-clones");
    mkdirSync(clones);
    for (let n = 0; n < PREVIEWS; n++) git(clones, "clone", "--quiet", "--no-local", repo.remote, `c${n}`);
    const ours = du(path);
    const theirs = du(clones);
    bench.report.row(
      `previews: disk of ${PREVIEWS} previews (tracked files only) vs ${PREVIEWS} clones`,
      "less than the clones",
      fmtMB(ours),
      fmtMB(theirs),
      fmtX(ours / theirs),
      ours < theirs,
    );
    bench.report.note(
      `previews: POST → running ${preview.map((ms) => ms.toFixed(0)).join(", ")} ms; git archive ${archive.map((ms) => ms.toFixed(0)).join(", ")} ms; worktree add ${worktree.map((ms) => ms.toFixed(0)).join(", ")} ms; teardown ${teardown.map((ms) => ms.toFixed(0)).join(", ")} ms`,
    );
  } finally {
    await server.stop();
  }
}

export default { name: "previews", run: previews } satisfies Case;
