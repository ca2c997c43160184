/** Reading a commit's checks from each forge, through a local server that plays the forge's documented API. */
import { describe, expect, test } from "bun:test";
import { at, checksOf, FORGES, fakeForge, GITHUB_RUNS, read, SHA, serve } from "../_support/forge-checks.ts";

describe("GitHub", () => {
  test("GitHub: statuses and check runs, their states mapped, links, reporters and times", async () => {
    const status = (id: number, context: string, state: string) => ({
      id,
      context,
      state,
      target_url: `https://ci.example/${context}`,
      creator: { login: "ci-bot" },
      updated_at: at(id),
    });
    const run = (id: number, name: string, status: string, conclusion: string | null) => ({
      id,
      name,
      status,
      conclusion,
      html_url: `https://github.example/runs/${id}`,
      details_url: "https://ci.example/details",
      app: { slug: "github-actions" },
      started_at: at(id),
      completed_at: status === "completed" ? at(id + 1) : null,
    });
    const forge = serve("github", {
      [FORGES.github.first]: {
        body: [
          status(4, "s/error", "error"),
          status(3, "s/failure", "failure"),
          status(2, "s/success", "success"),
          status(1, "s/pending", "pending"),
        ],
      },
      [GITHUB_RUNS]: {
        body: {
          total_count: 13,
          check_runs: [
            run(10, "queued", "queued", null),
            run(11, "in_progress", "in_progress", null),
            run(12, "waiting", "waiting", null),
            run(13, "success", "completed", "success"),
            run(14, "neutral", "completed", "neutral"),
            run(15, "skipped", "completed", "skipped"),
            run(16, "failure", "completed", "failure"),
            run(17, "timed_out", "completed", "timed_out"),
            run(18, "action_required", "completed", "action_required"),
            run(19, "startup_failure", "completed", "startup_failure"),
            run(20, "cancelled", "completed", "cancelled"),
            run(21, "stale", "completed", "stale"),
            { ...run(22, "no link", "completed", "success"), html_url: null, app: null },
          ],
        },
      },
    });
    const checks = await checksOf(forge, read("github", forge));
    const states = Object.fromEntries(checks.map((c) => [c.name, c.state]));
    expect(states).toEqual({
      "s/error": "error",
      "s/failure": "failure",
      "s/success": "success",
      "s/pending": "pending",
      queued: "pending",
      in_progress: "pending",
      waiting: "pending",
      success: "success",
      neutral: "success",
      skipped: "success",
      failure: "failure",
      timed_out: "failure",
      action_required: "failure",
      startup_failure: "failure",
      cancelled: "cancelled",
      stale: "pending",
      "no link": "success",
    });
    expect(checks.find((c) => c.name === "s/success")).toEqual({
      name: "s/success",
      state: "success",
      url: "https://ci.example/s/success",
      by: "ci-bot",
      updatedAt: at(2),
    });
    expect(checks.find((c) => c.name === "success")).toEqual({
      name: "success",
      state: "success",
      url: "https://github.example/runs/13",
      by: "github-actions",
      updatedAt: at(14),
    });
    expect(checks.find((c) => c.name === "no link")).toEqual({
      name: "no link",
      state: "success",
      url: "https://ci.example/details",
      updatedAt: at(23),
    });
  });

  test("GitHub: check runs over two pages, through the Link header", async () => {
    const page2 = `${GITHUB_RUNS}&page=2`;
    const forge = serve("github", {
      [FORGES.github.first]: { body: [] },
      [GITHUB_RUNS]: (origin) => ({
        headers: { link: `<${origin}${page2}>; rel="next", <${origin}${page2}>; rel="last"` },
        body: { total_count: 2, check_runs: [{ id: 1, name: "one", status: "completed", conclusion: "success" }] },
      }),
      [page2]: (origin) => ({
        headers: {
          link: `<${origin}${GITHUB_RUNS}&page=1>; rel="prev", <${origin}${GITHUB_RUNS}&page=1>; rel="first"`,
        },
        body: { total_count: 2, check_runs: [{ id: 2, name: "two", status: "queued", conclusion: null }] },
      }),
    });
    const checks = await checksOf(forge, read("github", forge));
    expect(checks.map((c) => [c.name, c.state])).toEqual([
      ["one", "success"],
      ["two", "pending"],
    ]);
    expect(forge.requests).toEqual([`GET ${FORGES.github.first}`, `GET ${GITHUB_RUNS}`, `GET ${page2}`]);
  });

  test("GitHub: the latest status per context and creator, the newest check run (by id) per name and app", async () => {
    const forge = serve("github", {
      // Newest first, as documented.
      [FORGES.github.first]: {
        body: [
          { id: 3, context: "ci/build", state: "success", creator: { login: "alice" } },
          { id: 2, context: "ci/build", state: "pending", creator: { login: "bob" } },
          { id: 1, context: "ci/build", state: "failure", creator: { login: "alice" } },
        ],
      },
      [GITHUB_RUNS]: {
        body: {
          total_count: 3,
          check_runs: [
            // A start time says nothing of which run is newer: a re-run started after its clock, or not yet.
            { id: 7, name: "test", status: "completed", conclusion: "failure", app: { slug: "ci" }, started_at: at(1) },
            { id: 5, name: "test", status: "completed", conclusion: "success", app: { slug: "ci" }, started_at: at(5) },
            { id: 6, name: "test", status: "in_progress", app: { slug: "other" }, started_at: at(2) },
          ],
        },
      },
    });
    const checks = await checksOf(forge, read("github", forge));
    expect(checks.map((c) => [c.name, c.by, c.state])).toEqual([
      ["ci/build", "alice", "success"],
      ["ci/build", "bob", "pending"],
      ["test", "ci", "failure"],
      ["test", "other", "pending"],
    ]);
  });

  test("GitHub: a re-run still queued (started_at null) is the check run, not the older success it re-runs", async () => {
    const forge = serve("github", {
      [FORGES.github.first]: { body: [] },
      [GITHUB_RUNS]: {
        body: {
          total_count: 2,
          check_runs: [
            { id: 9, name: "test", status: "queued", conclusion: null, app: { slug: "ci" }, started_at: null },
            { id: 4, name: "test", status: "completed", conclusion: "success", app: { slug: "ci" }, started_at: at(4) },
          ],
        },
      },
    });
    const checks = await checksOf(forge, read("github", forge));
    expect(checks.map((c) => [c.name, c.by, c.state])).toEqual([["test", "ci", "pending"]]);
  });
});

