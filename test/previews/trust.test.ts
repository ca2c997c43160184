/**
 * docs/previews.md "Events" and "Trust": a pull request's event is a code-execution boundary. Each refusal is
 * answered 200 `[skipped] <reason>`, runs nothing, makes no deploy record and no preview, and is listed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  logFiles,
  makeRepo,
  runCli,
  SECRET,
  startServer,
  tempDir,
  waitFor,
  type RunningServer,
} from "../_support/helpers.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";
import { makeKeys, noSshKeygen } from "../_support/signing.ts";
import {
  deliverPullRequest,
  giteaPullRequest,
  githubPullRequest,
  previewOf,
  previewState,
  previewsKey,
  pushPullHead,
} from "../_support/pull-requests.ts";

const servers: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

async function serve(previews: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const repo = makeRepo();
  const cwd = tempDir();
  const key = previewsKey(cwd, previews);
  writeServiceYaml(cwd, {
    secret: SECRET,
    repoPath: repo.clone,
    runScript: "echo production",
    path: "/hook",
    previews: key,
    ...extra,
  });
  const server = await startServer(cwd);
  servers.push(server);
  return { repo, cwd, server, path: key.path as string };
}

/** A pull request's head pushed to `refs/pull/<n>/head` of the remote. */
const pr = pushPullHead;

async function refused(response: Response, cwd: string, path: string, number: number, reason: string, text: string) {
  expect(response.status).toBe(200);
  const body = await response.text();
  expect(body).toStartWith("[skipped] ");
  expect(body).toContain(text);
  const state = previewState(cwd);
  expect(state.previews.find((p) => p.number === number)).toBeUndefined();
  expect(state.refusals.at(-1)).toMatchObject({ number, reason });
  expect(existsSync(join(path, `pr-${number}`))).toBe(false);
  expect(logFiles(cwd)).toEqual([]);
}

