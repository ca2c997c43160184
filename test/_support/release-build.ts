/** The release build and a mirror of it on loopback: what install.sh and the docs' install command download. */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { ROOT, runProcess } from "./helpers.ts";

/** Where `npm run build` writes the release layout: the directory to publish. */
export const RELEASE_DIR = join(ROOT, "dist", "release");

/** `scripts/build.ts --only-host`: the release layout with the Linux x64 binary. Throws with the build's output. */
export async function buildRelease(): Promise<void> {
  const { code, stdout, stderr } = await runProcess([process.execPath, join(ROOT, "scripts/build.ts"), "--only-host"], {
    cwd: ROOT,
    timeoutMs: 120_000,
  });
  if (code !== 0) throw new Error(`scripts/build.ts --only-host failed:\n${stdout}${stderr}`);
}

/**
 * A static HTTP server on loopback: a path is the file under the first of `roots` that has it, else 404.
 * `seen` is told every path asked for.
 */
export function serveMirror(roots: string[], seen: (path: string) => void = () => {}): { url: string; stop(): void } {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = decodeURIComponent(new URL(req.url).pathname);
      seen(path);
      const file = roots
        .map((root) => join(root, path))
        .find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
      if (path.includes("..") || !file) return new Response("not found\n", { status: 404 });
      return new Response(Bun.file(file));
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}
