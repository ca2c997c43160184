/**
 * Age-encrypted env files (docs/security.md "Secrets"), made by the `age` command line (Debian's `age` and
 * `age-keygen`): an `envFile` that is one, binary or armored, is opened in memory with the identities of
 * `ageIdentityFile`; one, two recipients; a wrong key, a truncated file and a passphrase file are each a clear
 * refusal before the pull; an identity file others can read stops the start.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lastLine, makeRepo, runCli, SECRET, startServer, tempDir } from "../_support/helpers.ts";
import { noPty } from "../_support/pty.ts";
import { docBlock } from "../_support/doc-snippets.ts";

const API_KEY = "age-api-key-0123456789";
/** The age tools (Debian's `age`, which .ci/run installs): without them these tests are skipped. */
const noAge = Bun.which("age") === null || Bun.which("age-keygen") === null;
if (noAge) console.warn("age or age-keygen is not installed: the age interoperability tests are skipped");
const PLAIN = `API_KEY=${API_KEY}\nDB_PASSWORD="age db password 0123"\n`;

/** Runs a command of the age tools; throws with its stderr when it fails. */
function age(args: string[], cwd: string, stdin?: string): string {
  const run = Bun.spawnSync(args, { cwd, stdin: stdin === undefined ? "ignore" : Buffer.from(stdin) });
  if (run.exitCode !== 0) throw new Error(`${args.join(" ")}: ${run.stderr.toString()}`);
  return run.stdout.toString();
}

/** A key pair made by age-keygen in `dir`: the identity file (0600) and its recipient. */
function keyPair(dir: string, name: string): { file: string; recipient: string } {
  const file = join(dir, name);
  age(["age-keygen", "-o", file], dir);
  chmodSync(file, 0o600);
  return { file, recipient: age(["age-keygen", "-y", file], dir).trim() };
}

/** A service directory whose envFile is `secrets.env.age`, encrypted by `age` with `flags`; the script prints the variables. */
function service(flags: (dir: string) => string[], identity?: (dir: string) => string) {
  const repo = makeRepo();
  const dir = tempDir("service-dir-");
  writeFileSync(join(dir, "plain.env"), PLAIN);
  age(["age", ...flags(dir), "-o", "secrets.env.age", "plain.env"], dir);
  const script = join(dir, "print.sh");
  writeFileSync(script, 'echo "API_KEY=$API_KEY"\necho "DB_PASSWORD=$DB_PASSWORD"');
  const identityLine = identity ? `ageIdentityFile: ${identity(dir)}\n` : "";
  writeFileSync(
    join(dir, "service.yaml"),
    `repoPath: ${repo.clone}\nrunScript: sh ${script}\nenvFile: secrets.env.age\n${identityLine}`,
  );
  return { repo, dir };
}

/** A deploy that must be refused before the pull, saying `said`. */
async function refused(repo: ReturnType<typeof makeRepo>, dir: string, said: string) {
  const before = repo.head();
  repo.push({ "new.txt": "1\n" });
  const { code, stdout } = await runCli(["deploy"], { cwd: dir });
  expect(stdout).toContain(`[config] the deploy's variables cannot be read: ${said}`);
  expect(code).toBe(1);
  expect(lastLine(stdout)).toBe("[done] ok=false exitCode=null");
  expect(repo.head()).toBe(before);
  for (const value of [API_KEY, "age db password"]) expect(stdout).not.toContain(value);
  return stdout;
}

