/**
 * Rewrites the dashboard's screenshots in docs/ (`bun scripts/screenshots.ts`): a demo of three apps in a temp dir,
 * each a real git repository deployed by the real CLI (ok, failed, rolled back, released, paused), photographed
 * by Debian's headless Chromium at 1280 px. Everything it starts is stopped, and its temp dir removed, at the end.
 */
import { chmodSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { CHROMIUM, CHROMIUM_ARGS } from "../test/_support/chromium.ts";
import { baseEnv, CLI, makeRepoIn, makeTempDir, pushAs, type Repo, ROOT, waitFor } from "../test/_support/repo.ts";

const DOCS = join(ROOT, "docs");
const TOKEN = "demo-admin-token-0123456789abcdef";
const WIDTH = 1280;
const APPS = ["web", "api", "worker"] as const;
type App = (typeof APPS)[number];

/** The apps' deploy script: what a build prints, for as long and with the exit code the next plan file says. */
const DEPLOY_SH = `#!/bin/sh
plan="$DEMO_PLANS/$SERVICE_APP"
seconds=0.3; code=0
if [ -f "$plan" ]; then read seconds code error < "$plan"; rm -f "$plan"; fi
echo "> npm ci"
echo "added 412 packages, and audited 413 packages in 2s"
echo "> npm run build"
sleep "$seconds"
if [ "$code" != 0 ]; then
  echo "$error" >&2
  exit "$code"
fi
echo "built $SERVICE_APP in \${seconds}s"
echo "> systemctl --user restart $SERVICE_APP"
`;

/** What happens, in order: a push (or a "Deploy now" from the dashboard) and how long and how well it builds. */
const STORY: { app: App; subject?: string; author?: string; seconds: number; error?: string }[] = [
  { app: "web", subject: "Add search to the product list", author: "Alice Martin", seconds: 0.9 },
  { app: "api", subject: "Add rate limiting to the orders endpoint", author: "Bob Chen", seconds: 0.6 },
  { app: "worker", subject: "Retry failed webhook deliveries with backoff", author: "Chloé Dubois", seconds: 0.4 },
  { app: "web", subject: "Fix login redirect loop", author: "Alice Martin", seconds: 1.2 },
  { app: "api", subject: "Cache product prices for 5 minutes", author: "Bob Chen", seconds: 0.5 },
  {
    app: "worker",
    subject: "Add nightly invoice export job",
    author: "Chloé Dubois",
    seconds: 0.7,
    error: 'Error: relation "invoices" does not exist (run the migrations first)',
  },
  { app: "worker", subject: "Fix invoice export for empty months", author: "Chloé Dubois", seconds: 0.5 },
  { app: "web", subject: "Lazy-load product images", author: "Dan Okafor", seconds: 1.5 },
  {
    app: "web",
    subject: "Upgrade the image CDN client",
    author: "Dan Okafor",
    seconds: 0.5,
    error: "Error: Cannot find module 'cdn-client/v3'",
  },
  {
    app: "api",
    subject: "Switch orders to the new payments client",
    author: "Bob Chen",
    seconds: 0.8,
    error: "Error: cannot reach payments.internal:8443 (ECONNREFUSED)",
  },
  { app: "web", seconds: 0.3 },
  { app: "api", subject: "Pin the old payments client until the fix", author: "Bob Chen", seconds: 0.4 },
  { app: "web", subject: "Update copy on the checkout page", author: "Dan Okafor", seconds: 0.6 },
  { app: "worker", subject: "Lower the queue poll interval to 2 s", author: "Chloé Dubois", seconds: 0.3 },
  { app: "api", subject: "Log slow queries over 500 ms", author: "Bob Chen", seconds: 0.7 },
  { app: "web", subject: "Add dark mode toggle", author: "Alice Martin", seconds: 1.0 },
];

interface Server {
  proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  url: string;
  admin: string;
}

async function start(demo: string): Promise<Server> {
  const proc = Bun.spawn(CLI, {
    cwd: demo,
    env: baseEnv({ SERVICE_PORT: "0", SERVICE_ADMIN_PORT: "0", SERVICE_ADMIN_TOKEN: TOKEN, DEMO_PLANS: demo }),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let out = "";
  void (async () => {
    for await (const chunk of proc.stdout) out += new TextDecoder().decode(chunk);
  })();
  const [url, admin] = await waitFor(() => {
    if (proc.exitCode !== null) throw new Error(`the service exited with ${proc.exitCode}: ${out}`);
    const web = /listening on (http:\/\/localhost:\d+)/.exec(out)?.[1];
    const adm = /^admin: (http:\/\/\S+?)\/? /m.exec(out)?.[1];
    return web && adm ? [web, adm] : undefined;
  }, "the service's banner");
  return { proc, url: url!, admin: admin! };
}

const api = (server: Server, path: string, body?: unknown) =>
  fetch(`${server.admin}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${TOKEN}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** Each step's deploy, as a push's webhook or (no new commit) the dashboard's "Deploy now"; ids in order. */
async function play(server: Server, demo: string, repos: Record<App, Repo>): Promise<string[]> {
  const ids: string[] = [];
  for (const step of STORY) {
    writeFileSync(join(demo, step.app), `${step.seconds} ${step.error ? 1 : 0} ${step.error ?? ""}\n`);
    if (step.subject) {
      const author = step.author!;
      const login = author.split(" ")[0]!.toLowerCase();
      pushAs(repos[step.app], `${author} <${login}@example.com>`, step.subject);
      // A push event's body as a forge sends it: its branch, and who pushed (the deploy's "By").
      const res = await fetch(`${server.url}/${step.app}`, {
        method: "POST",
        headers: { "x-service-secret": `demo-secret-of-${step.app}-0123456789`, "content-type": "application/json" },
        body: JSON.stringify({ ref: "refs/heads/main", sender: { login } }),
      });
      if (res.status !== 200) throw new Error(`the ${step.app} webhook answered ${res.status}`);
      await res.text(); // the output, streamed until the deploy ends
    } else {
      const res = await api(server, `/api/apps/${step.app}/deploy`, {});
      if (res.status !== 202 && res.status !== 200) throw new Error(`deploy ${step.app}: ${await res.text()}`);
    }
    const [last] = (await waitFor(async () => {
      const list = (await (await api(server, `/api/deploys?app=${step.app}&limit=1`)).json()) as {
        id: string;
        status: string;
        ok?: boolean;
        rolledBack?: boolean;
      }[];
      return list[0] && list[0].status !== "running" && !ids.includes(list[0].id) ? list : undefined;
    }, `the ${step.app} deploy to end`)) as { id: string; ok?: boolean; rolledBack?: boolean }[];
    const outcome = last!.rolledBack ? "rolled_back" : last!.ok ? "ok" : "failed";
    const expected = step.error ? (step.app === "api" ? "rolled_back" : "failed") : "ok";
    if (outcome !== expected) {
      const log = await (await api(server, `/api/deploys/${last!.id}/log`)).text();
      throw new Error(`the ${step.app} deploy ended ${outcome}, not ${expected}:\n${log}`);
    }
    ids.push(last!.id);
  }
  const paused = await api(server, "/api/apps/worker/pause", { reason: "Waiting for the database migration review" });
  if (paused.status !== 200) throw new Error(`pause: ${await paused.text()}`);
  return ids;
}

/** A PNG of the page's top, at most `height` px (less when the page is shorter), under docs/. */
async function shoot(page: Page, name: string, height: number): Promise<void> {
  const full = await page.evaluate(() => document.documentElement.scrollHeight);
  const file = join(DOCS, name);
  const clip = { x: 0, y: 0, width: WIDTH, height: Math.min(full, height) };
  await page.screenshot({ path: file, clip, fullPage: true });
  console.log(`${name}: ${Math.round(statSync(file).size / 1024)} KB`);
}

async function photograph(server: Server, demo: string, ids: string[]): Promise<void> {
  const { chromium } = await import("playwright-core");
  const context = await chromium.launchPersistentContext(join(demo, "chromium"), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: WIDTH, height: 800 },
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(20_000);
    await page.goto(`${server.admin}/`);
    await page.getByLabel("Admin token").fill(TOKEN);
    await page.getByLabel(/name/i).fill("alice");
    await page.getByRole("button", { name: "Log in" }).click();

    await page.getByText("paused: Waiting for the database migration review").waitFor();
    for (const app of APPS) await page.getByRole("region", { name: app }).waitFor();
    await shoot(page, "dashboard-apps.png", 760);

    await page.goto(`${server.admin}/deploys`);
    await waitFor(async () => (await page.locator("tbody tr").count()) === STORY.length, "every deploy listed");
    await shoot(page, "dashboard-history.png", 700);

    const ok = ids[ids.length - 1]!; // web's last push: pull, release, build, switch
    await page.goto(`${server.admin}/deploys/${ok}`);
    await page
      .locator("#outcome")
      .getByText(/^Succeeded/)
      .waitFor();
    await page.locator("#timeline [data-phase]").first().waitFor();
    await page.locator("#log").getByText("systemctl --user restart web").waitFor();
    await shoot(page, "dashboard-deploy.png", 1040);

    const rolledBack = ids[STORY.findIndex((step) => step.app === "api" && step.error)]!;
    await page.goto(`${server.admin}/deploys/${rolledBack}`);
    await page
      .locator("#outcome")
      .getByText(/^Rolled back/)
      .waitFor();
    await page.locator("#log").getByText("[done]").waitFor();
    await shoot(page, "dashboard-rolled-back.png", 1100);

    await page.goto(`${server.admin}/apps/web`);
    await waitFor(async () => (await page.locator("svg.bars rect").count()) === 7, "a bar per web deploy");
    await page.locator("#rules").getByText("year-end").first().waitFor();
    await shoot(page, "dashboard-app.png", 1000);

    await page.goto(`${server.admin}/wall`);
    for (const app of APPS)
      await page
        .locator(`.tile[data-app="${app}"] .last`)
        .getByText(/^last /)
        .waitFor();
    await shoot(page, "dashboard-wall.png", 420);
  } finally {
    await context.close();
  }
}

/** The date `days` from now (a freeze window ahead, never in force while the story plays). */
const day = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

async function main(): Promise<void> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM} (apt-get install chromium)`);
  const demo = makeTempDir("service-screenshots-");
  let server: Server | undefined;
  try {
    const script = join(demo, "deploy.sh");
    writeFileSync(script, DEPLOY_SH);
    chmodSync(script, 0o755);
    mkdirSync(join(demo, "web-releases"));
    const repos = {} as Record<App, Repo>;
    for (const app of APPS) {
      repos[app] = makeRepoIn(join(demo, `${app}-repo`), { "README.md": `# ${app}\n` });
    }
    const entry = (app: App, extra: string[]) =>
      [
        `  - name: ${app}`,
        "    host: localhost",
        `    path: /${app}`,
        `    repoPath: ${repos[app].clone}`,
        `    runScript: ${script}`,
        `    secret: demo-secret-of-${app}-0123456789`,
        ...extra.map((line) => `    ${line}`),
      ].join("\n");
    writeFileSync(
      join(demo, "service.yaml"),
      [
        "hostname: 127.0.0.1",
        "apps:",
        entry("web", [
          "branch: main",
          `releases: { path: ${join(demo, "web-releases")}, keep: 5 }`,
          `freeze: [{ from: "${day(20)}", to: "${day(22)}", reason: year-end }]`,
        ]),
        entry("api", ["branch: main", "rollbackOnFailure: true"]),
        entry("worker", []),
        "",
      ].join("\n"),
    );
    server = await start(demo);
    const ids = await play(server, demo, repos);
    await photograph(server, demo, ids);
  } finally {
    if (server) {
      server.proc.kill("SIGTERM");
      await server.proc.exited;
    }
    rmSync(demo, { recursive: true, force: true });
  }
}

await main();
