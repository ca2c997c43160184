/**
 * Builds into dist/:
 *   dist/release/vX.Y.Z/                the release as install.sh downloads it (X.Y.Z: package.json "version"):
 *     service                           standalone Linux x64 binary
 *     service-linux-arm64               standalone Linux arm64 binary
 *     service-<os>-<arch>               the other targets Bun can cross-compile from the npm registry
 *     SHA256SUMS                        sha256 of every binary, in `sha256sum -c` format
 *   dist/release/latest/                the same files
 *   dist/release/install.sh             the installer: publish dist/release/ at install.sh's --base-url, and
 *                                       `<base-url>/install.sh` is the script the docs' install command fetches
 *   dist/service                        the Linux x64 binary again, to run it here (the end-to-end tests do)
 *   dist/node/index.js, dist/node/cli.js  the library and the CLI built for Node.js (exports "node", bin)
 *   dist/types/                         the library's type declarations
 *
 * Usage: npm run build [-- --only-host | --only-library]
 *   --only-host     just the Linux x64 binary (in the release layout and dist/service), for the end-to-end run
 *   --only-library  just dist/node and dist/types (what `npm install` from a clone or git URL builds)
 */
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
const dist = join(root, "dist");
const onlyHost = process.argv.includes("--only-host");
const onlyLibrary = process.argv.includes("--only-library");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
  version: string;
  dependencies: Record<string, string>;
};
const releases = join(dist, "release");
const release = join(releases, `v${pkg.version}`);

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

/** A hard link where the filesystem allows it (the binaries are large), else a copy. */
function place(from: string, to: string): void {
  rmSync(to, { force: true });
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
  }
}

/**
 * The JIT's tier-up thresholds at start, scaled: code that runs once while the server starts stays in the
 * interpreter, so neither its compiled code nor the compiler's own pages are part of the idle memory (3 MB). The
 * serve command sets the normal policy once it listens (docs/performance.md).
 */
const JIT_POLICY = "100";

/**
 * The bytecode's layout, profiled: the host binary built once, started twice in a temp dir with the README's quick
 * start configuration (the second start is the one recorded, as every start after the first), stopped once it
 * listens. The build then places the bytecode a start uses together at the front (2 MB less idle memory, a faster
 * start). Undefined when the profile could not be taken: the binary is then built without one, and this says so.
 */