describe("previews: events and trust", () => {
  test("an open PR of a member is built from its pull ref into <path>/pr-<n>", async () => {
    const { repo, cwd, server, path } = await serve();
    const head = pr(repo, 7);
    const response = await deliverPullRequest(server, githubPullRequest(7, head));
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("[preview] pull request #7: building");
    const preview = await waitFor(() => previewOf(cwd, 7, ["running", "failed"]), "the preview");
    expect(preview).toMatchObject({
      status: "running",
      head,
      port: 41000,
      url: "https://pr-7.preview.example.com",
      slug: "feature-thing",
    });
    expect(await Bun.file(join(path, "pr-7", "built.txt")).text()).toBe("built-7\n");
    expect(await Bun.file(join(path, "pr-7", "app.txt")).text()).toBe("pr 7\n");
    // No deploy record of production: a preview is not a deploy of the app.
    expect(logFiles(cwd)).toEqual([]);
  });

  test("a fork's PR is refused unless fromForks; the refusal is in the audit trail", async () => {
    const { repo, cwd, server, path } = await serve();
    const head = pr(repo, 8);
    const response = await deliverPullRequest(server, githubPullRequest(8, head, { fork: true, sender: "mallory" }));
    await refused(response, cwd, path, 8, "fork", "pull request #8 comes from a fork; previews.fromForks is off");
    const audit = await runCli(["audit", "--json"], { cwd });
    expect(JSON.parse(audit.stdout)).toContainEqual(
      expect.objectContaining({ actor: "webhook:mallory", action: "preview refused", target: "#8", reason: "fork" }),
    );
  });

  test("without previews.user the start warns that a pull request's code can read the server's secrets", async () => {
    const { server } = await serve();
    await waitFor(
      () => (server.stdout.text + server.stderr.text).includes("previews run as the service's user"),
      "the warning",
    );
  });

  test("paths: a PR that touches none of them is refused; one that does is built", async () => {
    const { repo, cwd, server, path } = await serve({}, { paths: ["src/**"] });
    const docs = pr(repo, 18, { "README.md": "docs only\n" });
    const response = await deliverPullRequest(server, githubPullRequest(18, docs));
    await refused(response, cwd, path, 18, "paths", "pull request #18: it touches no file of paths (src/**)");
    const code = pr(repo, 19, { "src/app.txt": "code\n" });
    const built = await deliverPullRequest(server, githubPullRequest(19, code));
    expect(await built.text()).toContain("[preview] pull request #19: building");
    await waitFor(() => previewOf(cwd, 19, ["running"]), "the preview of the code change");
  });

  test.skipIf(noSshKeygen)("allowedSigners: an unsigned head is refused", async () => {
    const keys = makeKeys();
    const { repo, cwd, server, path } = await serve({}, { allowedSigners: keys.allowed });
    const head = pr(repo, 20);
    const response = await deliverPullRequest(server, githubPullRequest(20, head));
    await refused(response, cwd, path, 20, "signature", `commit ${head.slice(0, 12)} refused`);
  });

  test("an author whose association is not in authors is refused", async () => {
    const { repo, cwd, server, path } = await serve();
    const head = pr(repo, 9);
    const response = await deliverPullRequest(
      server,
      githubPullRequest(9, head, { association: "CONTRIBUTOR", author: "eve" }),
    );
    await refused(response, cwd, path, 9, "author", "pull request #9: author eve is not among previews.authors");
  });

  test("without a status token a Gitea PR is undecidable and refused; user:<login> decides it", async () => {
    const { repo, cwd, server, path } = await serve({ authors: ["MEMBER", "user:bob"] });
    const head = pr(repo, 10);
    const response = await deliverPullRequest(server, giteaPullRequest(10, head, { author: "eve" }), "gitea");
    await refused(response, cwd, path, 10, "undecidable", "cannot tell whether author eve is among previews.authors");
    const ok = await deliverPullRequest(server, giteaPullRequest(10, head, { author: "bob" }), "gitea");
    expect(await ok.text()).toContain("[preview] pull request #10: building");
    await waitFor(() => previewOf(cwd, 10, ["running"]), "the preview of bob's PR");
  });

  test("a PR into another base than branch is refused", async () => {
    const { repo, cwd, server, path } = await serve({}, { branch: "main" });
    const head = pr(repo, 11);
    const response = await deliverPullRequest(server, githubPullRequest(11, head, { base: "develop" }));
    await refused(
      response,
      cwd,
      path,
      11,
      "base",
      "pull request #11 targets develop; previews are of pull requests into main",
    );
  });

  test("a head that differs from the fetched pull ref is refused with both commits", async () => {
    const { repo, cwd, server, path } = await serve();
    const fetched = pr(repo, 12);
    const claimed = "1".repeat(40);
    const response = await deliverPullRequest(server, githubPullRequest(12, claimed));
    await refused(
      response,
      cwd,
      path,
      12,
      "head",
      `fetched ${fetched} from refs/pull/12/head, but the event names ${claimed}`,
    );
  });

  test("max reached: refused, naming the previews that hold the places", async () => {
    const { repo, cwd, server, path } = await serve({ max: 1 });
    const first = pr(repo, 13);
    await deliverPullRequest(server, githubPullRequest(13, first, { branch: "a" }));
    await waitFor(() => previewOf(cwd, 13, ["running"]), "the first preview");
    const second = pr(repo, 14);
    const response = await deliverPullRequest(server, githubPullRequest(14, second, { branch: "b" }));
    await refused(response, cwd, path, 14, "max", "previews.max (1) reached, held by #13");
  });

  test("a paused app refuses previews", async () => {
    const { repo, cwd, server, path } = await serve();
    const paused = await runCli(["pause", "--reason", "maintenance"], { cwd });
    expect(paused.code).toBe(0);
    const head = pr(repo, 15);
    const response = await deliverPullRequest(server, githubPullRequest(15, head));
    await refused(response, cwd, path, 15, "paused", "previews are paused: maintenance");
  });

  test("with label: only a labelled head deploys; a later push by an outsider stays at the approved commit", async () => {
    const { repo, cwd, server, path } = await serve({ label: "preview" });
    const head = pr(repo, 16);
    await refused(
      await deliverPullRequest(server, githubPullRequest(16, head)),
      cwd,
      path,
      16,
      "label",
      "pull request #16 needs the `preview` label from one of previews.authors",
    );
    const labelled = await deliverPullRequest(
      server,
      githubPullRequest(16, head, { action: "labeled", label: "preview", labels: ["preview"], sender: "carol" }),
    );
    // carol's association is unknown without a forge to ask: she is not the author.
    expect(await labelled.text()).toContain("[skipped]");
    const byAuthor = await deliverPullRequest(
      server,
      githubPullRequest(16, head, { action: "labeled", label: "preview", labels: ["preview"] }),
    );
    expect(await byAuthor.text()).toContain("[preview] pull request #16: building");
    await waitFor(() => previewOf(cwd, 16, ["running"]), "the approved preview");
    const later = pr(repo, 16, { "app.txt": "sneaky\n" });
    const pushed = await deliverPullRequest(
      server,
      githubPullRequest(16, later, { action: "synchronize", sender: "mallory", labels: ["preview"] }),
    );
    const text = await pushed.text();
    expect(text).toStartWith("[skipped] ");
    expect(text).toContain("new commits need the `preview` label again");
    const kept = previewState(cwd).previews.find((p) => p.number === 16);
    expect(kept).toMatchObject({ head, approvedHead: head, status: "running" });
    expect(await Bun.file(join(path, "pr-16", "app.txt")).text()).toBe("pr 16\n");
  });

  test("GitHub's deployment event of a preview environment is skipped, not counted as a refusal", async () => {
    const { cwd, server } = await serve();
    const response = await deliverPullRequest(
      server,
      {
        action: "created",
        deployment: { id: 1, sha: "a".repeat(40), environment: "preview/pr-7" },
        sender: { login: "bot" },
      },
      "github",
      "deployment",
    );
    expect(await response.text()).toBe("[skipped] preview deployment\n");
    expect(previewState(cwd).refusals).toEqual([]);
    expect(logFiles(cwd)).toEqual([]);
  });

  test("without previews, a pull_request delivery is answered as the spec says: it deploys", async () => {
    const repo = makeRepo();
    const cwd = tempDir();
    writeServiceYaml(cwd, { secret: SECRET, repoPath: repo.clone, runScript: "echo production", path: "/hook" });
    const server = await startServer(cwd);
    servers.push(server);
    const response = await deliverPullRequest(server, githubPullRequest(7, "a".repeat(40)));
    expect(await response.text()).toContain("[done] ok=true exitCode=0");
    expect(existsSync(join(cwd, ".service", "previews"))).toBe(false);
  });

  test("previews added to the config of a running server apply from the next delivery", async () => {
    const repo = makeRepo();
    const cwd = tempDir();
    const base = { secret: SECRET, repoPath: repo.clone, runScript: "echo production", path: "/hook" };
    writeServiceYaml(cwd, base);
    const server = await startServer(cwd);
    servers.push(server);
    writeServiceYaml(cwd, { ...base, previews: previewsKey(cwd) });
    const head = pr(repo, 22);
    const response = await deliverPullRequest(server, githubPullRequest(22, head));
    expect(await response.text()).toContain("[preview] pull request #22: building");
    await waitFor(() => previewOf(cwd, 22, ["running"]), "the preview");
  });

  test("a title and a branch from outside go to the script as variables, never into a shell's text", async () => {
    const { repo, cwd, server, path } = await serve({
      runScript: 'printf "%s|%s" "$SERVICE_PREVIEW_TITLE" "$SERVICE_PREVIEW_BRANCH" > seen.txt',
    });
    const head = pr(repo, 17);
    const evil = "$(touch pwned)`touch pwned2`;touch pwned3";
    await deliverPullRequest(server, githubPullRequest(17, head, { title: evil, branch: `x;${evil}` }));
    const preview = await waitFor(() => previewOf(cwd, 17, ["running", "failed"]), "the preview");
    expect(preview.status).toBe("running");
    expect(preview.slug).toBe("x-touch-pwned-touch-pwned2-touch-pwned3");
    expect(await Bun.file(join(path, "pr-17", "seen.txt")).text()).toBe(`${evil}|x;${evil}`);
    for (const file of ["pwned", "pwned2", "pwned3"]) expect(existsSync(join(path, "pr-17", file))).toBe(false);
  });
});