describe.skipIf(noAge)('an age-encrypted envFile is opened in memory (docs/security.md "Secrets")', () => {
  test("binary, one recipient: the values reach the script as ***; check lists the names", async () => {
    let key = "";
    const { dir } = service(
      (dir) => ["-r", keyPair(dir, "key.txt").recipient],
      (dir) => (key = join(dir, "key.txt")),
    );
    expect(readFileSync(join(dir, "secrets.env.age"), "latin1")).toStartWith("age-encryption.org/v1\n");
    const { code, stdout } = await runCli(["deploy"], { cwd: dir });
    expect(stdout).toContain("API_KEY=***\nDB_PASSWORD=***\n");
    expect(code).toBe(0);
    const check = await runCli(["check"], { cwd: dir, env: { SERVICE_SECRET: SECRET } });
    expect(check.stdout).toContain("envFile (age-encrypted) gives: API_KEY, DB_PASSWORD");
    expect(check.stdout).toContain(`(age-encrypted, from ${join(dir, "secrets.env.age")})`);
    expect(check.stdout).toMatch(new RegExp(`ageIdentityFile\\s+${key}`));
    expect(check.code).toBe(0);
    for (const value of [API_KEY, "age db password"]) expect(check.stdout).not.toContain(value);
  });

  test("armored, two recipients: either identity opens it", async () => {
    const { dir } = service(
      (dir) => ["-a", "-r", keyPair(dir, "one.txt").recipient, "-r", keyPair(dir, "two.txt").recipient],
      (dir) => join(dir, "two.txt"),
    );
    expect(readFileSync(join(dir, "secrets.env.age"), "utf8")).toStartWith("-----BEGIN AGE ENCRYPTED FILE-----\n");
    expect((await runCli(["deploy"], { cwd: dir })).stdout).toContain("API_KEY=***\n");
    const yaml = readFileSync(join(dir, "service.yaml"), "utf8");
    writeFileSync(join(dir, "service.yaml"), yaml.replace("two.txt", "one.txt"));
    const { code, stdout } = await runCli(["deploy"], { cwd: dir });
    expect(stdout).toContain("API_KEY=***\nDB_PASSWORD=***\n");
    expect(code).toBe(0);
  });
});

describe.skipIf(noAge)(
  'an age file that cannot be opened refuses the deploy before the pull (docs/security.md "Secrets")',
  () => {
    test("a wrong key: none of the identities is a recipient; check says it is a problem", async () => {
      const { repo, dir } = service(
        (dir) => ["-r", keyPair(dir, "right.txt").recipient],
        (dir) => keyPair(dir, "wrong.txt").file,
      );
      await refused(
        repo,
        dir,
        `${join(dir, "secrets.env.age")} (envFile) cannot be decrypted: none of the identities in ${join(dir, "wrong.txt")} is one of its recipients; nothing runs`,
      );
      const check = await runCli(["check"], { cwd: dir, env: { SERVICE_SECRET: SECRET } });
      expect(check.code).toBe(1);
      expect(check.stdout).toContain("is one of its recipients: every deploy would be refused");
    });

    test("a truncated file, binary or armored", async () => {
      const { repo, dir } = service(
        (dir) => ["-r", keyPair(dir, "key.txt").recipient],
        (dir) => join(dir, "key.txt"),
      );
      const file = join(dir, "secrets.env.age");
      const whole = readFileSync(file);
      writeFileSync(file, whole.subarray(0, whole.length - 20));
      await refused(repo, dir, `${file} (envFile) cannot be decrypted: it is damaged or truncated (`);
      const armored = age(["age", "-a", "-r", age(["age-keygen", "-y", "key.txt"], dir).trim(), "plain.env"], dir);
      writeFileSync(file, armored.split("\n").slice(0, 2).join("\n"));
      await refused(repo, dir, `${file} (envFile) cannot be decrypted: its armor is damaged or truncated (`);
    });

    test.skipIf(noPty)("a passphrase file (age -p) is refused: not supported", async () => {
      const { repo, dir } = service(
        (dir) => ["-r", keyPair(dir, "key.txt").recipient],
        (dir) => join(dir, "key.txt"),
      );
      // age reads a passphrase from the terminal only: `script` gives it one.
      age(
        ["script", "-qec", "age -p -o secrets.env.age plain.env", "/dev/null"],
        dir,
        "pass-phrase-0123\npass-phrase-0123\n",
      );
      expect(readFileSync(join(dir, "secrets.env.age"), "latin1")).toContain("\n-> scrypt ");
      await refused(
        repo,
        dir,
        `${join(dir, "secrets.env.age")} (envFile) cannot be decrypted: it is encrypted with a passphrase (age -p), which is not supported`,
      );
    });

    test("no ageIdentityFile, or one that is missing: refused, saying why", async () => {
      const { repo, dir } = service((dir) => ["-r", keyPair(dir, "key.txt").recipient]);
      const file = join(dir, "secrets.env.age");
      await refused(
        repo,
        dir,
        `${file} (envFile) is age-encrypted and no ageIdentityFile is set: set it to the identity file (age-keygen's) that opens it; nothing runs`,
      );
      writeFileSync(
        join(dir, "service.yaml"),
        `${readFileSync(join(dir, "service.yaml"), "utf8")}ageIdentityFile: gone.txt\n`,
      );
      await refused(repo, dir, `the ageIdentityFile ${join(dir, "gone.txt")} cannot be read (ENOENT); nothing runs`);
    });
  },
);

