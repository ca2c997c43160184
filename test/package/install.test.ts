/**
 * install.sh (docs/install.md "The binary (install.sh)"): the real script, run by `sh` (dash here) with stdin closed and
 * HOME and TMPDIR in temp dirs, against a local HTTP server that serves the release layout a fresh
 * `scripts/build.ts --only-host` writes (dist/release/: /latest/ and /v<package version>/, as built), plus
 * fixtures: /v9.9.9/ whose SHA256SUMS does not match, /v8.8.8/ whose SHA256SUMS lacks the line, /v6.6.6/ whose
 * SHA256SUMS has other assets' lines around ours. Other platforms and a non-root user are simulated with fake
 * `uname` / `id` scripts first on PATH.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { ROOT, baseEnv, readJson, runProcess, tempDir } from "../_support/helpers.ts";
import { buildRelease, RELEASE_DIR, serveMirror } from "../_support/release-build.ts";

const SCRIPT = join(ROOT, "install.sh");
const SH = Bun.which("sh") ?? "/bin/sh";
const VERSION: string = readJson(join(ROOT, "package.json")).version;
const WRONG_HASH = `${"0".repeat(63)}1`;

let base = "";
let binaryHash = "";
/** Request paths seen by the release server since the current test began. */
let requests: string[] = [];
let stopServer = () => {};

