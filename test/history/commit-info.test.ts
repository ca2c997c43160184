/**
 * What went live, in words (docs/log-files.md "Who deployed what"): the result and the record have `commit` and
 * `previousCommit` ({sha, subject, author, date}); `service logs` shows the subject; notifications carry the
 * subject, the author and who started the deploy.
 */
import { describe, expect, test } from "bun:test";
import { makeRepo, post, pushAs, runCli, SECRET, startServer, waitFor } from "../_support/helpers.ts";
import { parseTable } from "../_support/ops-helpers.ts";
import { fakeApi } from "../_support/outbound-fixtures.ts";
import { writeServiceYaml } from "../_support/webhook-fixtures.ts";

describe("the commit that went live", () => {
  test("the result, the record and service logs name the deployed commit and the previous one; after a rollback, the one rolled back to; notifications carry subject, author and actor", async () => {
    const repo = makeRepo({ "README.md": "app\n", "step.sh": "exit 0\n" });
    const initial = repo.head();
    const fixed = pushAs(repo, "Mona Octocat <mona@example.com>", "Fix the login page\n\nA body line.");
    const api = fakeApi([200]);
    writeServiceYaml(repo.clone, {
      runScript: "sh step.sh",
      rollbackOnFailure: true,
      notify: [
        { url: `${api.url}/json`, on: ["started", "succeeded", "rolled_back"] },
        { url: `${api.url}/slack`, format: "slack", on: ["succeeded"] },
      ],
    });
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET });
    const result = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
    expect(result.ok).toBe(true);
    expect(result.commit).toEqual({
      sha: fixed,
      subject: "Fix the login page",
      author: "Mona Octocat",
      date: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(result.previousCommit).toMatchObject({ sha: initial, subject: "initial", author: "Test" });

    const sent = await waitFor(() => (api.seen.length >= 3 ? api.seen : undefined), "three notifications");
    const started = sent.find((s) => s.path === "/json" && s.json().outcome === "started")!.json();
    expect(started).toMatchObject({
      actor: "webhook@127.0.0.1",
      commit: { before: initial, after: fixed, subject: "Fix the login page", author: "Mona Octocat" },
    });
    const succeeded = sent.find((s) => s.path === "/json" && s.json().outcome === "succeeded")!.json();
    expect(succeeded.commit).toMatchObject({ after: fixed, subject: "Fix the login page", author: "Mona Octocat" });
    const slack = sent.find((s) => s.path === "/slack")!.json().text;
    expect(slack).toStartWith(`deploy succeeded at ${fixed.slice(0, 7)} "Fix the login page" in `);
    expect(slack.split("\n")[0]).toEndWith(", by webhook@127.0.0.1");

    // A pushed commit that breaks the script is rolled back: what is live is the commit before it.
    const broken = repo.push({ "step.sh": "exit 3\n" }, "Break the build");
    const rolled = await (await post(`${server.url}/?format=json`, { secret: SECRET })).json();
    expect(rolled.rolledBack).toBe(true);
    expect(rolled.commit).toMatchObject({ sha: fixed, subject: "Fix the login page" });
    expect(rolled.previousCommit).toMatchObject({ sha: fixed });
    const rolledNote = await waitFor(
      () => api.seen.find((s) => s.path === "/json" && s.json().outcome === "rolled_back"),
      "the rolled_back notification",
    );
    // The notification's commit is the one pulled, and its words are that commit's, not the live one's.
    expect(rolledNote.json().commit).toMatchObject({ after: broken, subject: "Break the build", author: "Test" });
    // And its target is the commit the deploy tried, as the record's is.
    expect(rolledNote.json().target).toEqual({
      sha: broken,
      subject: "Break the build",
      author: "Test",
      date: expect.any(String),
    });
    expect(rolled.target).toMatchObject({ sha: broken, subject: "Break the build" });

    const rows = parseTable((await runCli(["logs"], { cwd: repo.clone })).stdout);
    // The COMMIT column names the commit each deploy tried, and what stayed live when that is another.
    expect(rows.map((row) => row.COMMIT)).toEqual([
      `${broken.slice(0, 7)} Break the build (live: ${fixed.slice(0, 7)})`,
      `${fixed.slice(0, 7)} Fix the login page`,
    ]);
  });
});
