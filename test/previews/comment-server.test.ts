/**
 * docs/previews.md "The comment": with `previews.comment`, one comment on the pull request, made at its first preview
 * and edited in place after each build, found again after a restart of the service: never a second one. Through the
 * server, on GitHub's API played locally (preview-forge.ts), each request checked.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { makeRepo, SECRET, startServer, tempDir, waitFor, type RunningServer } from "../_support/helpers.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";
import {
  deliverPullRequest,
  githubPullRequest,
  previewOf,
  previewsKey,
  pushPullHead,
} from "../_support/pull-requests.ts";
import { FORGE_TOKEN, previewForge, REPO } from "../_support/preview-forge.ts";

const servers: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

describe("previews: the one comment, through the server", () => {
  test("three pushes and a restart of the service leave one comment, naming the last build", async () => {
    const forge = previewForge();
    const repo = makeRepo();
    const cwd = tempDir();
    writeServiceYaml(cwd, {
      secret: SECRET,
      repoPath: repo.clone,
      runScript: "echo production",
      path: "/hook",
      status: { provider: "github", apiUrl: forge.url, repo: REPO, token: FORGE_TOKEN },
      previews: previewsKey(cwd, { comment: true }),
    });
    const start = async () => {
      const server = await startServer(cwd);
      servers.push(server);
      return server;
    };
    const thread = () => forge.comments.get("github#21") ?? [];
    const built = async (server: RunningServer, n: number, action: string) => {
      const head = pushPullHead(repo, 21, { "app.txt": `push ${n}\n` });
      const answer = await deliverPullRequest(server, githubPullRequest(21, head, { action }));
      expect(answer.status).toBe(200);
      await waitFor(() => previewOf(cwd, 21, ["running"])?.head === head || undefined, `build ${n}`);
      await waitFor(() => thread().some((c) => c.body.includes(head.slice(0, 12))) || undefined, `comment ${n}`);
      return head;
    };

    let server = await start();
    await built(server, 1, "opened");
    await built(server, 2, "synchronize");
    await server.stop();
    server = await start();
    const last = await built(server, 3, "synchronize");

    expect(thread()).toHaveLength(1);
    expect(thread()[0]!.body).toContain(last.slice(0, 12));
    expect(forge.calls.filter((c) => c.call.startsWith("POST") && c.call.endsWith("/comments"))).toHaveLength(1);
    expect(forge.refused).toEqual([]);
  });
});
