/**
 * docs/previews.md "Life cycle": the app's `limits` hold its previews' builds too, each in a cgroup of its own: a
 * build over `limits.memory` is killed by the kernel and the preview is `failed`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { cgroupsHere } from "../_support/limits.ts";
import { makeRepo, SECRET, startServer, tempDir, waitFor, type RunningServer } from "../_support/helpers.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";
import {
  deliverPullRequest,
  githubPullRequest,
  previewOf,
  previewsKey,
  pushPullHead,
} from "../_support/pull-requests.ts";

const usable = cgroupsHere();
const servers: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
});

describe("previews: limits", () => {
  test.skipIf(!usable)("a preview's build over limits.memory is killed and the preview is failed", async () => {
    const repo = makeRepo();
    const cwd = tempDir();
    writeServiceYaml(cwd, {
      secret: SECRET,
      repoPath: repo.clone,
      runScript: "echo production",
      path: "/hook",
      limits: { memory: "64M" },
      previews: previewsKey(cwd, {
        runScript: `python3 -c "b = [bytearray(8 << 20) for i in range(40)]; print('allocated')"`,
      }),
    });
    const server = await startServer(cwd);
    servers.push(server);
    const head = pushPullHead(repo, 51);
    await deliverPullRequest(server, githubPullRequest(51, head));
    const preview = await waitFor(() => previewOf(cwd, 51, ["running", "failed"]), "the build", 60_000);
    expect(preview.status).toBe("failed");
    expect(preview.reason).toContain("exited with 137");
  });
});
