/**
 * The zero-downtime measure of releases (docs/releases.md "Zero downtime"), shared by its test and the benchmark:
 * nginx serves `<releases.path>/current/public`; clients fetch `index.html` and the `app.<rev>.js` it names in a
 * loop while deploys of commits that change both run; every failed request and every page whose two files come
 * from different commits is counted.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, nginxMain, nginxPath } from "./proxies.ts";

export { nginxPath };

/** The files of commit `rev`: a page naming its script, the script's source, and the revision. */
export function siteFiles(rev: number): Record<string, string> {
  return {
    "public/index.html": `<!doctype html><title>rev ${rev}</title><script src="/assets/app.${rev}.js"></script>rev=${rev}\n`,
    "src/app.js": `console.log("rev=${rev}");\n`,
    REV: `${rev}\n`,
  };
}

/**
 * The build: the script of the page's revision goes into `public/assets/` (shared between releases, so a page
 * served just before a switch still finds its script after it), and takes a while as a real build does.
 */
export const SITE_BUILD = `sh -c 'mkdir -p public/assets && cp src/app.js "public/assets/app.$(cat REV).js" && sleep 0.2'`;
export const SITE_SHARED = "public/assets/";

/** nginx in the foreground, everything under `prefix`, serving `root` on 127.0.0.1:`port`; kill it when done. */
export async function startNginx(prefix: string, root: string, port: number): Promise<Bun.Subprocess> {
  mkdirSync(prefix, { recursive: true });
  const conf = join(prefix, "nginx.conf");
  const site = join(prefix, "site.conf");
  writeFileSync(
    site,
    `server {
    listen 127.0.0.1:${port};
    root ${root};
    location / { try_files $uri =404; }
}
`,
  );
  writeFileSync(conf, nginxMain(prefix, site));
  const proc = Bun.spawn([nginxPath!, "-p", prefix, "-c", conf], { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  for (let i = 0; i < 250; i++) {
    if (proc.exitCode !== null) throw new Error(`nginx exited: ${await new Response(proc.stderr).text()}`);
    const answered = await fetch(`http://127.0.0.1:${port}/`).then(
      () => true,
      () => false,
    );
    if (answered) return proc;
    await Bun.sleep(20);
  }
  proc.kill("SIGKILL");
  throw new Error("nginx did not answer");
}

export interface Visits {
  /** Pages loaded: index.html and the script it names. */
  pages: number;
  /** Requests that failed (an error, or a status other than 200). */
  failed: number;
  /** Pages whose script is of another revision than the page. */
  mixed: number;
  /** Pages by the revision they showed. */
  revisions: Set<number>;
  /** A few failures, to say what went wrong. */
  samples: string[];
}

/**
 * `clients` loops, each loading a page (index.html, then the script it names) until `stop()` returns true or
 * `maxPages` pages each were loaded.
 */
export async function visit(base: string, stop: () => boolean, clients = 2, maxPages = 50_000): Promise<Visits> {
  const visits: Visits = { pages: 0, failed: 0, mixed: 0, revisions: new Set(), samples: [] };
  const fail = (what: string) => {
    visits.failed++;
    if (visits.samples.length < 5) visits.samples.push(what);
  };
  const get = async (path: string): Promise<string | undefined> => {
    try {
      const res = await fetch(`${base}${path}`, { headers: { "cache-control": "no-cache" } });
      const text = await res.text();
      if (res.status === 200) return text;
      fail(`${path}: HTTP ${res.status}`);
    } catch (error) {
      fail(`${path}: ${(error as Error).message}`);
    }
    return undefined;
  };
  const client = async () => {
    for (let n = 0; n < maxPages && !stop(); n++) {
      const page = await get("/index.html");
      const script = page && /src="(\/assets\/app\.(\d+)\.js)"/.exec(page);
      const rev = page && /rev=(\d+)/.exec(page)?.[1];
      if (page && (!script || !rev)) fail(`/index.html: not a page of the site: ${page.slice(0, 80)}`);
      if (!script || !rev) continue;
      const code = await get(script[1]!);
      if (code === undefined) continue;
      visits.pages++;
      visits.revisions.add(Number(rev));
      if (script[2] !== rev || !code.includes(`rev=${rev}"`)) visits.mixed++;
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  return visits;
}

/**
 * nginx serving `root` (everything under `prefix`) while `deploy(rev)` runs for each rev from 1 to `count`, one
 * after the other, and clients load pages all along; the visits once the last deploy ended. `started` is told
 * of nginx (the benchmark kills what is left when it is cut short).
 */
export async function visitDuring(
  prefix: string,
  root: string,
  count: number,
  deploy: (rev: number) => Promise<void>,
  started: (nginx: Bun.Subprocess) => void = () => {},
): Promise<Visits> {
  const port = await freePort();
  const nginx = await startNginx(prefix, root, port);
  started(nginx);
  try {
    let deploying = true;
    const visiting = visit(`http://127.0.0.1:${port}`, () => !deploying);
    try {
      for (let rev = 1; rev <= count; rev++) await deploy(rev);
    } finally {
      deploying = false;
    }
    return await visiting;
  } finally {
    nginx.kill("SIGKILL");
    await nginx.exited;
  }
}
