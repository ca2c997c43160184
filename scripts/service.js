#!/usr/bin/env node
// The `service` command of an npm install. It runs the Node.js build of the CLI, so it needs neither Bun nor
// TypeScript; a checkout runs `npm start` (Bun, from source) instead.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const cli = new URL("../dist/node/cli.js", import.meta.url);
if (!existsSync(cli)) {
  // A directory install (`npm install /path/to/clone`) links the clone as it is: its build must exist there.
  const root = fileURLToPath(new URL("..", import.meta.url));
  process.stderr.write(
    `service: ${fileURLToPath(cli)} is missing: run \`npm install\` (or \`npm run build\`) in ${root}\n`,
  );
  process.exit(1);
}
await import(cli.href);
