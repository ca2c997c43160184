/**
 * Who started a webhook deploy (docs/log-files.md "Who deployed what"): the forge's pusher, read from the body
 * once the request is authenticated, or `webhook@<client address>` for a request whose body names nobody. The
 * actor is in the JSON result, the record, the `.log`'s first line, `service logs` and the script's environment,
 * and it is data: cut to a length, control characters stripped.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, post, runCli, SECRET, startServer, tempDir } from "../_support/helpers.ts";
import { parseTable } from "../_support/ops-helpers.ts";
import {
  bitbucketHeaders,
  bitbucketPush,
  deployRecords,
  giteaPush,
  githubHeaders,
  githubPush,
  gitlabHeaders,
  gitlabPush,
  hmacHex,
} from "../_support/webhook-fixtures.ts";

/** A run script that writes the actor it was given, so the test sees what the script saw. */
function actorScript(): { script: string; seen: () => string[] } {
  const file = join(tempDir("service-actor-"), "actors");
  return {
    script: `sh -c 'printf "%s\\n" "$SERVICE_ACTOR" >> ${file}'`,
    seen: () => readFileSync(file, "utf8").trimEnd().split("\n"),
  };
}

/** The JSON result of one delivery. */
async function deliver(url: string, headers: Record<string, string>, body?: string): Promise<any> {
  const res = await post(`${url}/?format=json`, { headers, body });
  expect(res.status).toBe(200);
  return res.json();
}

describe('who deployed: the forge\'s pusher from an authenticated body (docs/log-files.md "Who deployed what")', () => {
  test("GitHub (signed), GitLab (token), Gitea (signed) and Bitbucket (signed) pushes record their pusher; curl without a body records webhook@<address>", async () => {
    const repo = makeRepo();
    const actors = actorScript();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: actors.script });
    const github = JSON.stringify(githubPush());
    const gitea = JSON.stringify(giteaPush());
    const bitbucket = JSON.stringify(bitbucketPush());
    const results = [
      await deliver(
        server.url,
        { ...githubHeaders(), "x-hub-signature-256": `sha256=${hmacHex(SECRET, github)}` },
        github,
      ),
      await deliver(server.url, { ...gitlabHeaders(), "x-gitlab-token": SECRET }, JSON.stringify(gitlabPush())),
      await deliver(
        server.url,
        { "content-type": "application/json", "x-gitea-event": "push", "x-gitea-signature": hmacHex(SECRET, gitea) },
        gitea,
      ),
      await deliver(
        server.url,
        { ...bitbucketHeaders(), "x-hub-signature": `sha256=${hmacHex(SECRET, bitbucket)}` },
        bitbucket,
      ),
      await deliver(server.url, { "x-service-secret": SECRET }),
    ];
    const expected = ["octocat", "jsmith", "gitea", "Mona", "webhook@127.0.0.1"];
    expect(results.map((r) => [r.ok, r.actor])).toEqual(expected.map((actor) => [true, actor]));
    expect(deployRecords(repo.clone).map((r) => r.actor)).toEqual(expected);
    expect(actors.seen()).toEqual(expected);
    const log = readFileSync(join(repo.clone, results[0].log.log), "utf8").split("\n")[0];
    expect(log).toEndWith(
      `(webhook, event push, delivery ${githubHeaders()["x-github-delivery"]}) in ${repo.clone} by octocat`,
    );

    const listed = await runCli(["logs", "--json"], { cwd: repo.clone });
    expect(JSON.parse(listed.stdout).map((e: any) => e.actor)).toEqual([...expected].reverse());
    const table = parseTable((await runCli(["logs"], { cwd: repo.clone })).stdout);
    expect(table.map((row) => row.BY)).toEqual([...expected].reverse());
  });

  test("with trustProxy the address is the forwarded client's; a pusher with control characters, markup and 300 characters is kept as one cut line of text", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, {
      SERVICE_SECRET: SECRET,
      SERVICE_RUN_SCRIPT: "true",
      SERVICE_TRUST_PROXY: "true",
    });
    const forwarded = await deliver(server.url, { "x-service-secret": SECRET, "x-forwarded-for": "198.51.100.7" });
    expect(forwarded.actor).toBe("webhook@198.51.100.7");

    const hostile = githubPush() as { sender: { login: string } };
    hostile.sender.login = `ev\u001b[31mil\u0000\n<script>x</script>\u202e${"y".repeat(300)}`;
    const result = await deliver(
      server.url,
      { "content-type": "application/json", "x-service-secret": SECRET },
      JSON.stringify(hostile),
    );
    expect(result.actor).toBe(`ev[31mil <script>x</script>${"y".repeat(72)}…`);
    expect(result.actor).toHaveLength(100);
    const log = readFileSync(join(repo.clone, result.log.log), "utf8");
    expect(log.split("\n")[0]).toEndWith(`by ${result.actor}`);
    expect(log).not.toContain("\u001b");
  });

  test("a body that is no JSON, or names nobody, deploys by the client's address; a request with a wrong secret is refused before its body is looked at", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "true" });
    const text = await deliver(server.url, { "x-service-secret": SECRET }, "just some text");
    expect(text.actor).toBe("webhook@127.0.0.1");
    const nobody = await deliver(server.url, { "x-service-secret": SECRET }, JSON.stringify({ sender: { login: 42 } }));
    expect(nobody.actor).toBe("webhook@127.0.0.1");
    const refused = await post(server.url, { secret: "wrong-secret-000000", body: JSON.stringify(githubPush()) });
    expect(refused.status).toBe(401);
    expect(deployRecords(repo.clone)).toHaveLength(2);
  });
});

describe("a body that does not parse", () => {
  test("a signed body that is not JSON deploys by the address, with a [warn] line saying the body did not parse", async () => {
    const repo = makeRepo();
    await using server = await startServer(repo.clone, { SERVICE_SECRET: SECRET, SERVICE_RUN_SCRIPT: "true" });
    const body = '{"ref": "refs/heads/main", "pusher": {"name": "octo';
    const headers = { ...githubHeaders(), "x-hub-signature-256": `sha256=${hmacHex(SECRET, body)}` };
    const text = await (await post(server.url, { headers, body })).text();
    expect(text).toContain("[done] ok=true");
    expect(text).toContain(
      `[warn] the body did not parse as JSON (${body.length} bytes): who pushed and what it names are unknown; it deploys as a request that names nothing, by its address`,
    );
    expect(deployRecords(repo.clone).at(-1).actor).toStartWith("webhook@");
    // A body that parses says nothing of the kind; neither does curl without a body.
    const good = JSON.stringify(githubPush());
    const signed = { ...githubHeaders(), "x-hub-signature-256": `sha256=${hmacHex(SECRET, good)}` };
    expect(await (await post(server.url, { headers: signed, body: good })).text()).not.toContain("[warn]");
    expect(await (await post(server.url, { secret: SECRET })).text()).not.toContain("[warn]");
  });
});
