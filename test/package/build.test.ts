/**
 * The release build and the install command of the docs (docs/install.md "The binary (install.sh)"): the build
 * puts install.sh at the top of dist/release/, the directory the docs say to publish; the command the README and
 * docs/install.md give, run against that directory served by a local HTTP server, installs; and when the download
 * fails it runs nothing and exits non-zero, under dash and under bash.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { ROOT, baseEnv, readJson, tempDir } from "../_support/helpers.ts";
import { docBlock } from "../_support/doc-snippets.ts";
import { buildRelease, RELEASE_DIR, serveMirror } from "../_support/release-build.ts";
import { runProcess } from "../_support/helpers.ts";

const VERSION: string = readJson(join(ROOT, "package.json")).version;
const RELEASE = RELEASE_DIR;
const INSTALL_SECTION = "The binary (install.sh)";
/** Where the docs' commands download from; replaced by the local mirror's URL. */
const DOCS_MIRROR = "https://your.mirror";
const SHELLS = ["dash", "bash"].map((name) => ({ name, path: Bun.which(name) }));

let mirror = "";
let stopMirror = () => {};

beforeAll(async () => {
  await buildRelease();
  // dist/release/ published as it is, the way docs/install.md says to try it locally.
  const served = serveMirror([RELEASE]);
  mirror = served.url;
  stopMirror = served.stop;
}, 120_000);

afterAll(() => stopMirror());

/** The install command of docs/install.md, the one the README repeats. */
function docsCommand(): string {
  const lines = docBlock("docs/install.md", "sh", INSTALL_SECTION).trim().split("\n");
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

/**
 * Runs `command` with `shell -c`, `sh` on PATH being that shell too (so `sh -c "$(curl …)"` runs under it), with
 * HOME, TMPDIR and the install dir in temp dirs.
 */
async function runCommand(shell: string, command: string) {
  const bin = tempDir("service-sh-");
  symlinkSync(shell, join(bin, "sh"));
  const dir = join(tempDir("service-dir-"), "bin");
  const env = baseEnv({
    HOME: tempDir("service-home-"),
    TMPDIR: tempDir("service-tmpdir-"),
    PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    SERVICE_INSTALL_DIR: dir,
  });
  return { ...(await runProcess([shell, "-c", command], { cwd: tempDir(), env })), dir };
}

describe(`the release and its install command (docs/install.md "${INSTALL_SECTION}")`, () => {
  test("npm run build writes install.sh at the top of dist/release/, beside latest/ and the version", () => {
    expect(readdirSync(RELEASE).sort()).toEqual(["install.sh", "latest", `v${VERSION}`].sort());
    expect(readFileSync(join(RELEASE, "install.sh"), "utf8")).toBe(readFileSync(join(ROOT, "install.sh"), "utf8"));
  });

  test("the README, the docs and install.sh's own header and usage give the same command, one a failed download cannot pass", () => {
    const command = docsCommand();
    expect(command).toBe(
      `sh -c "$(curl -fsSL ${DOCS_MIRROR}/install.sh || echo exit 1)" install.sh --base-url ${DOCS_MIRROR}`,
    );
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const readmeCommands = readme.split("\n").filter((line) => line.includes("/install.sh") && line.includes("curl"));
    expect(readmeCommands.length).toBeGreaterThan(0);
    for (const line of readmeCommands) expect(line).toBe(command);
    const script = readFileSync(join(ROOT, "install.sh"), "utf8");
    expect(script.split("\n").filter((line) => /curl[^|]*\|\s*sh\b/.test(line))).toEqual([]);
    expect(script).toContain(
      'sh -c "$(curl -fsSL <base-url>/install.sh || echo exit 1)" install.sh --base-url <base-url>',
    );
  });

  for (const shell of SHELLS)
    test.skipIf(!shell.path)(
      `under ${shell.name}, the docs' command installs from the published dist/release/`,
      async () => {
        const run = await runCommand(shell.path!, docsCommand().replaceAll(DOCS_MIRROR, mirror));
        expect(run.stderr).toBe("");
        expect(run.code).toBe(0);
        expect(run.stdout).toContain(`installed service ${VERSION} to ${join(run.dir, "service")}`);
        expect(
          Bun.spawnSync([join(run.dir, "service"), "--version"])
            .stdout.toString()
            .trim(),
        ).toBe(VERSION);
      },
    );

  for (const shell of SHELLS)
    test.skipIf(!shell.path)(
      `under ${shell.name}, a download that fails (404) runs nothing and exits non-zero`,
      async () => {
        const missing = `${mirror}/no-such-mirror`;
        const run = await runCommand(shell.path!, docsCommand().replaceAll(DOCS_MIRROR, missing));
        expect(run.code).not.toBe(0);
        expect(run.stderr).toContain("404");
        expect(existsSync(run.dir)).toBe(false);
        // What the docs no longer say: a curl piped into sh exits 0 with nothing installed.
        const piped = await runCommand(
          shell.path!,
          `curl -fsSL ${missing}/install.sh | sh -s -- --base-url ${missing}`,
        );
        expect(piped.code).toBe(0);
        expect(existsSync(piped.dir)).toBe(false);
      },
    );
});
