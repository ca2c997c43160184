/**
 * Catch-up replays the requests themselves, decided again (docs/deploy-control.md "Replay"): the approved commit of a
 * deployment event, never the branch's tip in its place; `paths` and skip markers asked again; a refusal by a signature
 * stays final; a commit a force-push removed, or one live already, is superseded. The freeze ends by an edit of the
 * config file (read at every look), the pause by `service resume`: the tests wait for records, never for a time.
 */
import { describe, expect, test } from "bun:test";
import { makeKeys, noSshKeygen, pushSigned } from "../_support/signing.ts";
import {
  git,
  hasEnded,
  lastLine,
  makeRepo,
  runCli,
  SECRET,
  startServer,
  tempDir,
  waitFor,
} from "../_support/helpers.ts";
import { ADMIN_TOKEN } from "../_support/admin-helpers.ts";
import { BOT, deliver, deploymentEvent } from "../_support/deployment-events.ts";
import { DEPLOY_TOKEN, deploymentsApi, OWNER_REPO } from "../_support/deployments-api.ts";
import { deployRecords, postAs, writeServiceYaml } from "../_support/webhook-fixtures.ts";
import { readAudit } from "../../src/audit/read.ts";
import { auditDir } from "../../src/audit/trail.ts";

/** A freeze window from a minute ago to an hour ahead. */
const FREEZE = [
  {
    from: `${new Date(Date.now() - 60_000).toISOString().slice(0, 19)}Z`,
    to: `${new Date(Date.now() + 3_600_000).toISOString().slice(0, 19)}Z`,
    timeZone: "UTC",
    reason: "release freeze",
  },
];

/** A push delivery as a forge sends it: the branch, the commit pushed, who pushed. */
const pushBody = (after: string, pusher: string, message = "change") =>
  JSON.stringify({ ref: "refs/heads/main", after, pusher: { name: pusher }, head_commit: { id: after, message } });

/** A push to the server at `url` (to the app `app`: its host and path). */
const pushTo = (url: string, after: string, pusher: string, message?: string, app?: string) =>
  postAs(url, app && `${app}.example`, app ? `/${app}` : "/", {
    secret: SECRET,
    headers: { "content-type": "application/json" },
    body: pushBody(after, pusher, message),
  });

const ended = (cwd: string, trigger: string) =>
  deployRecords(cwd).filter((r) => r.trigger === trigger && hasEnded(r.status));

/** Waits until `count` records of `trigger` have ended; returns them. */
const endedRecords = (cwd: string, trigger: string, count = 1) =>
  waitFor(() => {
    const records = ended(cwd, trigger);
    return records.length >= count ? records : undefined;
  }, `${count} ${trigger} record(s)`);

