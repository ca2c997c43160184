/**
 * A multi-app service whose apps each have their own repository and their own gate (gate.ts): the run script of an
 * app records its start and waits until the test opens that app's gate, so overlaps across apps are deterministic.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type Gate, makeGate, StreamReader } from "./gate.ts";
import { makeRepo, post, type Repo, SECRET, tempDir, waitFor } from "./helpers.ts";

export interface SlotApp {
  repo: Repo;
  gate: Gate;
  /** The app's webhook path (`/<name>`). */
  path: string;
}

/** A service directory with `names` as its apps (host localhost, path `/<name>`) and `extra` top-level lines. */
export function slotService(names: string[], extra: string[] = []) {
  const cwd = tempDir("service-slots-");
  const apps: Record<string, SlotApp> = {};
  const lines = [...extra, "apps:"];
  for (const name of names) {
    const repo = makeRepo();
    const gate = makeGate();
    apps[name] = { repo, gate, path: `/${name}` };
    lines.push(
      `  - name: ${name}`,
      "    host: localhost",
      `    path: /${name}`,
      `    repoPath: ${repo.clone}`,
      `    runScript: env GATE_LOG=${gate.env.GATE_LOG} GATE_FILE=${gate.env.GATE_FILE} ${gate.script}`,
      `    secret: ${SECRET}`,
    );
  }
  writeFileSync(join(cwd, "service.yaml"), `${lines.join("\n")}\n`);
  /** The apps whose run script has started, in no particular order. */
  const started = () => names.filter((name) => apps[name]!.gate.starts().length > 0);
  /** Opens every app's gate (at the end of a test: nothing is left waiting). */
  const openAll = () => {
    for (const app of Object.values(apps)) app.gate.open();
  };
  return { cwd, apps, started, openAll, env: { SERVICE_HOSTNAME: "127.0.0.1" } };
}

/**
 * With one build slot: app a's deploy runs (held at its gate), then app b's waits for the slot. Their streams, as
 * soon as b says it waits.
 */
export async function aRunsBWaits(
  s: ReturnType<typeof slotService>,
  url: string,
): Promise<{ a: StreamReader; b: StreamReader }> {
  const a = new StreamReader(await post(`${url}/a`, { secret: SECRET }));
  await waitFor(() => s.started().includes("a"), "a's script");
  const b = new StreamReader(await post(`${url}/b`, { secret: SECRET }));
  await waitFor(() => b.text.includes("[slot] waiting for a build slot"), "b's wait for a slot");
  return { a, b };
}