describe("GitLab", () => {
  test("GitLab: statuses, their states mapped, the author as reporter", async () => {
    const states = [
      "created",
      "waiting_for_resource",
      "preparing",
      "pending",
      "running",
      "manual",
      "scheduled",
      "success",
      "failed",
      "canceled",
      "skipped",
    ];
    const forge = serve("gitlab", {
      [FORGES.gitlab.first]: {
        body: states.map((status, id) => ({
          id,
          name: status,
          status,
          target_url: `https://gitlab.example/jobs/${id}`,
          author: { username: "jdoe" },
          created_at: at(id),
          finished_at: status === "success" ? at(40) : null,
        })),
      },
    });
    const checks = await checksOf(forge, read("gitlab", forge));
    expect(Object.fromEntries(checks.map((c) => [c.name, c.state]))).toEqual({
      created: "pending",
      waiting_for_resource: "pending",
      preparing: "pending",
      pending: "pending",
      running: "pending",
      manual: "pending",
      scheduled: "pending",
      success: "success",
      failed: "failure",
      canceled: "cancelled",
      skipped: "success",
    });
    expect(checks.find((c) => c.name === "success")).toEqual({
      name: "success",
      state: "success",
      url: "https://gitlab.example/jobs/7",
      by: "jdoe",
      updatedAt: at(40),
    });
  });

  test("GitLab: pages through x-next-page; the latest status per name by id", async () => {
    const page2 = FORGES.gitlab.first.replace(/page=1$/, "page=2");
    const forge = serve("gitlab", {
      [FORGES.gitlab.first]: {
        headers: { "x-next-page": "2", "x-page": "1" },
        body: [{ id: 9, name: "build", status: "success", author: { username: "bob" } }],
      },
      [page2]: {
        headers: { "x-next-page": "", "x-page": "2" },
        body: [
          { id: 5, name: "build", status: "failed", author: { username: "alice" } },
          { id: 6, name: "test", status: "running" },
        ],
      },
    });
    const checks = await checksOf(forge, read("gitlab", forge));
    expect(checks).toEqual([
      { name: "build", state: "success", by: "bob" },
      { name: "test", state: "pending" },
    ]);
  });

  test("GitLab: a project in a subgroup is one URL-encoded id", async () => {
    const path = `/api/v4/projects/group%2Fsub%2Fweb/repository/commits/${SHA}/statuses?per_page=100&page=1`;
    const forge = serve("gitlab", { [path]: { body: [{ id: 1, name: "build", status: "success" }] } });
    const checks = await checksOf(forge, read("gitlab", forge, { repo: "group/sub/web" }));
    expect(checks).toEqual([{ name: "build", state: "success" }]);
  });
});