describe.skipIf(noAge)('an identity file others can read (docs/security.md "Secrets")', () => {
  test("stops the start, and is a problem for check", async () => {
    const { dir } = service(
      (dir) => ["-r", keyPair(dir, "key.txt").recipient],
      (dir) => join(dir, "key.txt"),
    );
    const key = join(dir, "key.txt");
    chmodSync(key, 0o640);
    const said = `the ageIdentityFile ${key} can be read by other users (mode 0640): it opens every file encrypted to it; run chmod 600 ${key}`;
    const check = await runCli(["check"], { cwd: dir, env: { SERVICE_SECRET: SECRET } });
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(said);
    // It stops before its banner: the helper's error carries its exit code and what it said.
    const start = startServer(dir, { SERVICE_SECRET: SECRET, SERVICE_SKIP_HTTPS_PROMPT: "1" });
    await expect(start).rejects.toThrow("server exited with 1");
    await expect(start).rejects.toThrow(said);
  });
});

describe.skipIf(noAge)('the examples of docs/security.md "Secrets" work as written', () => {
  test("an age-encrypted env file, and envCommand printing JSON (age -d)", async () => {
    const repo = makeRepo();
    const dir = tempDir("service-dir-");
    writeFileSync(join(dir, "web.env"), PLAIN);
    sh(docBlock("docs/security.md", "sh", "An age-encrypted env file"), dir);
    expect(readFileSync(join(dir, "web.env.age"), "latin1")).toStartWith("age-encryption.org/v1\n");
    const script = join(dir, "print.sh");
    writeFileSync(script, 'echo "API_KEY=$API_KEY"\ntest "$DB_PASSWORD" = "age db password 0123"');
    const deploy = async (yaml: string) => {
      writeFileSync(join(dir, "service.yaml"), `repoPath: ${repo.clone}\nrunScript: sh ${script}\n${yaml}`);
      return runCli(["deploy"], { cwd: dir });
    };
    const fromFile = await deploy(docBlock("docs/security.md", "yaml", "An age-encrypted env file"));
    expect(fromFile.stdout).toContain("API_KEY=***\n");
    expect(fromFile.code).toBe(0);
    writeFileSync(join(dir, "web.json"), JSON.stringify({ API_KEY, DB_PASSWORD: "age db password 0123" }));
    sh('age -r "$(age-keygen -y age.key)" -o web.json.age web.json && rm web.json', dir);
    const fromCommand = await deploy(docBlock("docs/security.md", "yaml", "Secrets from a command"));
    expect(fromCommand.stdout).toContain("API_KEY=***\n");
    expect(fromCommand.code).toBe(0);
  });
});

/** Runs a shell snippet in `cwd`; throws with its stderr when it fails. */
function sh(script: string, cwd: string): void {
  age(["sh", "-ec", script], cwd);
}
