#!/usr/bin/env node
// npm runs this (`prepare`) on `npm install` in a checkout, on `npm pack`, for a git dependency (after installing
// its devDependencies) and for a directory dependency: `npm install /path/to/clone` links the directory as it is,
// so a fresh clone has neither its devDependencies nor dist/. It builds dist/node and dist/types with Bun (a
// devDependency); where Bun is missing it installs the clone's own dependencies first, in the clone.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const bun = join(root, "node_modules", ".bin", "bun");
const run = (argv, env = process.env) =>
  spawnSync(argv[0], argv.slice(1), { cwd: root, env, stdio: "inherit" }).status === 0;

if (!existsSync(bun)) {
  // The inner install runs this script again, with Bun present; the variable stops a loop if it brings none.
  if (process.env.SERVICE_PREPARE_INSTALLING === "1") fail(`npm install in ${root} did not install Bun (${bun})`);
  process.stderr.write(`service: installing the build tools in ${root} (npm install there) to build dist/node\n`);
  const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ["npm"];
  const env = { ...process.env, SERVICE_PREPARE_INSTALLING: "1" };
  if (!run([...npm, "install", "--no-audit", "--no-fund", "--prefer-offline", "--include=dev"], env))
    fail(`npm install in ${root} failed`);
  // That install ran this script with Bun, which built dist/.
  process.exit(0);
}
if (!run([bun, join(root, "scripts", "build.ts"), "--only-library"])) fail("building dist/node failed");

function fail(message) {
  process.stderr.write(`service: ${message}; run \`npm install\` in ${root}, then install it again\n`);
  process.exit(1);
}
