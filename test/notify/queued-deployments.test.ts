/**
 * The service's own GitHub Deployments (`status.deployments: true`) while a deploy waits in the queue: a Deployment
 * `queued` on the commit its branch is at, the same one carried on when that commit is pulled, replaced when the
 * branch moved meanwhile, ended when the deploy is cancelled before it ran. GitHub is played by a local server
 * that checks each request against its Deployments API (test/_support/deployments-api.ts).
 */
import { describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, post, runCli, SECRET, startServer, tempDir, waitFor } from "../_support/helpers.ts";
import { deployRecords, writeServiceYaml } from "../_support/webhook-fixtures.ts";
import { DEPLOY_TOKEN, deploymentsApi, OWNER_REPO } from "../_support/deployments-api.ts";

const SITE = "https://web.example.com";

/** A server whose deploys wait while the `hold` file exists; its own Deployments go to `api`. */
async function held() {
  const repo = makeRepo();
  const api = deploymentsApi(repo.remote);
  const cwd = tempDir();
  const hold = join(tempDir(), "hold");
  writeFileSync(hold, "");
  writeServiceYaml(cwd, {
    repoPath: repo.clone,
    runScript: `while [ -f '${hold}' ]; do sleep 0.05; done`,
    secret: SECRET,
    hostname: "127.0.0.1",
    branch: "main",
    environmentUrl: SITE,
    status: { provider: "github", repo: OWNER_REPO, apiUrl: api.url, token: DEPLOY_TOKEN, deployments: true },
  });
  const server = await startServer(cwd);
  const deploy = (query = "?format=json") =>
    post(`${server.url}/${query}`, { headers: { "x-service-secret": SECRET } }).then((res) => res.json());
  const statesOf = (id: number | undefined) => api.statuses.filter((s) => s.id === id).map((s) => s.state);
  /** The first deploy runs (held); the second waits in the queue until its Deployment says `queued`. */
  const queueTwo = async (second = "?format=json") => {
    const running = deploy();
    await waitFor(() => statesOf(api.created[0]?.id).includes("in_progress"), "the first deploy to run");
    const waiting = deploy(second);
    await waitFor(() => statesOf(api.created[1]?.id).includes("queued"), "the waiting deploy's Deployment queued");
    return { running, waiting };
  };
  return {
    repo,
    api,
    cwd,
    server,
    hold,
    statesOf,
    queueTwo,
    [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
  };
}

const outcomes = (cwd: string, id: string) =>
  (deployRecords(cwd).find((r) => r.id === id)?.outbound ?? []).map((o: any) => [o.what, o.ok]);

describe("status.deployments: a deploy that waits in the queue", () => {
  test("gets a Deployment queued on its branch's commit, and that same Deployment goes in_progress and success", async () => {
    await using s = await held();
    const tip = s.repo.push({ "v.txt": "2\n" });
    const { running, waiting } = await s.queueTwo();
    const queued = s.api.created[1]!;
    expect(queued).toMatchObject({ asked: "main", ref: tip, environment: "production" });
    expect(s.api.statuses.find((x) => x.id === queued.id)?.body).toMatchObject({
      state: "queued",
      environment: "production",
      environment_url: SITE,
    });
    rmSync(s.hold);
    const [a, b] = await Promise.all([running, waiting]);
    expect([a.ok, b.ok]).toEqual([true, true]);
    await waitFor(() => s.statesOf(queued.id).length === 3, "the queued Deployment's final status");
    expect(s.statesOf(queued.id)).toEqual(["queued", "in_progress", "success"]);
    // No second Deployment for the commit it named.
    expect(s.api.created).toHaveLength(2);
    await waitFor(() => outcomes(s.cwd, b.id).length >= 5, "the outcomes in the record");
    expect(outcomes(s.cwd, b.id).slice(0, 2)).toEqual([
      ["deployment", true],
      ["deployment queued", true],
    ]);
    expect(s.api.refused).toEqual([]);
  });

  test("whose branch moved while it waited: the queued Deployment ends inactive and the commit pulled gets its own", async () => {
    await using s = await held();
    const { running, waiting } = await s.queueTwo();
    const queued = s.api.created[1]!;
    const moved = s.repo.push({ "v.txt": "3\n" });
    expect(queued.ref).not.toBe(moved);
    rmSync(s.hold);
    const [a, b] = await Promise.all([running, waiting]);
    expect([a.ok, b.ok]).toEqual([true, true]);
    await waitFor(() => s.statesOf(s.api.created[2]?.id).length === 2, "the pulled commit's Deployment's statuses");
    expect(s.api.created[2]).toMatchObject({ ref: moved });
    expect(s.statesOf(queued.id)).toEqual(["queued", "inactive"]);
    expect(s.statesOf(s.api.created[2]!.id)).toEqual(["in_progress", "success"]);
    expect(s.api.refused).toEqual([]);
  });

  test("cancelled before it ran: its queued Deployment ends with error, and no other is created", async () => {
    await using s = await held();
    const { running, waiting } = await s.queueTwo("?ack=1&format=json");
    const { id } = await waiting;
    const queued = s.api.created[1]!;
    expect((await runCli(["cancel", id], { cwd: s.cwd })).code).toBe(0);
    await waitFor(() => s.statesOf(queued.id).length === 2, "the queued Deployment's final status");
    expect(s.statesOf(queued.id)).toEqual(["queued", "error"]);
    rmSync(s.hold);
    expect((await running).ok).toBe(true);
    expect(s.api.created).toHaveLength(2);
    expect(s.api.refused).toEqual([]);
  });
});
