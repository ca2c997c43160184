/**
 * Pruning old releases after the deploy's `[done]` line, still in the app's queue turn (docs/releases.md "A deploy
 * with releases", step 7): the real server, real releases.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { collect, git, lastLine, post, runCli, SECRET, startServer, waitFor } from "../_support/helpers.ts";
import {
  currentRelease,
  deployStreamed,
  makeReleasesSite,
  recordOf,
  releaseDirs,
} from "../_support/release-helpers.ts";

describe('pruning after [done] (docs/releases.md "Pruning")', () => {
  test("a deploy's pruning comes after its [done]: nothing of it in the stream or the .log; the record's release.pruned names what was removed, after finishedAt", async () => {
    const s = makeReleasesSite({ "public/index.html": "v1\n" }, { SERVICE_RELEASES_KEEP: "2" });
    await using server = await startServer(s.cwd, s.env);
    const one = await deployStreamed(server.url, s.cwd);
    s.repo.push({ "public/index.html": "v2\n" }, "v2");
    const two = await deployStreamed(server.url, s.cwd);
    s.repo.push({ "public/index.html": "v3\n" }, "v3");
    const three = await deployStreamed(server.url, s.cwd);
    const id1 = one.result.release.id;
    expect(lastLine(three.text)).toBe("[done] ok=true exitCode=0");
    expect(three.text).not.toContain("pruned");
    // The record is amended once the pruning ended; the .log still ends with [done].
    const record = await waitFor(() => {
      const json = recordOf(s.cwd, three.text);
      return json.result.release.pruned ? json : undefined;
    }, "the record to name the pruned releases");
    expect(record.result.release.pruned).toEqual([id1]);
    expect(record.status).toBe("done");
    expect(lastLine(readFileSync(record.result.log.log, "utf8"))).toBe("[done] ok=true exitCode=0");
    expect(existsSync(join(s.site, "releases", id1))).toBe(false);
    // The .log's last write is its [done] line; the last change of releases/ is the pruning's removal of release 1
    // (one clock, the file system's): the removal came after [done].
    const removedAt = statSync(join(s.site, "releases")).mtimeMs;
    expect(removedAt).toBeGreaterThanOrEqual(statSync(record.result.log.log).mtimeMs);
    expect(Date.parse(record.result.finishedAt)).toBeLessThanOrEqual(Date.now());
    await waitFor(() => server.stdout.text.includes(`pruned release ${id1} (keep 2)`), "the service's log line");
    expect(releaseDirs(s.site)).toEqual([two.result.release.id, three.result.release.id]);
  });

  test("the next deploy of the app starts only once the pruning ended; a rollback right after still finds the previous release", async () => {
    const s = makeReleasesSite({ "public/index.html": "v1\n" }, { SERVICE_RELEASES_KEEP: "2" });
    const fifo = join(s.cwd, "..", "go");
    const blocked = join(s.cwd, "..", "blocked");
    const seen = join(s.cwd, "..", "seen");
    execFileSync("mkfifo", [fifo]);
    // A release of 3000 files to prune; a build that waits for the test when the commit says so; each build notes
    // how many release directories it finds and whether the last deploy's record names what it pruned.
    const script = [
      "mkdir -p node_modules && for i in $(seq 1 3000); do echo $i > node_modules/f$i; done",
      `test ! -f block || { touch ${blocked}; read x < ${fifo}; }`,
      `echo "$(ls -d ../*/ | wc -l | tr -d " ") $(grep -l '"pruned"' ${s.cwd}/.service/logs/*.json 2>/dev/null | wc -l | tr -d " ")" >> ${seen}`,
    ];
    await using server = await startServer(s.cwd, { ...s.env, SERVICE_RUN_SCRIPT: script.join("\n") });
    const one = await deployStreamed(server.url, s.cwd);
    s.repo.push({ "public/index.html": "v2\n" }, "v2");
    const two = await deployStreamed(server.url, s.cwd);
    s.repo.push({ "public/index.html": "v3\n", block: "yes\n" }, "v3 waits");
    const third = { text: "" };
    const thirdDone = post(server.url, { secret: SECRET }).then((res) => collect(res.body!, third));
    await waitFor(() => existsSync(blocked), "the third build to wait");
    git(join(s.repo.dir, "pusher"), "rm", "-q", "block");
    s.repo.push({ "public/index.html": "v4\n" }, "v4");
    const fourth = { text: "" };
    const fourthDone = post(server.url, { secret: SECRET }).then((res) => collect(res.body!, fourth));
    await waitFor(() => fourth.text.includes("[queued]"), "the fourth deploy to wait in the queue");
    // Lets the third build go on: its [done], then its pruning of release 1 (3000 files), then the fourth deploy.
    writeFileSync(fifo, "go\n");
    await Promise.all([thirdDone, fourthDone]);
    expect(lastLine(third.text)).toBe("[done] ok=true exitCode=0");
    expect(lastLine(fourth.text)).toBe("[done] ok=true exitCode=0");
    // The fourth build found releases 2, 3 and its own (release 1 gone), and the third's record amended.
    const lines = readFileSync(seen, "utf8").trim().split("\n");
    expect(lines.at(-1)).toBe("3 1");
    expect(recordOf(s.cwd, third.text).result.release.pruned).toEqual([one.result.release.id]);
    const id3 = recordOf(s.cwd, third.text).result.release.id;

    const back = await runCli(["rollback"], { cwd: s.cwd, env: s.env });
    expect(back.code).toBe(0);
    expect(back.stdout).toContain(`[release] instant switch: release ${id3}`);
    expect(currentRelease(s.site)).toBe(id3);
    expect(two.result.release.id).not.toBe(id3);
  });

  test("the [done] line reaches the client while an old release is still being removed: pruning never holds the answer", async () => {
    // Release 1 holds 30 000 files (its build makes them when the commit has `big`); releases 2 and 3 are small.
    const script = "test ! -f big || { mkdir many && cd many && seq 1 30000 | xargs touch; }";
    const s = makeReleasesSite(
      { "public/index.html": "v1\n", big: "yes\n" },
      { SERVICE_RELEASES_KEEP: "2", SERVICE_RUN_SCRIPT: script },
    );
    await using server = await startServer(s.cwd, s.env);
    const one = await deployStreamed(server.url, s.cwd);
    const id1 = one.result.release.id;
    expect(existsSync(join(s.site, "releases", id1, "many", "30000"))).toBe(true);
    git(join(s.repo.dir, "pusher"), "rm", "-q", "big");
    s.repo.push({ "public/index.html": "v2\n" }, "v2");
    await deployStreamed(server.url, s.cwd);
    s.repo.push({ "public/index.html": "v3\n" }, "v3");
    // The third deploy prunes release 1: when its [done] arrives, the removal of release 1 is still going on.
    const response = await post(server.url, { secret: SECRET });
    const decoder = new TextDecoder();
    let text = "";
    let stillThere: boolean | undefined;
    for await (const chunk of response.body!) {
      text += decoder.decode(chunk, { stream: true });
      if (stillThere === undefined && text.includes("[done]")) stillThere = existsSync(join(s.site, "releases", id1));
    }
    expect(lastLine(text)).toBe("[done] ok=true exitCode=0");
    expect(stillThere).toBe(true);
    const record = await waitFor(() => {
      const json = recordOf(s.cwd, text);
      return json.result.release.pruned ? json : undefined;
    }, "the record to name the pruned release");
    expect(record.result.release.pruned).toEqual([id1]);
    expect(existsSync(join(s.site, "releases", id1))).toBe(false);
  });
});
