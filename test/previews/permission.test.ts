/**
 * docs/previews.md "Trust": for an event that sends no association (a later push, Gitea), the forge is asked who the
 * sender is: `GET /repos/{owner}/{repo}/collaborators/{login}/permission` (GitHub, Gitea/Forgejo), with the `status`
 * token. A contract test: the local forge checks each request against the documented call.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { makeRepo, SECRET, startServer, tempDir, waitFor, type RunningServer } from "../_support/helpers.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";
import {
  deliverPullRequest,
  giteaPullRequest,
  githubPullRequest,
  previewOf,
  previewState,
  previewsKey,
  pushPullHead,
} from "../_support/pull-requests.ts";

const TOKEN = "forge-token-previews-0123456789";
const servers: { stop(): unknown }[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

/** A forge that answers each login's permission as `permissions` says, and records what it was asked. */
function forge(provider: "github" | "gitea", permissions: Record<string, string>, pulls: Record<number, string> = {}) {
  const asked: string[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      const url = new URL(request.url);
      const auth = request.headers.get("authorization");
      const expected = provider === "github" ? `Bearer ${TOKEN}` : `token ${TOKEN}`;
      if (request.method !== "GET" || auth !== expected) return new Response("bad request", { status: 400 });
      if (provider === "github" && request.headers.get("accept") !== "application/vnd.github+json")
        return new Response("bad accept", { status: 400 });
      const pull = /^\/repos\/acme\/web\/pulls\/(\d+)$/.exec(url.pathname);
      if (pull) {
        asked.push(`pulls/${pull[1]}`);
        const state = pulls[Number(pull[1])];
        return state ? Response.json({ number: Number(pull[1]), state }) : Response.json({}, { status: 404 });
      }
      const match = /^\/repos\/acme\/web\/collaborators\/([^/]+)\/permission$/.exec(url.pathname);
      if (!match) return new Response("not found", { status: 404 });
      asked.push(decodeURIComponent(match[1]!));
      const permission = permissions[decodeURIComponent(match[1]!)];
      if (!permission) return Response.json({ message: "Not Found" }, { status: 404 });
      return Response.json({ permission, user: { login: match[1] } });
    },
  });
  servers.push(server);
  return { apiUrl: `http://127.0.0.1:${server.port}`, asked };
}

async function serve(
  provider: "github" | "gitea",
  permissions: Record<string, string>,
  pulls: Record<number, string> = {},
) {
  const api = forge(provider, permissions, pulls);
  const repo = makeRepo();
  const cwd = tempDir();
  writeServiceYaml(cwd, {
    secret: SECRET,
    repoPath: repo.clone,
    runScript: "echo production",
    path: "/hook",
    status: { provider, apiUrl: api.apiUrl, repo: "acme/web", token: TOKEN },
    previews: previewsKey(cwd),
  });
  const server: RunningServer = await startServer(cwd);
  servers.push(server);
  const restart = async () => {
    await server.stop();
    const again = await startServer(cwd);
    servers.push(again);
    return again;
  };
  return { repo, cwd, server, api, restart };
}

describe("previews: the forge decides who a sender is", () => {
  test("GitHub: a later push by a collaborator with write deploys; one with read is refused", async () => {
    const { repo, cwd, server, api } = await serve("github", { bob: "write", rita: "read" });
    const first = pushPullHead(repo, 3);
    await deliverPullRequest(server, githubPullRequest(3, first));
    await waitFor(() => previewOf(cwd, 3, ["running"]), "the first build");
    const second = pushPullHead(repo, 3, { "app.txt": "two\n" });
    const byBob = await deliverPullRequest(
      server,
      githubPullRequest(3, second, { action: "synchronize", sender: "bob" }),
    );
    expect(await byBob.text()).toContain("[preview] pull request #3: building");
    await waitFor(() => previewOf(cwd, 3, ["running"])?.head === second, "the second build");
    const third = pushPullHead(repo, 3, { "app.txt": "three\n" });
    const byRita = await deliverPullRequest(
      server,
      githubPullRequest(3, third, { action: "synchronize", sender: "rita" }),
    );
    expect(await byRita.text()).toContain("[skipped] pull request #3: pusher rita is not among previews.authors");
    expect(api.asked).toEqual(["bob", "rita"]);
    expect(previewState(cwd).previews[0]).toMatchObject({ head: second });
  });

  test("Gitea: the owner passes as OWNER, a stranger (404) is refused", async () => {
    const { repo, cwd, server, api } = await serve("gitea", { olga: "owner" });
    const head = pushPullHead(repo, 4);
    const stranger = await deliverPullRequest(server, giteaPullRequest(4, head, { author: "sam" }), "gitea");
    expect(await stranger.text()).toContain("[skipped] pull request #4: author sam is not among previews.authors");
    const owner = await deliverPullRequest(server, giteaPullRequest(4, head, { author: "olga" }), "gitea");
    expect(await owner.text()).toContain("[preview] pull request #4: building");
    await waitFor(() => previewOf(cwd, 4, ["running"]), "the owner's preview");
    expect(api.asked).toEqual(["sam", "olga"]);
  });

  test("at start, a preview whose pull request closed while the service was down is torn down", async () => {
    const pulls: Record<number, string> = { 5: "open", 6: "open" };
    const { repo, cwd, server, api, restart } = await serve("github", {}, pulls);
    for (const n of [5, 6]) {
      await deliverPullRequest(server, githubPullRequest(n, pushPullHead(repo, n)));
      await waitFor(() => previewOf(cwd, n, ["running"]), `the preview of #${n}`);
    }
    pulls[5] = "closed";
    await restart();
    await waitFor(() => previewState(cwd).previews.every((p) => p.number !== 5), "the teardown of #5");
    expect(previewState(cwd).previews.map((p) => p.number)).toEqual([6]);
    expect(api.asked).toContain("pulls/5");
    expect(api.asked).toContain("pulls/6");
  });
});