describe("Gitea", () => {
  test("Gitea: the combined status's statuses, their states mapped (a warning fails), the creator as reporter", async () => {
    const states = ["pending", "success", "failure", "error", "warning"];
    const forge = serve("gitea", {
      [FORGES.gitea.first]: {
        body: {
          state: "failure",
          total_count: states.length,
          statuses: states.map((status, id) => ({
            id,
            context: `ci/${status}`,
            status,
            target_url: `https://ci.example/${id}`,
            creator: { login: "woodpecker" },
            updated_at: at(id),
          })),
        },
      },
    });
    const checks = await checksOf(forge, read("gitea", forge));
    expect(Object.fromEntries(checks.map((c) => [c.name, c.state]))).toEqual({
      "ci/pending": "pending",
      "ci/success": "success",
      "ci/failure": "failure",
      "ci/error": "error",
      "ci/warning": "failure",
    });
    expect(checks.find((c) => c.name === "ci/success")).toEqual({
      name: "ci/success",
      state: "success",
      url: "https://ci.example/1",
      by: "woodpecker",
      updatedAt: at(1),
    });
  });

  test("Gitea: a full page is followed by the next (page and limit)", async () => {
    const statuses = (from: number, count: number) =>
      Array.from({ length: count }, (_, n) => ({ id: from + n, context: `ci/${from + n}`, status: "success" }));
    const forge = serve("gitea", {
      [FORGES.gitea.first]: { body: { state: "success", statuses: statuses(0, 50) } },
      [FORGES.gitea.first.replace("page=1", "page=2")]: { body: { state: "success", statuses: statuses(50, 3) } },
    });
    const checks = await checksOf(forge, read("gitea", forge));
    expect(checks.length).toBe(53);
    expect(forge.requests.length).toBe(2);
  });
});

describe("Bitbucket", () => {
  test("Bitbucket: statuses, their states mapped, by name else key, no reporter", async () => {
    const status = (key: string, name: string | undefined, state: string, minute: number) => ({
      type: "build",
      key,
      ...(name ? { name } : {}),
      state,
      url: `https://ci.example/${key}`,
      updated_on: at(minute),
    });
    const forge = serve("bitbucket", {
      [FORGES.bitbucket.first]: {
        body: {
          pagelen: 100,
          values: [
            status("k1", "running", "INPROGRESS", 1),
            status("k2", "passed", "SUCCESSFUL", 2),
            status("k3", "failed", "FAILED", 3),
            status("k4", "stopped", "STOPPED", 4),
            status("key-only", undefined, "SUCCESSFUL", 5),
            status("k6", "passed", "FAILED", 1),
          ],
        },
      },
    });
    const checks = await checksOf(forge, read("bitbucket", forge));
    expect(checks).toEqual([
      { name: "failed", state: "failure", url: "https://ci.example/k3", updatedAt: at(3) },
      { name: "key-only", state: "success", url: "https://ci.example/key-only", updatedAt: at(5) },
      { name: "passed", state: "success", url: "https://ci.example/k2", updatedAt: at(2) },
      { name: "running", state: "pending", url: "https://ci.example/k1", updatedAt: at(1) },
      { name: "stopped", state: "cancelled", url: "https://ci.example/k4", updatedAt: at(4) },
    ]);
  });

  test("Bitbucket: pages through the body's next", async () => {
    const page2 = `${FORGES.bitbucket.first}&page=2`;
    const forge = serve("bitbucket", {
      [FORGES.bitbucket.first]: (origin) => ({
        body: { values: [{ key: "a", name: "a", state: "SUCCESSFUL" }], next: `${origin}${page2}` },
      }),
      [page2]: { body: { values: [{ key: "b", name: "b", state: "INPROGRESS" }] } },
    });
    const checks = await checksOf(forge, read("bitbucket", forge));
    expect(checks).toEqual([
      { name: "a", state: "success" },
      { name: "b", state: "pending" },
    ]);
  });

  test("Bitbucket: an app password is sent as Basic, and never shown", async () => {
    const token = "jdoe:app-pass-123456";
    const forge = fakeForge(
      { ...FORGES.bitbucket.headers, authorization: `Basic ${Buffer.from(token).toString("base64")}` },
      {
        [FORGES.bitbucket.first]: {
          status: 401,
          body: { type: "error", error: { message: `bad password app-pass-123456 for ${token}` } },
        },
      },
    );
    const answer = await read("bitbucket", forge, { token });
    expect(forge.refused).toEqual([]);
    expect(answer).toMatchObject({ ok: false, fatal: true });
    expect(!answer.ok && answer.error).toStartWith("Bitbucket answered 401 Unauthorized for GET ");
    expect(!answer.ok && answer.error).not.toContain("app-pass-123456");
  });
});
