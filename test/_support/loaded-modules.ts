/**
 * Run as a script (`bun test/_support/loaded-modules.ts <config as JSON> <cwd>`): starts a library server with
 * the config, deploys once with its secret, stops it, and prints the modules of src/ the process loaded, one per
 * line, relative to src/. What the process loads is what a server of that config holds.
 */
import { createServiceServer } from "../../src/index.ts";

const [configJson = "{}", cwd = process.cwd()] = process.argv.slice(2);
const config = JSON.parse(configJson);
const quiet = { info() {}, warn() {}, error() {} };
const server = createServiceServer({ port: 0, hostname: "127.0.0.1", ...config }, { cwd, logger: quiet as never });
await server.start();
const response = await fetch(`http://127.0.0.1:${server.port}/`, {
  method: "POST",
  // A delivery id, as a forge sends one: what the duplicate-delivery check looks at.
  headers: {
    "x-service-secret": config.secret ?? "",
    "x-github-event": "push",
    "x-github-delivery": "loaded-modules-1",
  },
});
await response.text();
await server.stop();
const src = new URL("../../src/", import.meta.url).pathname;
const loaded = Object.keys(require.cache)
  .filter((file) => file.startsWith(src))
  .map((file) => file.slice(src.length))
  .sort();
process.stdout.write(`${loaded.join("\n")}\n`);
process.exit(0);
