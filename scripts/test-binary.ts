/**
 * The end-to-end suite against the compiled binary: builds dist/service, then runs every test file that starts
 * the CLI with SERVICE_TEST_BIN pointing at it (test/helpers.ts starts that instead of `bun src/cli.ts`).
 * Leaves out the files that test the build itself (install.sh, the Node package) or no process at all.
 */
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
const notEndToEnd = new Set([
  "install.test.ts",
  "node-package.test.ts",
  "script.test.ts",
  "hostile-config.test.ts",
  "example-config.test.ts",
]);

const build = Bun.spawnSync([process.execPath, join(root, "scripts/build.ts"), "--only-host"], {
  cwd: root,
  stdout: "inherit",
  stderr: "inherit",
});
if (build.exitCode !== 0) process.exit(build.exitCode ?? 1);

const files = readdirSync(join(root, "test"))
  .filter((name) => name.endsWith(".test.ts") && !notEndToEnd.has(name))
  .sort()
  .map((name) => `./test/${name}`);
console.log(`running ${files.length} end-to-end test files against dist/service`);
const run = Bun.spawnSync([process.execPath, "test", "--timeout", "60000", ...files], {
  cwd: root,
  env: { ...process.env, SERVICE_TEST_BIN: join(root, "dist", "service") },
  stdout: "inherit",
  stderr: "inherit",
});
process.exit(run.exitCode ?? 1);
