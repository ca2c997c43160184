/**
 * The releases as the operator sees them (docs/releases.md "Status and the dashboard"): `service status` (and
 * `--json`), `GET /api/apps`, and the admin API's rollback to a kept release by its id, through the queue.
 */
import { describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, startAdmin } from "../_support/admin-helpers.ts";
import { runCli, waitFor } from "../_support/helpers.ts";
import { counted, currentRelease, deployStreamed, makeReleasesSite } from "../_support/release-helpers.ts";

const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };

describe('status of the releases (docs/releases.md "Status and the dashboard")', () => {
  test("service status, its --json and GET /api/apps show the live release and the kept ones with their commits and deploy ids; the API switches back to one by its id", async () => {
    const s = makeReleasesSite();
    const { server, admin } = await startAdmin(s.cwd, s.env);
    await using _ = server;
    const one = await deployStreamed(server.url, s.cwd);
    const second = s.repo.push({ "public/index.html": "v2\n" }, "v2");
    const two = await deployStreamed(server.url, s.cwd);
    const [r1, r2] = [one.result.release, two.result.release];

    const text = await runCli(["status"], { cwd: s.cwd, env: s.env });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`  release: ${r2.id} (live)`);
    expect(text.stdout).toContain(`  kept:    2 in ${s.site}/releases (keep 5)`);
    expect(text.stdout).toContain(`* ${r2.id}  ${second.slice(0, 12)}  deploy ${two.result.log.id.slice(0, 8)}`);
    expect(text.stdout).toContain(`  ${r1.id}  ${r1.commit.slice(0, 12)}  deploy ${one.result.log.id.slice(0, 8)}`);

    const json = JSON.parse((await runCli(["status", "--json"], { cwd: s.cwd, env: s.env })).stdout);
    const view = {
      path: s.site,
      keep: 5,
      live: {
        id: r2.id,
        path: r2.path,
        commit: second,
        deployId: two.result.log.id,
        createdAt: expect.any(String),
        live: true,
      },
      kept: [
        { id: r2.id, commit: second, deployId: two.result.log.id, live: true },
        { id: r1.id, commit: r1.commit, deployId: one.result.log.id, live: false },
      ],
    };
    expect(json[0].releases).toMatchObject(view);

    const apps = await (await fetch(`${admin}/api/apps`, { headers: auth })).json();
    expect(apps.apps[0].releases).toMatchObject(view);

    // The dashboard's "switch back": a rollback to that release, through the queue, with no build.
    const res = await fetch(`${admin}/api/apps/default/rollback`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ to: r1.id }),
    });
    expect(res.status).toBe(200);
    const ack = await res.json();
    const record = await waitFor(async () => {
      const body = await (await fetch(`${admin}/api/deploys/${ack.id}`, { headers: auth })).json();
      return body.status === "done" ? body : undefined;
    }, "the switch back to end");
    expect(record.trigger).toBe("rollback");
    expect(record.result).toMatchObject({ ok: true, target: { release: r1.id }, release: { id: r1.id, built: false } });
    expect(currentRelease(s.site)).toBe(r1.id);
    expect(counted(s.builds)).toEqual([r1.id, r2.id]);

    // A release that is not kept is a 409, nothing queued.
    const gone = await fetch(`${admin}/api/apps/default/rollback`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ to: "20200101T000000Z-0123456789ab" }),
    });
    expect(gone.status).toBe(409);
    expect((await gone.json()).message).toBe(
      `release 20200101T000000Z-0123456789ab is not a kept release of ${s.site}/releases`,
    );
  });
});