async function bytecodeProfile(dir: string): Promise<string | undefined> {
  const binary = join(dir, "service");
  const order = join(dir, "bytecode-order.txt");
  // The host's own target, to run it here; the profile applies to every target's bytecode.
  if (!(await buildBinary(`bun-${process.platform}-${process.arch}`, binary, undefined))) return undefined;
  const repo = join(dir, "repo");
  mkdirSync(repo);
  if (!run(["git", "init", "-q", repo]).ok) return undefined;
  writeFileSync(
    join(repo, "service.yaml"),
    'hostname: 127.0.0.1\nrunScript: |\n  echo "deploying $(git rev-parse --short HEAD)"\n  ls\n',
  );
  // The quick start as written: none of this shell's SERVICE_* settings.
  const own = Object.entries(process.env).filter(([key]) => !key.startsWith("SERVICE_"));
  const env = { ...Object.fromEntries(own), NO_COLOR: "1", SERVICE_SKIP_HTTPS_PROMPT: "1", SERVICE_PORT: "0" };
  for (const profile of [undefined, order]) {
    const proc = Bun.spawn([binary], {
      cwd: repo,
      env: profile ? { ...env, BUN_BYTECODE_ORDER_OUT: profile } : env,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const timer = setTimeout(() => proc.kill("SIGKILL"), 30_000);
    let seen = "";
    for await (const chunk of proc.stdout) {
      seen += new TextDecoder().decode(chunk);
      if (seen.includes("listening on")) break;
    }
    proc.kill("SIGTERM");
    await proc.exited;
    clearTimeout(timer);
    if (!seen.includes("listening on")) {
      console.warn(`no bytecode profile: the profiling start did not listen:\n${seen}`);
      return undefined;
    }
  }
  return existsSync(order) ? order : undefined;
}

async function buildBinary(target: string, out: string, order: string | undefined): Promise<boolean> {
  // The binary must not pick up a .env or bunfig.toml from whatever directory it runs in.
  const { ok, output } = run([
    process.execPath,
    "build",
    "--compile",
    "--minify",
    "--bytecode",
    "--format=esm",
    // Each dynamic import its own chunk inside the binary: a `node:` module that only a lazily loaded feature
    // imports is loaded with it, not at start (3 MB of a plain server's idle memory).
    "--splitting",
    "--no-compile-autoload-dotenv",
    "--no-compile-autoload-bunfig",
    `--compile-jit-policy=${JIT_POLICY}`,
    ...(order ? [`--bytecode-order=${order}`] : []),
    `--target=${target}`,
    join(root, "src/cli.ts"),
    "--outfile",
    out,
  ]);
  if (!ok) console.error(`build ${target} failed:\n${output}`);
  return ok;
}

/**
 * The library and the CLI for Node.js: one ESM file each, dependencies left to npm, `#runtime` resolved to
 * node:http/child_process. `import.meta.main` is miscompiled for --target=node, so the CLI bundle gets it as
 * `true`: dist/node/cli.js is only ever run (through scripts/service.js), never imported for its exports.
 */
function buildLibrary(): void {
  rmSync(join(dist, "node"), { recursive: true, force: true });
  rmSync(join(dist, "types"), { recursive: true, force: true });
  const externals = Object.keys(pkg.dependencies).flatMap((name) => ["--external", name]);
  const node = ["build", "--target=node", "--format=esm", ...externals, "--outdir", join(dist, "node")];
  const library = run([process.execPath, ...node, join(root, "src/index.ts")]);
  if (!library.ok) throw new Error(`the Node.js build failed:\n${library.output}`);
  const cli = run([process.execPath, ...node, "--define", "import.meta.main=true", join(root, "src/cli.ts")]);
  if (!cli.ok) throw new Error(`the Node.js build of the CLI failed:\n${cli.output}`);
  const tsc = join(root, "node_modules", ".bin", "tsc");
  const types = run([
    tsc,
    "--ignoreConfig",
    join(root, "src/index.ts"),
    "--declaration",
    "--emitDeclarationOnly",
    "--outDir",
    join(dist, "types"),
    "--rootDir",
    join(root, "src"),
    "--target",
    "ES2022",
    "--module",
    "ESNext",
    "--moduleResolution",
    "bundler",
    "--strict",
    "--skipLibCheck",
    "--allowImportingTsExtensions",
    "--resolveJsonModule",
    "--types",
    "bun",
  ]);
  if (!types.ok) throw new Error(`the type declarations failed:\n${types.output}`);
}

mkdirSync(dist, { recursive: true });
buildLibrary();
if (onlyLibrary) {
  console.log("built dist/node and dist/types");
  process.exit(0);
}
rmSync(release, { recursive: true, force: true });
mkdirSync(release, { recursive: true });

const profileDir = mkdtempSync(join(tmpdir(), "service-profile-"));
const built: string[] = [];
try {
  const order = await bytecodeProfile(profileDir).catch((error: Error) => {
    console.warn(`no bytecode profile: ${error.message}`);
    return undefined;
  });
  if (!order) console.warn("building without a bytecode profile: the binary starts slower and holds more memory idle");
  for (const { target, out, required } of onlyHost ? targets.slice(0, 1) : targets) {
    if (await buildBinary(target, join(release, out), order)) built.push(out);
    else if (required) process.exitCode = 1;
    else console.warn(`skipped ${target}: it does not build here`);
  }
} finally {
  rmSync(profileDir, { recursive: true, force: true });
}
if (process.exitCode === 1) process.exit(1);

const sums = built.map(
  (name) =>
    `${createHash("sha256")
      .update(readFileSync(join(release, name)))
      .digest("hex")}  ${name}`,
);
writeFileSync(join(release, "SHA256SUMS"), `${sums.join("\n")}\n`);
// latest/ is this version: install.sh without --version reads it.
const latest = join(releases, "latest");
rmSync(latest, { recursive: true, force: true });
mkdirSync(latest);
for (const name of readdirSync(release)) place(join(release, name), join(latest, name));
place(join(release, "service"), join(dist, "service"));
// The docs' install command fetches <base-url>/install.sh: the published directory must hold it.
copyFileSync(join(root, "install.sh"), join(releases, "install.sh"));
console.log(
  `built dist/release/v${pkg.version}/ and dist/release/latest/ (${[...built, "SHA256SUMS"].join(", ")}), dist/release/install.sh, dist/service, dist/node and dist/types`,
);
