/**
 * docs/previews.md "On the pull request": each forge is told of a preview through its documented API, checked
 * request by request by a local forge: a GitHub Deployment per build in a transient environment, Gitea's and
 * Bitbucket's commit status `preview`, GitLab's environment `review/pr-<iid>` with its deployments and status.
 * A forge that fails is a problem said, never a throw, and the token is never in it.
 */
import { describe, expect, test } from "bun:test";
import { reportPreview } from "../../src/previews/report.ts";
import { FORGE_TOKEN, previewForge, REPO } from "../_support/preview-forge.ts";
import { forgeTarget, HEAD, NEXT, previewOf, reportOf } from "../_support/preview-reports.ts";

const LOG = "https://deploy.example.com/deploys/d-1";

describe("GitHub: a Deployment per preview build", () => {
  test("building creates a transient, non-production Deployment on the head, in_progress; ok posts success with the URL", async () => {
    const forge = previewForge();
    const target = forgeTarget("github", forge.url);
    const building = await reportPreview(reportOf(target, previewOf("github"), "building", { logUrl: LOG }));
    expect(building.problems).toEqual([]);
    const id = building.keep.forgeDeploymentId;
    expect(id).toMatch(/^\d+$/);
    const ok = await reportPreview(
      reportOf(target, previewOf("github", { forgeDeploymentId: id, status: "running" }), "ok", { logUrl: LOG }),
    );
    expect(ok).toEqual({ keep: {}, problems: [] });
    expect(forge.refused).toEqual([]);
    const base = `/repos/${REPO}/deployments`;
    expect(forge.calls.map((c) => c.call)).toEqual([
      `POST ${base}`,
      `POST ${base}/${id}/statuses`,
      `POST ${base}/${id}/statuses`,
    ]);
    expect(forge.calls[0]!.body).toMatchObject({
      ref: HEAD,
      environment: "preview/pr-7",
      transient_environment: true,
      production_environment: false,
      auto_merge: false,
      required_contexts: [],
    });
    expect(forge.calls[1]!.body).toMatchObject({ state: "in_progress", log_url: LOG });
    expect(forge.calls[2]!.body).toMatchObject({
      state: "success",
      environment_url: "https://pr-7.preview.example.com",
      log_url: LOG,
    });
  });

  test("a failed build posts failure with the log; a new head's build makes the one before inactive; teardown makes it inactive", async () => {
    const forge = previewForge();
    const target = forgeTarget("github", forge.url);
    const first = await reportPreview(reportOf(target, previewOf("github"), "building"));
    const firstId = first.keep.forgeDeploymentId!;
    await reportPreview(
      reportOf(target, previewOf("github", { forgeDeploymentId: firstId }), "failed", {
        logUrl: LOG,
        reason: "exit 1",
      }),
    );
    const second = await reportPreview(
      reportOf(target, previewOf("github", { head: NEXT, forgeDeploymentId: firstId }), "building"),
    );
    const secondId = second.keep.forgeDeploymentId!;
    expect(secondId).not.toBe(firstId);
    const gone = await reportPreview(
      reportOf(target, previewOf("github", { head: NEXT, forgeDeploymentId: secondId }), "teardown"),
    );
    expect(gone.problems).toEqual([]);
    expect(forge.refused).toEqual([]);
    const states = forge.calls
      .filter((c) => c.call.endsWith("/statuses"))
      .map((c) => `${c.call.split("/").at(-2)} ${c.body.state}`);
    expect(states).toEqual([
      `${firstId} in_progress`,
      `${firstId} failure`,
      `${firstId} inactive`,
      `${secondId} in_progress`,
      `${secondId} inactive`,
    ]);
    expect(forge.calls[2]!.body).toMatchObject({ state: "failure", log_url: LOG });
    expect(String(forge.calls[2]!.body.description)).toContain("exit 1");
  });

  test("after a restart that lost the Deployment's id: ok makes one and keeps it; teardown finds the environment's", async () => {
    const forge = previewForge();
    const target = forgeTarget("github", forge.url);
    const ok = await reportPreview(reportOf(target, previewOf("github", { status: "running" }), "ok"));
    expect(ok.problems).toEqual([]);
    expect(ok.keep.forgeDeploymentId).toMatch(/^\d+$/);
    const gone = await reportPreview(reportOf(target, previewOf("github"), "teardown"));
    expect(gone.problems).toEqual([]);
    expect(forge.refused).toEqual([]);
    const base = `/repos/${REPO}/deployments`;
    expect(forge.calls.map((c) => `${c.call} ${c.body.state ?? ""}`.trim())).toEqual([
      `POST ${base}`,
      `POST ${base}/${ok.keep.forgeDeploymentId}/statuses success`,
      `GET ${base}`,
      `POST ${base}/${ok.keep.forgeDeploymentId}/statuses inactive`,
    ]);
  });

  test("GitHub refusing is a problem said without the token, never a throw", async () => {
    const forge = previewForge();
    forge.failing.add("POST /repos/");
    const reported = await reportPreview(reportOf(forgeTarget("github", forge.url), previewOf("github"), "building"));
    expect(reported.keep).toEqual({});
    expect(reported.problems).toHaveLength(1);
    expect(reported.problems[0]).toStartWith("GitHub deployment: 500");
    expect(reported.problems.join()).not.toContain(FORGE_TOKEN);
  });

  test("an API that cannot be reached is a problem said, never a throw", async () => {
    const target = { ...forgeTarget("github", "http://127.0.0.1:9"), apiUrl: "http://127.0.0.1:9" };
    const reported = await reportPreview(reportOf(target, previewOf("github"), "building"));
    expect(reported.problems[0]).toStartWith("GitHub deployment: network error");
  });
});

