/**
 * Real SSH keys and signed commits: two keys made by ssh-keygen (one trusted by the allowed-signers file, one
 * not), commits signed by either, unsigned, or changed after signing, and tags. Pushed from the fixture's
 * second clone (`<dir>/pusher`), as a developer would.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultConfig } from "../../src/config/schema-resolved.ts";
import { runDeploy } from "../../src/deploy/pipeline.ts";
import type { DeploySettings } from "../../src/steps/context.ts";
import type { DeployEvent, RollbackTarget } from "../../src/types.ts";
import { baseEnv, git, type Repo, tempDir } from "./helpers.ts";

/** Without ssh-keygen (openssh-client) the signed-commit tests are skipped. */
export const noSshKeygen = Bun.which("ssh-keygen") === null;
if (noSshKeygen)
  console.warn("ssh-keygen is not installed (apt install openssh-client): the signed-commit tests are skipped");

export interface Keys {
  /** The private key files. */
  alice: string;
  mallory: string;
  /** An allowed-signers file with alice only. */
  allowed: string;
  /** The line of each key for an allowed-signers file. */
  line(name: "alice" | "mallory"): string;
}

function keygen(file: string, comment: string): void {
  const made = Bun.spawnSync(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", file]);
  if (made.exitCode !== 0) throw new Error(`ssh-keygen failed: ${made.stderr.toString()}`);
}

/** Two fresh keys and an allowed-signers file trusting alice (as alice@example.com). */
export function makeKeys(): Keys {
  const dir = tempDir("service-keys-");
  const alice = join(dir, "alice");
  const mallory = join(dir, "mallory");
  keygen(alice, "alice");
  keygen(mallory, "mallory");
  const line = (name: "alice" | "mallory") =>
    `${name}@example.com ${readFileSync(`${join(dir, name)}.pub`, "utf8").trim()}`;
  const allowed = join(dir, "allowed_signers");
  writeFileSync(allowed, `# who may deploy\n${line("alice")}\n`);
  return { alice, mallory, allowed, line };
}

const pusherOf = (repo: Repo) => join(repo.dir, "pusher");

/** git in the pusher, signing with `key` (no key: unsigned). */
const signing = (key: string | null) => (key ? ["-c", "gpg.format=ssh", "-c", `user.signingkey=${key}`] : []);

/** Commits `files` in the pusher, signed with `key` (null: unsigned), and pushes; returns the commit. */
export function pushSigned(
  repo: Repo,
  key: string | null,
  files: Record<string, string> = {},
  message = "change",
): string {
  const pusher = pusherOf(repo);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(pusher, name), content);
  git(pusher, "add", "-A");
  git(pusher, ...signing(key), "commit", "--quiet", "--allow-empty", ...(key ? ["-S"] : []), "-m", message);
  git(pusher, "push", "--quiet", "origin", "main");
  return git(pusher, "rev-parse", "HEAD");
}

/**
 * Pushes a commit made of `commit`'s object with `edit` applied to its text (its signature kept): a changed
 * message makes a bad signature; an added header makes a signature of another kind.
 */
export function pushEdited(repo: Repo, commit: string, edit: (text: string) => string): string {
  const pusher = pusherOf(repo);
  const text = edit(git(pusher, "cat-file", "commit", commit));
  const file = join(tempDir("service-object-"), "commit");
  writeFileSync(file, `${text}\n`);
  const made = git(pusher, "hash-object", "-t", "commit", "-w", file);
  git(pusher, "update-ref", "refs/heads/main", made);
  git(pusher, "push", "--quiet", "--force", "origin", "main");
  return made;
}

/** An annotated tag of HEAD in the pusher, signed with `key` (null: unsigned; "light": a lightweight tag), pushed. */
export function pushTag(repo: Repo, name: string, key: string | null | "light"): void {
  const pusher = pusherOf(repo);
  if (key === "light") git(pusher, "tag", name);
  else git(pusher, ...signing(key), "tag", ...(key ? ["-s"] : ["-a"]), "-m", name, name);
  git(pusher, "push", "--quiet", "origin", `refs/tags/${name}`);
}

/**
 * A deploy of `repo`'s clone through the pipeline with `settings` (allowedSigners among them; `target`: a rollback
 * or a ref); its `[step]` lines, its result, its record, and whether its script ran.
 */
export async function deploySigned(repo: Repo, settings: Partial<DeploySettings>, target?: RollbackTarget) {
  const cwd = tempDir();
  const marker = join(cwd, "ran");
  const lines: string[] = [];
  const result = await runDeploy({
    id: crypto.randomUUID(),
    config: { ...defaultConfig(cwd), repoPath: repo.clone, runScript: `echo ran >> ${marker}`, ...settings },
    trigger: target ? "rollback" : "cli",
    target,
    cwd,
    env: baseEnv(),
    sink: (event: DeployEvent) => {
      if (event.type === "step") lines.push(`[${event.step}] ${event.text}`);
    },
  });
  return { result, lines, ran: existsSync(marker), record: JSON.parse(readFileSync(result.log.json, "utf8")) };
}
