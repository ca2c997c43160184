/**
 * `service init` (docs/cli.md): an annotated service.yaml that `service check` finds no problem in, the state kept
 * out of git, the webhook secret generated (0600) and shown only to a terminal, the forge's settings, and never a
 * config overwritten.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { git, makeRepo, runCli, tempDir, waitFor } from "../_support/helpers.ts";
import { noPty, startInPty } from "../_support/pty.ts";

const mode = (file: string) => statSync(file).mode & 0o777;
const read = (file: string) => readFileSync(file, "utf8");

describe("service init", () => {
  test("writes an annotated config that service check passes, ignores the state in git, and says GitHub's settings without the secret off a terminal", async () => {
    const repo = makeRepo();
    git(repo.clone, "remote", "set-url", "origin", "git@github.com:acme/shop.git");
    const out = await runCli(["init", "--yes"], { cwd: repo.clone });
    expect(out.code).toBe(0);
    const config = read(join(repo.clone, "service.yaml"));
    expect(config).toContain("\nrunScript: npm run deploy\n");
    expect(config).toContain("\nbranch: main\n");
    expect(config).toContain("\n# pull: pull\n");
    expect(config).toMatch(/\n# limits:\n# {3}memory: 1G/);
    expect(read(join(repo.clone, ".gitignore")).split("\n")).toEqual(
      expect.arrayContaining([".service/", ".service.secret"]),
    );
    const secretFile = join(repo.clone, ".service.secret");
    expect(mode(secretFile)).toBe(0o600);
    const secret = read(secretFile).trim();
    expect(secret.length).toBeGreaterThanOrEqual(43);
    expect(out.stdout).not.toContain(secret);
    expect(out.stdout).toContain("Secret:        the content of .service.secret (service secret show prints it)");
    expect(out.stdout).toContain("https://github.com/acme/shop/settings/hooks/new");
    expect(out.stdout).toContain("Payload URL:   https://deploy.example.com/?ack=1");
    expect(out.stdout).toContain("Content type:  application/json");
    expect(out.stdout).toContain('"Just the push event."');
    // What it wrote is in git's eyes ignored: only the config and .gitignore are new.
    expect(git(repo.clone, "status", "--porcelain").split("\n").sort()).toEqual(["?? .gitignore", "?? service.yaml"]);

    const check = await runCli(["check"], { cwd: repo.clone });
    expect({ code: check.code, tail: check.stdout.trim().split("\n").at(-1) }).toEqual({
      code: 0,
      tail: "no problems found",
    });
  });

  test("--apps with --releases and --forge: the multi-app form, a secret per app, the releases made, service check passes", async () => {
    const repo = makeRepo();
    const releases = join(tempDir(), "releases");
    const out = await runCli(
      ["init", "--yes", "--apps", "web,api", "--releases", releases, "--forge", "gitea", "--run", "make deploy"],
      {
        cwd: repo.clone,
      },
    );
    expect(out.code).toBe(0);
    const config = read(join(repo.clone, "service.yaml"));
    expect(config).toContain("apps:\n  - name: web\n    host: deploy.example.com\n    path: /web\n");
    expect(config).toContain(`    runScript: make deploy\n    releases:\n      path: ${releases}/api\n`);
    for (const app of ["web", "api"]) {
      expect(mode(join(repo.clone, ".service", "secrets", `${app}.secret`))).toBe(0o600);
      expect(existsSync(join(releases, app))).toBe(true);
      expect(out.stdout).toContain(`Target URL:    https://deploy.example.com/${app}?ack=1`);
    }
    expect(out.stdout).toContain("Trigger on:    Push events");
    const check = await runCli(["check"], { cwd: repo.clone });
    expect(check.stdout.trim().split("\n").at(-1)).toBe("no problems found");
    expect(check.code).toBe(0);
  });

  test("--cwd a directory inside the repository: the .gitignore lines anchored to it; outside one, it says so", async () => {
    const repo = makeRepo();
    mkdirSync(join(repo.clone, "ops"));
    const out = await runCli(["init", "--yes", "--cwd", "ops"], { cwd: repo.clone });
    expect(out.code).toBe(0);
    expect(read(join(repo.clone, ".gitignore"))).toContain("\n/ops/.service/\n/ops/.service.secret\n");
    expect(git(repo.clone, "status", "--porcelain", "--untracked-files=all").split("\n").sort()).toEqual([
      "?? .gitignore",
      "?? ops/service.yaml",
    ]);
    const elsewhere = tempDir();
    const outside = await runCli(["init", "--yes"], { cwd: elsewhere });
    expect(outside.stdout).toContain(`${elsewhere} is not in a git repository`);
    expect(existsSync(join(elsewhere, ".gitignore"))).toBe(false);
  });

  test("refuses to overwrite a config, naming it, and writes nothing", async () => {
    const repo = makeRepo();
    writeFileSync(join(repo.clone, "service.yml"), "runScript: ./deploy.sh\n");
    const out = await runCli(["init", "--yes"], { cwd: repo.clone });
    expect(out.code).toBe(1);
    expect(out.stderr.trim()).toBe(
      `[error] ${join(repo.clone, "service.yml")} exists already: service init never overwrites a config (edit it, or remove it first)`,
    );
    expect([existsSync(join(repo.clone, "service.yaml")), existsSync(join(repo.clone, ".service.secret"))]).toEqual([
      false,
      false,
    ]);
    expect(read(join(repo.clone, "service.yml"))).toBe("runScript: ./deploy.sh\n");
  });

  test("bad options are refused with the reason: an unknown forge, a bad app name", async () => {
    const cwd = tempDir();
    const forge = await runCli(["init", "--yes", "--forge", "sourcehut"], { cwd });
    expect([forge.code, forge.stderr.trim()]).toEqual([
      1,
      "[error] --forge sourcehut: one of github, gitlab, gitea, bitbucket",
    ]);
    const app = await runCli(["init", "--yes", "--apps", "web,../x"], { cwd });
    expect(app.code).toBe(1);
    expect(app.stderr).toContain('--apps: "../x" is not an app name');
    const inside = await runCli(["init", "--yes", "--releases", "rel"], { cwd });
    expect([inside.code, inside.stderr.trim()]).toEqual([
      1,
      `[error] --releases rel: ${join(cwd, "rel")} is inside the repository's directory ${cwd}; put it outside (a release there would be a file of the checkout)`,
    ]);
    expect(existsSync(join(cwd, "service.yaml"))).toBe(false);
  });

  test.skipIf(noPty)("on a terminal it asks the branch and the run script, and shows the secret", async () => {
    const repo = makeRepo();
    git(repo.clone, "remote", "set-url", "origin", "https://bitbucket.org/acme/shop.git");
    await using pty = startInPty(repo.clone, {}, { args: ["init"] });
    await waitFor(() => pty.screen().includes("Branch to deploy [main]: "), "the branch question");
    pty.type("release\r");
    await waitFor(() => pty.screen().includes("Run script after each pull [npm run deploy]: "), "the script question");
    pty.type("./deploy.sh\r");
    await waitFor(() => pty.screen().includes("Next: service check"), "the report");
    const config = read(join(repo.clone, "service.yaml"));
    expect([config.includes("\nrunScript: ./deploy.sh\n"), config.includes("\nbranch: release\n")]).toEqual([
      true,
      true,
    ]);
    const secret = read(join(repo.clone, ".service.secret")).trim();
    expect(pty.screen()).toContain(`Secret:        ${secret}`);
    expect(pty.screen()).toContain(
      "Repository settings → Webhooks → Add webhook (https://bitbucket.org/acme/shop/admin/webhooks)",
    );
  });
});
