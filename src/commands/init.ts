import { defineCommand } from "citty";
import { existsSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import type { Provider } from "../config/schema-notify.ts";
import { FORGES, forgeOfRemote, forgeSettings } from "../ops/forge-setup.ts";
import { APP_NAME, existingConfig, type InitChoices, type InitWritten, writeInit } from "../ops/init.ts";
import { isInside } from "../system/files.ts";
import { originUrl } from "../system/git.ts";
import { readBranch } from "../system/gitdir.ts";
import { cwdArg, serviceDir } from "./_cwd.ts";

/** The run script a project suggests: its package.json's deploy script, a deploy.sh, else the service's default. */
function suggestedScript(cwd: string): string {
  try {
    const pkg = JSON.parse(readFileSync(join(cwd, "package.json"), "utf8")) as { scripts?: Record<string, string> };
    if (pkg.scripts?.deploy) return "npm run deploy";
  } catch {}
  if (existsSync(join(cwd, "deploy.sh"))) return "./deploy.sh";
  return "npm run deploy";
}

/** Asks each question on the terminal; an empty answer takes the default shown. */
async function ask(questions: { text: string; initial: string }[]): Promise<string[]> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answers: string[] = [];
    for (const { text, initial } of questions)
      answers.push((await rl.question(`${text} [${initial}]: `)).trim() || initial);
    return answers;
  } finally {
    rl.close();
  }
}

function appsOf(list: string | undefined): string[] | undefined {
  if (list === undefined) return undefined;
  const names = list
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  if (names.length === 0) throw new Error("--apps: name at least one app (--apps web,api)");
  for (const name of names)
    if (!APP_NAME.test(name))
      throw new Error(`--apps: "${name}" is not an app name (letters, digits, "-" and "_", at most 40)`);
  if (new Set(names).size !== names.length) throw new Error("--apps: each app once");
  return names;
}

/** What to print after writing: the files, the webhook URL(s), and the forge's settings. */
function report(written: InitWritten, choices: InitChoices, cwd: string, forge: ReturnType<typeof forgeOfRemote>) {
  const shown = (file: string) => relative(cwd, file) || file;
  const terminal = process.stdout.isTTY === true;
  const lines = [`Wrote ${written.config}: every key with its default and one sentence; \`service check\` reads it.`];
  if (!written.inRepository)
    lines.push(
      `${cwd} is not in a git repository: clone the application here, or set repoPath to its clone (service check says so until then).`,
    );
  if (written.gitignore) lines.push(`Added .service/ and ${".service.secret"} to ${written.gitignore}.`);
  for (const dir of written.made) lines.push(`Made the releases directory ${dir}.`);
  for (const secret of written.secrets)
    lines.push(
      `${secret.generated ? "Generated" : "Kept"} the webhook secret${secret.app ? ` of app ${secret.app}` : ""} in ${shown(secret.file)} (mode 0600).`,
    );
  lines.push(
    "",
    `The forge posts to the public HTTPS address of your reverse proxy, which forwards to this service (port 3141;`,
    "see docs/production.md). ?ack=1 answers at once, as the forges give up after 10 s.",
  );
  for (const secret of written.secrets) {
    const path = secret.app ? `/${secret.app}` : "/";
    const url = `https://${choices.host}${path}?ack=1`;
    const value = terminal
      ? readFileSync(secret.file, "utf8").trim()
      : `the content of ${shown(secret.file)} (service secret show${secret.app ? ` --app ${secret.app}` : ""} prints it)`;
    lines.push("", `Webhook${secret.app ? ` of app ${secret.app}` : ""}: ${url}`);
    if (forge.forge) lines.push(...forgeSettings(forge.forge, url, value, forge));
    else
      lines.push(
        `  Secret: ${value}`,
        "  Events: push only; content type application/json.",
        `  (the forge was not recognised from the remote: service init --forge ${FORGES.join("|")} says where to click)`,
      );
  }
  if (choices.apps && !choices.releases)
    lines.push(
      "",
      "The apps share this clone: one app's pull changes what the other runs. Give each its own clone (repoPath) or",
      "its own releases path (docs/multi-app.md); service check warns until then.",
    );
  lines.push("", "Next: service check (what is in force), then service (or service systemd for a unit).");
  process.stdout.write(`${lines.join("\n")}\n`);
}

export const initCommand = defineCommand({
  meta: {
    name: "init",
    description:
      "Write an annotated service.yaml here (every key with its default and one sentence), add .service/ and " +
      ".service.secret to the repository's .gitignore, generate the webhook secret (0600), and print the webhook URL " +
      "and the forge's settings. Never overwrites a config. On a terminal it asks the branch and the run script.",
  },
  args: {
    cwd: cwdArg,
    apps: { type: "string", valueHint: "web,api", description: "Multi-app form: these apps, each on /<name>" },
    releases: { type: "string", valueHint: "path", description: "Deploy with releases under this directory" },
    forge: { type: "string", valueHint: FORGES.join("|"), description: "The forge (default: from the origin remote)" },
    host: {
      type: "string",
      valueHint: "name",
      description: "The public host the forge posts to (default: deploy.example.com)",
    },
    branch: { type: "string", valueHint: "name", description: "The branch to deploy (default: the one checked out)" },
    run: { type: "string", valueHint: "command", description: "The run script (default: npm run deploy)" },
    yes: { type: "boolean", description: "Take the defaults without asking" },
  },
  async run({ args }) {
    const cwd = serviceDir(args.cwd);
    const there = existingConfig(cwd, process.env);
    if (there)
      throw new Error(`${there} exists already: service init never overwrites a config (edit it, or remove it first)`);
    if (args.forge !== undefined && !(FORGES as readonly string[]).includes(args.forge))
      throw new Error(`--forge ${args.forge}: one of ${FORGES.join(", ")}`);
    const apps = appsOf(args.apps);
    if (args.releases !== undefined && args.releases.trim() === "") throw new Error("--releases: name a directory");
    if (args.releases !== undefined && isInside(resolve(cwd, args.releases), cwd))
      throw new Error(
        `--releases ${args.releases}: ${resolve(cwd, args.releases)} is inside the repository's directory ${cwd}; put it outside (a release there would be a file of the checkout)`,
      );
    const remote = forgeOfRemote(await originUrl(cwd, process.env));
    const forge = { ...remote, ...(args.forge ? { forge: args.forge as Provider } : {}) };
    let branch = args.branch ?? readBranch(cwd, process.env) ?? undefined;
    let runScript = args.run ?? suggestedScript(cwd);
    if (!args.yes && process.stdin.isTTY && process.stdout.isTTY) {
      const questions = [];
      if (args.branch === undefined) questions.push({ text: "Branch to deploy", initial: branch ?? "main" });
      if (args.run === undefined) questions.push({ text: "Run script after each pull", initial: runScript });
      const answers = await ask(questions);
      if (args.branch === undefined) branch = answers.shift();
      if (args.run === undefined) runScript = answers.shift() ?? runScript;
    }
    const choices: InitChoices = {
      runScript,
      host: args.host ?? "deploy.example.com",
      ...(branch ? { branch } : {}),
      ...(apps ? { apps } : {}),
      ...(args.releases ? { releases: args.releases } : {}),
    };
    report(await writeInit(cwd, choices, process.env), choices, cwd, forge);
  },
});