describe("Gitea and Bitbucket: the commit status preview on the head", () => {
  test("Gitea: pending while it builds, success with the preview's URL", async () => {
    const forge = previewForge();
    const target = forgeTarget("gitea", forge.url);
    expect((await reportPreview(reportOf(target, previewOf("gitea"), "building", { logUrl: LOG }))).problems).toEqual(
      [],
    );
    expect((await reportPreview(reportOf(target, previewOf("gitea"), "ok"))).problems).toEqual([]);
    expect(forge.refused).toEqual([]);
    expect(forge.calls.map((c) => [c.call, c.body.state, c.body.context, c.body.target_url])).toEqual([
      [`POST /api/v1/repos/${REPO}/statuses/${HEAD}`, "pending", "preview", LOG],
      [`POST /api/v1/repos/${REPO}/statuses/${HEAD}`, "success", "preview", "https://pr-7.preview.example.com"],
    ]);
  });

  test("Bitbucket: INPROGRESS, then SUCCESSFUL with the preview's URL, keyed preview; in multi-app mode preview/<app>", async () => {
    const forge = previewForge();
    const target = forgeTarget("bitbucket", forge.url);
    await reportPreview(reportOf(target, previewOf("bitbucket"), "building"));
    await reportPreview(reportOf(target, previewOf("bitbucket", { app: "api" }), "ok"));
    expect(forge.refused).toEqual([]);
    expect(forge.calls.map((c) => [c.body.key, c.body.state, c.body.url])).toEqual([
      ["preview", "INPROGRESS", "https://pr-7.preview.example.com"],
      ["preview/api", "SUCCESSFUL", "https://pr-7.preview.example.com"],
    ]);
  });
});

describe("GitLab: the environment review/pr-<iid>, its deployments and the commit status", () => {
  test("building creates the environment with the URL and a running deployment; ok succeeds; teardown stops the environment", async () => {
    const forge = previewForge();
    const target = forgeTarget("gitlab", forge.url);
    const building = await reportPreview(reportOf(target, previewOf("gitlab"), "building"));
    expect(building.problems).toEqual([]);
    const id = building.keep.forgeDeploymentId!;
    await reportPreview(reportOf(target, previewOf("gitlab", { forgeDeploymentId: id }), "ok"));
    // A later build finds the environment again: not made twice.
    const again = await reportPreview(
      reportOf(target, previewOf("gitlab", { head: NEXT, forgeDeploymentId: id }), "building"),
    );
    await reportPreview(
      reportOf(target, previewOf("gitlab", { head: NEXT, forgeDeploymentId: again.keep.forgeDeploymentId }), "failed"),
    );
    const gone = await reportPreview(reportOf(target, previewOf("gitlab", { outcome: "failed" }), "teardown"));
    expect(gone.problems).toEqual([]);
    expect(forge.refused).toEqual([]);
    const project = `/api/v4/projects/${encodeURIComponent(REPO)}`;
    expect(forge.environments).toEqual([
      {
        id: expect.any(Number),
        name: "review/pr-7",
        external_url: "https://pr-7.preview.example.com",
        state: "stopped",
      },
    ]);
    const env = forge.environments[0]!.id;
    expect(forge.calls.map((c) => c.call)).toEqual([
      `GET ${project}/environments`,
      `POST ${project}/environments`,
      `POST ${project}/deployments`,
      `POST ${project}/statuses/${HEAD}`,
      `PUT ${project}/deployments/${id}`,
      `POST ${project}/statuses/${HEAD}`,
      `GET ${project}/environments`,
      `POST ${project}/deployments`,
      `POST ${project}/statuses/${NEXT}`,
      `PUT ${project}/deployments/${again.keep.forgeDeploymentId}`,
      `POST ${project}/statuses/${NEXT}`,
      `GET ${project}/environments`,
      `POST ${project}/environments/${env}/stop`,
    ]);
    expect(forge.calls[2]!.body).toEqual({
      environment: "review/pr-7",
      sha: HEAD,
      ref: "feature/search",
      tag: false,
      status: "running",
    });
    expect(forge.calls.filter((c) => c.call.includes("/statuses/")).map((c) => [c.body.name, c.body.state])).toEqual([
      ["preview", "running"],
      ["preview", "success"],
      ["preview", "running"],
      ["preview", "failed"],
    ]);
    expect(forge.calls[4]!.body).toEqual({ status: "success" });
    expect(forge.calls[9]!.body).toEqual({ status: "failed" });
  });

  test("environments that cannot be read are not made again blindly; the deployment and status still go", async () => {
    const forge = previewForge();
    const project = `/api/v4/projects/${encodeURIComponent(REPO)}`;
    forge.failing.add(`GET ${project}/environments`);
    const reported = await reportPreview(reportOf(forgeTarget("gitlab", forge.url), previewOf("gitlab"), "building"));
    expect(reported.problems).toEqual([expect.stringMatching(/^GitLab environment review\/pr-7: 500/)]);
    expect(forge.calls.map((c) => c.call)).toEqual([`POST ${project}/deployments`, `POST ${project}/statuses/${HEAD}`]);
    expect(reported.keep.forgeDeploymentId).toMatch(/^\d+$/);
  });
});
