/**
 * Builds the release files into dist/:
 *   dist/service                 standalone Linux x64 binary
 *   dist/service-linux-arm64     standalone Linux arm64 binary
 *   dist/service-<os>-<arch>     the other targets Bun can cross-compile from the npm registry
 *   dist/SHA256SUMS              sha256 of every binary, in `sha256sum -c` format
 *   dist/node/                   the library built for Node.js (see package.json "exports")
 *
 * Usage: bun run build [--only-host]   (--only-host: just dist/service, for quick end-to-end runs)
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
const dist = join(root, "dist");
const onlyHost = process.argv.includes("--only-host");

const targets: { target: string; out: string; required: boolean }[] = [
  { target: "bun-linux-x64", out: "service", required: true },
  { target: "bun-linux-arm64", out: "service-linux-arm64", required: true },
  { target: "bun-linux-x64-musl", out: "service-linux-x64-musl", required: false },
  { target: "bun-darwin-arm64", out: "service-darwin-arm64", required: false },
  { target: "bun-darwin-x64", out: "service-darwin-x64", required: false },
];

function run(argv: string[]): { ok: boolean; output: string } {
  const result = Bun.spawnSync(argv, { cwd: root, stdout: "pipe", stderr: "pipe" });
  return { ok: result.exitCode === 0, output: `${result.stdout}${result.stderr}` };
}

async function buildBinary(target: string, out: string): Promise<boolean> {
  // The binary must not pick up a .env or bunfig.toml from whatever directory it runs in.
  const { ok, output } = run([
    process.execPath,
    "build",
    "--compile",
    "--minify",
    "--bytecode",
    "--format=esm",
    "--no-compile-autoload-dotenv",
    "--no-compile-autoload-bunfig",
    `--target=${target}`,
    join(root, "src/cli.ts"),
    "--outfile",
    join(dist, out),
  ]);
  if (!ok) console.error(`build ${target} failed:\n${output}`);
  return ok;
}

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

const built: string[] = [];
for (const { target, out, required } of onlyHost ? targets.slice(0, 1) : targets) {
  if (await buildBinary(target, out)) built.push(out);
  else if (required) process.exit(1);
  else console.warn(`skipped ${target}: it does not build here`);
}

const sums = built.map((name) => `${createHash("sha256").update(readFileSync(join(dist, name))).digest("hex")}  ${basename(name)}`);
writeFileSync(join(dist, "SHA256SUMS"), `${sums.join("\n")}\n`);
console.log(`built ${built.map((b) => `dist/${b}`).join(", ")} and dist/SHA256SUMS`);