function sha256(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

beforeAll(async () => {
  await buildRelease();
  const built = RELEASE_DIR;
  const binary = join(built, `v${VERSION}`, "service");
  binaryHash = sha256(binary);
  const sums = readFileSync(join(built, `v${VERSION}`, "SHA256SUMS"), "utf8");
  expect(sums).toContain(`${binaryHash}  service\n`);
  expect(readFileSync(join(built, "latest", "SHA256SUMS"), "utf8")).toBe(sums);
  expect(sha256(join(built, "latest", "service"))).toBe(binaryHash);

  const tree = tempDir("service-release-");
  const release = (name: string, shaSums: string) => {
    mkdirSync(join(tree, name));
    try {
      linkSync(binary, join(tree, name, "service"));
    } catch {
      copyFileSync(binary, join(tree, name, "service"));
    }
    writeFileSync(join(tree, name, "SHA256SUMS"), shaSums);
  };
  // Other assets' lines around ours: the script must take the line whose name is exactly "service".
  release(
    "v6.6.6",
    `${WRONG_HASH}  service-linux-arm64\n${WRONG_HASH}  service-linux-x64-musl\n${sums}${WRONG_HASH}  service.sig\n`,
  );
  release("v9.9.9", `${WRONG_HASH}  service\n`);
  release("v8.8.8", `${WRONG_HASH}  service-linux-arm64\n`);

  // The fixtures, else the build's own release layout.
  const mirror = serveMirror([tree, built], (path) => requests.push(path));
  base = mirror.url;
  stopServer = mirror.stop;
}, 120_000);

afterAll(() => stopServer());

beforeEach(() => {
  requests = [];
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  home: string;
  tmp: string;
}

/** Runs `sh install.sh ...args` (or `sh -s -- ...args` with the script on stdin), stdin otherwise closed. */
async function install(
  args: string[],
  options: {
    env?: Record<string, string | undefined>;
    pathPrefix?: string[];
    script?: Uint8Array;
    home?: string;
    shell?: string;
  } = {},
): Promise<Run> {
  const home = options.home ?? tempDir("service-home-");
  const tmp = tempDir("service-tmpdir-");
  const env = baseEnv({
    HOME: home,
    TMPDIR: tmp,
    PATH: [...(options.pathPrefix ?? []), process.env.PATH ?? "/usr/bin:/bin"].join(":"),
    SERVICE_BASE_URL: base,
    ...options.env,
  });
  const shell = options.shell ?? SH;
  const argv = options.script ? [shell, "-s", "--", ...args] : [shell, SCRIPT, ...args];
  const run = await runProcess(argv, { cwd: tempDir(), env, stdin: options.script, timeoutMs: 50_000 });
  return { ...run, home, tmp };
}

function executable(dir: string, name: string, body: string): void {
  writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
}

/** A dir with a `uname` that reports `os` / `arch`. */
function fakeUname(os: string, arch: string): string {
  const dir = tempDir("service-fake-");
  executable(
    dir,
    "uname",
    `case "$1" in -s) echo '${os}' ;; -m) echo '${arch}' ;; *) exec ${Bun.which("uname")} "$@" ;; esac`,
  );
  return dir;
}

/** A dir with an `id` that reports `uid` (1000: a non-root user; 0: root, whoever runs the tests). */
function fakeUid(uid = 1000): string {
  const dir = tempDir("service-fake-");
  executable(dir, "id", `if [ "$1" = -u ]; then echo ${uid}; else exec ${Bun.which("id")} "$@"; fi`);
  return dir;
}

/** A PATH dir holding only the tools install.sh needs, plus `extra`: to take curl, wget or sha256sum away. */
function onlyTools(extra: string[]): string {
  const dir = tempDir("service-path-");
  for (const name of [
    "uname",
    "id",
    "mktemp",
    "rm",
    "mkdir",
    "cp",
    "chmod",
    "mv",
    "awk",
    "tr",
    "cat",
    "grep",
    ...extra,
  ]) {
    const found = Bun.which(name);
    if (!found) throw new Error(`${name} is not installed here`);
    symlinkSync(found, join(dir, name));
  }
  return dir;
}

/** The install went through: the verified binary at `target`, 0755, running, and the final line printed. */
function expectInstalled(run: Run, target: string): void {
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(`installed service ${VERSION} to ${target}\n`);
  expect(run.stdout).toContain(`verified sha256 ${binaryHash}`);
  expect(statSync(target).mode & 0o777).toBe(0o755);
  expect(sha256(target)).toBe(binaryHash);
  // Only the binary in its dir (no staged leftovers), and the temp dir cleaned up.
  expect(readdirSync(join(target, "..")).filter((name) => name.startsWith(".service"))).toEqual([]);
  expect(readdirSync(run.tmp)).toEqual([]);
}

describe("install.sh: the script itself", () => {
  test("is POSIX sh: dash parses it, and posh and checkbashisms accept it when installed", () => {
    const dash = Bun.spawnSync([SH, "-n", SCRIPT], { stderr: "pipe" });
    expect(dash.stderr.toString()).toBe("");
    expect(dash.exitCode).toBe(0);
    const posh = Bun.which("posh");
    if (posh) expect(Bun.spawnSync([posh, "-n", SCRIPT]).exitCode).toBe(0);
    const checkbashisms = Bun.which("checkbashisms");
    if (checkbashisms) {
      const result = Bun.spawnSync([checkbashisms, "--posix", "--extra", SCRIPT], { stdout: "pipe", stderr: "pipe" });
      expect(`${result.stdout}${result.stderr}`).toBe("");
      expect(result.exitCode).toBe(0);
    }
  });

  test("everything is inside functions: the only top-level command is the call on the last line", () => {
    const lines = readFileSync(SCRIPT, "utf8").trimEnd().split("\n");
    expect(lines[lines.length - 1]).toBe('{ _svc_main "$@"; }');
    expect(readFileSync(SCRIPT, "utf8")).toContain('DEFAULT_BASE_URL="https://releases.service.invalid"');
  });

  test("--help prints the flags and env vars and exits 0, downloading nothing", async () => {
    const run = await install(["--help"]);
    expect(run.code).toBe(0);
    for (const word of [
      "--version",
      "--dir",
      "--base-url",
      "--dry-run",
      "SERVICE_VERSION",
      "SERVICE_INSTALL_DIR",
      "SERVICE_BASE_URL",
    ]) {
      expect(run.stdout).toContain(word);
    }
    expect(requests).toEqual([]);
  });

  test("an unknown flag prints the usage and exits 2, downloading nothing", async () => {
    const run = await install(["--frobnicate"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("unknown option: --frobnicate");
    expect(run.stderr).toContain("USAGE");
    expect(requests).toEqual([]);
  });

  test("without a base URL it names the missing setting instead of trying the placeholder host", async () => {
    const dir = join(tempDir(), "bin");
    const run = await install(["--dir", dir], { env: { SERVICE_BASE_URL: undefined } });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("--base-url");
    expect(existsSync(dir)).toBe(false);
  });
});

describe("install.sh: installing", () => {
  test("default install as a non-root user: ~/.local/bin/service, from /latest, verified, with a PATH hint", async () => {
    const home = tempDir("service-home-");
    const run = await install([], { home, pathPrefix: [fakeUid()] });
    const target = join(home, ".local", "bin", "service");
    expectInstalled(run, target);
    expect(requests).toEqual(["/latest/SHA256SUMS", "/latest/service"]);
    expect(run.stdout).toContain(`export PATH="$PATH:${join(home, ".local", "bin")}"`);
    // Nothing but the binary was written to HOME (no rc files).
    expect(readdirSync(home)).toEqual([".local"]);

    const version = Bun.spawnSync([target, "--version"], { cwd: tempDir(), env: baseEnv() });
    expect(version.exitCode).toBe(0);
    expect(version.stdout.toString().trim()).toBe(VERSION);
  });

  test("the default dir is /usr/local/bin as root and ~/.local/bin otherwise (--dry-run downloads nothing)", async () => {
    // No other `service` on this PATH (the machine's own /usr/sbin/service is left out of it).
    const path = [fakeUid(0), onlyTools(["curl", "sha256sum"]), "/usr/local/bin"].join(":");
    const root = await install(["--dry-run"], { env: { PATH: path } });
    expect(root.code).toBe(0);
    expect(root.stdout).toContain("install:   /usr/local/bin/service\n");
    expect(root.stdout).toContain(`url:       ${base}/latest/service\n`);
    expect(root.stdout).toContain(`checksums: ${base}/latest/SHA256SUMS\n`);

    const user = await install(["--dry-run"], { env: { PATH: path.replace(/^[^:]+/, fakeUid()) } });
    expect(user.code).toBe(0);
    expect(user.stdout).toContain(`install:   ${user.home}/.local/bin/service\n`);
    expect(existsSync(join(user.home, ".local"))).toBe(false);
    expect(requests).toEqual([]);
  });

  test.each([
    ["SERVICE_VERSION=0.1.0", [], { SERVICE_VERSION: VERSION }],
    ["SERVICE_VERSION=v0.1.0", [], { SERVICE_VERSION: `v${VERSION}` }],
    ["--version 0.1.0 (over SERVICE_VERSION=9.9.9)", ["--version", VERSION], { SERVICE_VERSION: "9.9.9" }],
    ["--version=v0.1.0", [`--version=v${VERSION}`], {}],
  ] as [string, string[], Record<string, string>][])(
    "a pinned version downloads from /v<version>/: %s",
    async (_, args, env) => {
      const dir = join(tempDir(), "bin");
      const run = await install(["--dir", dir, ...args], { env });
      expectInstalled(run, join(dir, "service"));
      expect(requests).toEqual([`/v${VERSION}/SHA256SUMS`, `/v${VERSION}/service`]);
    },
  );

  test("a custom dir by flag is created, and an existing binary there is replaced", async () => {
    const dir = join(tempDir(), "deep", "er", "bin");
    mkdirSync(dir, { recursive: true });
    // A previous install (this tool, so it may be replaced), with other permissions.
    copyFileSync(join(ROOT, "dist", "service"), join(dir, "service"));
    chmodSync(join(dir, "service"), 0o700);
    const run = await install(["--dir", dir], { env: { SERVICE_INSTALL_DIR: join(tempDir(), "not-this-one") } });
    expectInstalled(run, join(dir, "service"));
    expect(readdirSync(dir)).toEqual(["service"]);
  });

  test("the line for exactly `service` is taken from a SHA256SUMS that lists other assets around it", async () => {
    const dir = join(tempDir(), "bin");
    const run = await install(["--dir", dir, "--version", "6.6.6"]);
    expectInstalled(run, join(dir, "service"));
    expect(requests).toEqual(["/v6.6.6/SHA256SUMS", "/v6.6.6/service"]);
  });

  test("a custom dir by SERVICE_INSTALL_DIR", async () => {
    const dir = join(tempDir(), "opt", "bin");
    const run = await install([], { env: { SERVICE_INSTALL_DIR: dir } });
    expectInstalled(run, join(dir, "service"));
    expect(readdirSync(dir)).toEqual(["service"]);
  });

  test("the script piped on stdin (`cat install.sh | sh -s -- --dir X`) installs", async () => {
    const dir = join(tempDir(), "bin");
    const run = await install(["--dir", dir], { script: readFileSync(SCRIPT) });
    expectInstalled(run, join(dir, "service"));
  });

  test("it installs under bash and posh too (each when installed here)", async () => {
    for (const shell of [Bun.which("bash"), Bun.which("posh")]) {
      if (!shell) continue;
      const dir = join(tempDir(), "bin");
      const run = await install(["--dir", dir, "--version", VERSION], { shell });
      expectInstalled(run, join(dir, "service"));
    }
  });

  test("wget is used when curl is missing, and shasum when sha256sum is missing", async () => {
    const viaWget = join(tempDir(), "bin");
    const wget = await install(["--dir", viaWget], { env: { PATH: onlyTools(["wget", "sha256sum"]) } });
    expectInstalled(wget, join(viaWget, "service"));
    expect(requests).toEqual(["/latest/SHA256SUMS", "/latest/service"]);

    const viaShasum = join(tempDir(), "bin");
    const shasum = await install(["--dir", viaShasum], { env: { PATH: onlyTools(["curl", "shasum"]) } });
    expectInstalled(shasum, join(viaShasum, "service"));
  });
});

describe("install.sh: PATH", () => {
  test("no hint when the dir is already on PATH", async () => {
    const dir = join(tempDir(), "bin");
    const run = await install(["--dir", dir], { env: { PATH: [dir, onlyTools(["curl", "sha256sum"])].join(":") } });
    expectInstalled(run, join(dir, "service"));
    expect(run.stdout).not.toContain("export PATH");
    expect(run.stdout).not.toContain("not on your PATH");
  });
});

describe("install.sh: refusing", () => {
  test("a checksum mismatch aborts with both hashes, installs nothing and cleans its temp dir", async () => {
    const dir = join(tempDir(), "bin");
    mkdirSync(dir);
    const run = await install(["--dir", dir, "--version", "9.9.9"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("checksum mismatch");
    expect(run.stderr).toContain(WRONG_HASH);
    expect(run.stderr).toContain(binaryHash);
    expect(run.stdout).not.toContain("installed service");
    expect(readdirSync(dir)).toEqual([]);
    expect(readdirSync(run.tmp)).toEqual([]);
    expect(requests).toEqual(["/v9.9.9/SHA256SUMS", "/v9.9.9/service"]);
  });

  test("a SHA256SUMS without a line for the asset aborts and installs nothing", async () => {
    const dir = join(tempDir(), "bin");
    const run = await install(["--dir", dir, "--version", "v8.8.8"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("no valid line for service");
    expect(existsSync(dir)).toBe(false);
    expect(readdirSync(run.tmp)).toEqual([]);
  });

  test("a version that is not released fails on the download and installs nothing", async () => {
    const dir = join(tempDir(), "bin");
    const run = await install(["--dir", dir, "--version", "7.0.0"]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(`${base}/v7.0.0/SHA256SUMS`);
    expect(existsSync(dir)).toBe(false);
    expect(readdirSync(run.tmp)).toEqual([]);
  });

  test.each([
    ["Linux", "riscv64"],
    ["Linux", "i686"],
    ["Linux", "armv7l"],
    ["Darwin", "arm64"],
    ["FreeBSD", "amd64"],
  ])(
    "an unsupported platform (%s %s) is named with what is supported; nothing downloaded or installed",
    async (os, arch) => {
      const dir = join(tempDir(), "bin");
      const run = await install(["--dir", dir], { pathPrefix: [fakeUname(os, arch)] });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`unsupported platform: ${os} ${arch}`);
      expect(run.stderr).toContain("Linux x86_64");
      expect(run.stderr).toContain("Linux aarch64");
      expect(requests).toEqual([]);
      expect(existsSync(dir)).toBe(false);
      expect(readdirSync(run.tmp)).toEqual([]);
    },
  );

  test.each([["aarch64"], ["arm64"]])("Linux %s picks the service-linux-arm64 asset", async (arch) => {
    const run = await install(["--dry-run", "--version", "v1.2.3"], { pathPrefix: [fakeUname("Linux", arch)] });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`url:       ${base}/v1.2.3/service-linux-arm64\n`);
    expect(run.stdout).toContain(`checksums: ${base}/v1.2.3/SHA256SUMS\n`);
    expect(requests).toEqual([]);
  });

  test("a truncated script (cut at any point, the first half included) runs nothing", async () => {
    const script = readFileSync(SCRIPT);
    const lastLine = script.lastIndexOf("\n", script.length - 2) + 1;
    const cuts = new Set<number>([Math.floor(script.length / 2)]);
    for (let tenth = 1; tenth < 10; tenth++) cuts.add(Math.floor((script.length * tenth) / 10));
    // Every prefix of the last line short of the whole call, "{ _svc_main "$@"; }".
    for (let cut = lastLine; cut < script.length - 1; cut++) cuts.add(cut);
    const dir = join(tempDir(), "bin");
    for (const cut of cuts) {
      // The dir also in the environment, so that even a call that lost its arguments stays in the temp dir.
      const run = await install(["--dir", dir], { script: script.subarray(0, cut), env: { SERVICE_INSTALL_DIR: dir } });
      expect(`${cut}: ${run.stdout}`).toBe(`${cut}: `);
      expect(existsSync(dir)).toBe(false);
      expect(readdirSync(run.tmp)).toEqual([]);
    }
    expect(requests).toEqual([]);
  });
});

/**
 * A Debian-like layout in a temp dir: usr/local/bin before usr/sbin on PATH, and usr/sbin/service (the system's
 * own, `service nginx reload`). Installing must leave `service` on PATH meaning that one, unless --allow-shadow.
 */
function debianLike(): { local: string; sbin: string; system: string; path: string } {
  const root = tempDir("service-debian-");
  const local = join(root, "usr", "local", "bin");
  const sbin = join(root, "usr", "sbin");
  mkdirSync(local, { recursive: true });
  mkdirSync(sbin, { recursive: true });
  executable(sbin, "service", 'echo "system service: $*"');
  return {
    local,
    sbin,
    system: join(sbin, "service"),
    path: [local, sbin, onlyTools(["curl", "sha256sum"])].join(":"),
  };
}

/** What `service nginx reload` runs on that PATH. */
function serviceOnPath(path: string): string {
  return Bun.spawnSync([SH, "-c", "service nginx reload"], {
    env: { PATH: path },
    cwd: tempDir(),
    stdout: "pipe",
  }).stdout.toString();
}

describe("install.sh never shadows another `service` command (unless --allow-shadow)", () => {
  test("as root with /usr/sbin/service on PATH, the default is /opt/service/bin (off PATH), said in a note (--dry-run)", async () => {
    const layout = debianLike();
    const path = ["/usr/local/bin", layout.sbin, fakeUid(0), onlyTools(["curl", "sha256sum"])].join(":");
    const run = await install(["--dry-run"], { env: { PATH: path } });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("install:   /opt/service/bin/service\n");
    expect(run.stdout).toContain(`another \`service\` command is on your PATH (${layout.system})`);
    expect(run.stdout).toContain("--allow-shadow");
    expect(requests).toEqual([]);
  });

  test("as a user whose ~/.local/bin comes before another `service`, the default is ~/.local/share/service/bin and `service` still runs the other", async () => {
    const layout = debianLike();
    const home = tempDir("service-home-");
    const path = [join(home, ".local", "bin"), layout.path].join(":");
    const run = await install([], { home, env: { PATH: `${fakeUid()}:${path}` } });
    expectInstalled(run, join(home, ".local", "share", "service", "bin", "service"));
    expect(run.stdout).toContain(`note: another \`service\` command is on your PATH (${layout.system})`);
    expect(existsSync(join(home, ".local", "bin", "service"))).toBe(false);
    expect(serviceOnPath(path)).toBe("system service: nginx reload\n");
  });

  test("an earlier install in ~/.local/bin that hides the other `service` is named, with how to remove it", async () => {
    const layout = debianLike();
    const home = tempDir("service-home-");
    const earlier = join(home, ".local", "bin");
    mkdirSync(earlier, { recursive: true });
    copyFileSync(join(ROOT, "dist", "service"), join(earlier, "service"));
    const run = await install([], { home, env: { PATH: [fakeUid(), earlier, layout.path].join(":") } });
    expectInstalled(run, join(home, ".local", "share", "service", "bin", "service"));
    expect(run.stdout).toContain(
      `An earlier install, ${join(earlier, "service")}, still hides it: remove it (rm ${join(earlier, "service")})`,
    );
  });

  test("--dir into a PATH dir ahead of /usr/sbin/service is refused, nothing downloaded; with --allow-shadow it installs there", async () => {
    const layout = debianLike();
    const refused = await install(["--dir", layout.local], { env: { PATH: layout.path } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${join(layout.local, "service")} would hide ${layout.system}`);
    expect(refused.stderr).toContain("--allow-shadow");
    expect(readdirSync(layout.local)).toEqual([]);
    expect(requests).toEqual([]);
    expect(serviceOnPath(layout.path)).toBe("system service: nginx reload\n");

    const forced = await install(["--dir", layout.local, "--allow-shadow"], { env: { PATH: layout.path } });
    expectInstalled(forced, join(layout.local, "service"));
    expect(serviceOnPath(layout.path)).not.toContain("system service");
  });

  test("a different program already at DIR/service is not replaced without --allow-shadow", async () => {
    const layout = debianLike();
    const run = await install(["--dir", layout.sbin], { env: { PATH: layout.path } });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${layout.system} is a different program called service`);
    expect(readFileSync(layout.system, "utf8")).toContain("system service");
    expect(requests).toEqual([]);
  });

  test("a dir after the other `service` on PATH is not shadowing: it installs, with a note that the other comes first", async () => {
    const layout = debianLike();
    const later = join(tempDir(), "bin");
    const path = [layout.path, later].join(":");
    const run = await install(["--dir", later], { env: { PATH: path } });
    expectInstalled(run, join(later, "service"));
    expect(run.stdout).toContain(`\`service\` on your PATH is ${layout.system}`);
    expect(serviceOnPath(path)).toBe("system service: nginx reload\n");
  });
});

describe('install.sh\'s PATH hint appends its dir, never hiding another `service` (docs/install.md "The binary (install.sh)")', () => {
  /** The `export PATH=…` line install.sh printed. */
  const hintOf = (stdout: string) => /^ {2}(export PATH=.*)$/m.exec(stdout)?.[1];
  /** What `service nginx reload` runs once the hint is followed on `path`. */
  const serviceAfter = (hint: string, path: string) =>
    Bun.spawnSync([SH, "-c", `${hint}; service nginx reload`], {
      env: { PATH: path },
      cwd: tempDir(),
      stdout: "pipe",
    }).stdout.toString();

  test("followed, the hint leaves /usr/sbin/service first, and says to run the install by its full path", async () => {
    const layout = debianLike();
    const dir = join(tempDir(), "bin");
    const run = await install(["--dir", dir], { env: { PATH: layout.path } });
    expectInstalled(run, join(dir, "service"));
    const hint = hintOf(run.stdout);
    expect(hint).toBe(`export PATH="$PATH:${dir}"`);
    expect(serviceAfter(hint!, layout.path)).toBe("system service: nginx reload\n");
    expect(run.stdout).toContain(
      `(\`service\` will still run ${layout.system}, which comes first; run ${join(dir, "service")} by its full path)`,
    );
  });

  test("followed where no other `service` is on PATH, the hint makes `service` the installed one", async () => {
    const dir = join(tempDir(), "bin");
    const path = onlyTools(["curl", "sha256sum"]);
    const run = await install(["--dir", dir], { env: { PATH: path } });
    expectInstalled(run, join(dir, "service"));
    const hint = hintOf(run.stdout)!;
    const found = Bun.spawnSync([SH, "-c", `${hint}; command -v service`], { env: { PATH: path }, stdout: "pipe" });
    expect(found.stdout.toString().trim()).toBe(join(dir, "service"));
    expect(run.stdout).not.toContain("will still run");
  });
});