describe("catch-up replays the requests, decided again", () => {
  const api = deploymentsApi();

  test("after a freeze, the approved deployment's commit deploys and is reported to its deployment; the unapproved tip does not", async () => {
    const repo = makeRepo();
    const approved = repo.push({ "v.txt": "2\n" }, "reviewed");
    const cwd = tempDir();
    const config = {
      repoPath: repo.clone,
      runScript: "true",
      secret: SECRET,
      hostname: "127.0.0.1",
      path: "/hook",
      branch: "main",
      status: { provider: "github", repo: OWNER_REPO, apiUrl: api.url, token: DEPLOY_TOKEN },
      deploymentEvents: true,
      deploymentCreators: [BOT],
      catchUp: true,
    };
    writeServiceYaml(cwd, { ...config, freeze: FREEZE });
    await using server = await startServer(cwd, { SERVICE_ADMIN_PORT: "0", SERVICE_ADMIN_TOKEN: ADMIN_TOKEN });
    const states = () => api.statuses.filter((s) => s.id === 61).map((s) => s.state);
    const answer = await (await deliver(server, deploymentEvent(61, approved))).text();
    expect(answer).toContain("[skipped] frozen until");
    // Held, not ended: GitHub shows it waits for the end of the freeze.
    await waitFor(() => states().includes("queued"), "deployment 61 queued");
    const unapproved = repo.push({ "v.txt": "3\n" }, "not reviewed");
    writeServiceYaml(cwd, config);
    const [record] = await endedRecords(cwd, "catch-up");
    expect(record).toMatchObject({ status: "done", actor: BOT, deployment: { id: 61 } });
    expect(record.result.ok).toBe(true);
    expect(repo.head()).toBe(approved);
    await waitFor(() => states().includes("success"), "deployment 61's success");
    expect(states()).toEqual(["queued", "in_progress", "success"]);
    expect(deployRecords(cwd).some((r) => r.result?.commit?.sha === unapproved)).toBe(false);
  });

  test("after a freeze, an app of a monorepo whose paths the push did not touch is superseded; the one it touched deploys", async () => {
    const repo = makeRepo({ "web/index.html": "1\n", "api/main.go": "1\n" });
    const cwd = tempDir();
    const app = (name: string) => ({
      name,
      host: `${name}.example`,
      path: `/${name}`,
      repoPath: repo.clone,
      runScript: `echo ${name}`,
      secret: SECRET,
      paths: [`${name}/**`],
      catchUp: true,
    });
    const config = { hostname: "127.0.0.1", apps: [app("web"), app("api")] };
    writeServiceYaml(cwd, config);
    await using server = await startServer(cwd);
    // Both deployed once: each app's live commit is on record.
    const initial = repo.head();
    for (const name of ["web", "api"])
      expect(lastLine(await (await pushTo(server.url, initial, "ops", "initial", name)).text())).toBe(
        "[done] ok=true exitCode=0",
      );
    writeServiceYaml(cwd, { ...config, freeze: FREEZE });
    const pushed = repo.push({ "web/index.html": "2\n" }, "web only");
    for (const name of ["web", "api"])
      expect(await (await pushTo(server.url, pushed, "alice", "web only", name)).text()).toContain("[skipped] frozen");
    writeServiceYaml(cwd, config);
    const records = await endedRecords(cwd, "catch-up", 2);
    const of = (name: string) => records.find((r) => r.app === name);
    expect(of("web")).toMatchObject({ status: "done", actor: "alice" });
    expect(of("api")).toMatchObject({ status: "superseded", actor: "alice" });
    expect(of("api").reason).toContain("no change under api/**");
    expect(repo.head()).toBe(pushed);
  });

  test("a push whose tip says [skip deploy], refused by a pause, is superseded at the resume", async () => {
    const repo = makeRepo();
    const env = {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "echo ran",
      SERVICE_CATCH_UP: "1",
      SERVICE_SKIP_MARKERS: "true",
    };
    await using server = await startServer(repo.clone, env);
    expect((await runCli(["pause"], { cwd: repo.clone, env })).code).toBe(0);
    const before = repo.head();
    const pushed = repo.push({ "docs.md": "x\n" }, "docs only [skip deploy]");
    expect(await (await pushTo(server.url, pushed, "bob", "docs only [skip deploy]")).text()).toContain("paused");
    expect((await runCli(["resume"], { cwd: repo.clone, env })).code).toBe(0);
    const [record] = await endedRecords(repo.clone, "catch-up");
    expect(record).toMatchObject({ status: "superseded", actor: "bob" });
    expect(record.reason).toContain("[skip deploy]");
    expect(repo.head()).toBe(before);
  });

  test.skipIf(noSshKeygen)(
    "a push refused for its signature stays refused; one refused by a pause deploys at the resume, alone",
    async () => {
      const repo = makeRepo();
      const keys = makeKeys();
      const env = {
        SERVICE_SECRET: SECRET,
        SERVICE_RUN_SCRIPT: "echo ran",
        SERVICE_CATCH_UP: "1",
        SERVICE_ALLOWED_SIGNERS: keys.allowed,
      };
      await using server = await startServer(repo.clone, env);
      const unsigned = pushSigned(repo, null, { "a.txt": "1\n" }, "unsigned");
      expect(await (await pushTo(server.url, unsigned, "mallory")).text()).toContain("[done] ok=false");
      const [refused] = deployRecords(repo.clone);
      expect(refused).toMatchObject({ status: "refused", actor: "mallory" });
      expect(refused.reason).toStartWith("signature:");
      expect(refused.result.target.sha).toBe(unsigned);
      expect((await runCli(["pause"], { cwd: repo.clone, env })).code).toBe(0);
      const signed = pushSigned(repo, keys.alice, { "b.txt": "1\n" }, "signed");
      expect(await (await pushTo(server.url, signed, "alice")).text()).toContain("paused");
      expect((await runCli(["resume"], { cwd: repo.clone, env })).code).toBe(0);
      const caught = await endedRecords(repo.clone, "catch-up");
      expect(caught).toHaveLength(1);
      expect(caught[0]).toMatchObject({ status: "done", actor: "alice" });
      expect(caught[0].result.commit.sha).toBe(signed);
      expect(deployRecords(repo.clone).filter((r) => r.actor === "mallory")).toHaveLength(1);
    },
  );

  test("a kept push whose commit a force-push removed, and one whose commit is live already, are superseded; nothing runs", async () => {
    const repo = makeRepo();
    const env = {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "echo ran",
      SERVICE_CATCH_UP: "1",
      SERVICE_BRANCH: "main",
    };
    await using server = await startServer(repo.clone, env);
    const before = repo.head();
    expect((await runCli(["pause"], { cwd: repo.clone, env })).code).toBe(0);
    const removed = repo.push({ "a.txt": "1\n" }, "to be force-pushed away");
    expect(await (await pushTo(server.url, removed, "carol")).text()).toContain("paused");
    const pusher = `${repo.dir}/pusher`;
    git(pusher, "reset", "--quiet", "--hard", before);
    git(pusher, "commit", "--quiet", "--allow-empty", "-m", "rewritten");
    git(pusher, "push", "--quiet", "--force", "origin", "main");
    expect((await runCli(["resume"], { cwd: repo.clone, env })).code).toBe(0);
    const [gone] = await endedRecords(repo.clone, "catch-up");
    expect(gone).toMatchObject({ status: "superseded", actor: "carol" });
    expect(gone.reason).toContain(`${removed.slice(0, 12)} is no longer on main`);
    expect(repo.head()).toBe(before);

    // A kept push whose commit went live by a forced deploy meanwhile.
    expect((await runCli(["pause"], { cwd: repo.clone, env })).code).toBe(0);
    const tip = repo.push({ "b.txt": "1\n" }, "live by force");
    expect(await (await pushTo(server.url, tip, "dave")).text()).toContain("paused");
    expect((await runCli(["deploy", "--force"], { cwd: repo.clone, env })).code).toBe(0);
    expect((await runCli(["resume"], { cwd: repo.clone, env })).code).toBe(0);
    const live = await waitFor(() => ended(repo.clone, "catch-up").find((r) => r.actor === "dave"), "dave's record");
    expect(live.status).toBe("superseded");
    expect(live.reason).toContain("is live already");
    expect(deployRecords(repo.clone).filter((r) => r.status === "done" && r.trigger === "catch-up")).toEqual([]);
  });

  test("service status says what waits for the catch-up; service catch-up --drop drops it, recorded cancelled, and the resume deploys nothing", async () => {
    const repo = makeRepo();
    const env = { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "echo ran", SERVICE_CATCH_UP: "1" };
    await using server = await startServer(repo.clone, env);
    expect((await runCli(["pause", "--reason", "maintenance"], { cwd: repo.clone, env })).code).toBe(0);
    const pushed = repo.push({ "a.txt": "1\n" });
    expect(await (await pushTo(server.url, pushed, "erin")).text()).toContain("paused");
    const status = await runCli(["status"], { cwd: repo.clone, env });
    expect(status.stdout).toContain("1 push by erin refused while paused: deploys at the resume");
    const json = JSON.parse((await runCli(["status", "--json"], { cwd: repo.clone, env })).stdout);
    expect(json[0].catchUp.requests).toMatchObject([{ trigger: "webhook", actor: "erin" }]);
    const dropped = await runCli(["catch-up", "--drop"], { cwd: repo.clone, env });
    expect(dropped.code).toBe(0);
    const [record] = deployRecords(repo.clone);
    expect(record).toMatchObject({ status: "cancelled", actor: "erin" });
    expect(record.cancel.by).toStartWith("cli:");
    expect(record.result.error).toContain("dropped by cli:");
    const line = readAudit(auditDir(repo.clone)).find((l) => l.action === "catch-up dropped");
    expect(line).toMatchObject({ deploy: record.id, outcome: "ok" });
    expect(line?.actor).toStartWith("cli:");
    expect((await runCli(["status", "--json"], { cwd: repo.clone, env })).stdout).toContain('"catchUp": null');
    expect((await runCli(["resume"], { cwd: repo.clone, env })).code).toBe(0);
    // Nothing is kept, so nothing deploys: the next push does.
    expect(lastLine(await (await pushTo(server.url, pushed, "erin")).text())).toBe("[done] ok=true exitCode=0");
    expect(deployRecords(repo.clone).filter((r) => r.trigger === "catch-up" && r.id !== record.id)).toEqual([]);
  });
});
