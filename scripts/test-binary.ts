/**
 * The end-to-end suite against the compiled binary: builds dist/service, then runs the test files of every folder
 * of test/ that starts the CLI, with SERVICE_TEST_BIN pointing at it (test/_support/helpers.ts starts that instead
 * of `bun src/cli.ts`). Left out by folder: `package/` tests the build itself (install.sh, the Node package),
 * `_support/` holds fixtures.
 */
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
const notEndToEnd = new Set(["package", "_support"]);

const build = Bun.spawnSync([process.execPath, join(root, "scripts/build.ts"), "--only-host"], {
  cwd: root,
  stdout: "inherit",
  stderr: "inherit",
});
if (build.exitCode !== 0) process.exit(build.exitCode ?? 1);

const files = readdirSync(join(root, "test"), { recursive: true, encoding: "utf8" })
  .filter((path) => path.endsWith(".test.ts") && !notEndToEnd.has(path.split("/")[0]!))
  .sort()
  .map((path) => `./test/${path}`);
console.log(`running ${files.length} end-to-end test files against dist/service`);
const run = Bun.spawnSync([process.execPath, "test", "--timeout", "60000", ...files], {
  cwd: root,
  env: { ...process.env, SERVICE_TEST_BIN: join(root, "dist", "service") },
  stdout: "inherit",
  stderr: "inherit",
});
process.exit(run.exitCode ?? 1);
