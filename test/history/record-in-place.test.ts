/**
 * A deploy's record (history/log.ts): made once, padded for its final outcome, then rewritten in place while what it
 * says fits the file's first page (one write that a kill cannot cut), through a new file renamed over it otherwise.
 * Either way every read finds it whole.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { startGated } from "../_support/gate.ts";
import { hasEnded, post, SECRET, waitFor } from "../_support/helpers.ts";

const recordFile = (cwd: string) => {
  const dir = join(cwd, ".service", "logs");
  const name = readdirSync(dir).find((f) => f.endsWith(".json"));
  return name ? join(dir, name) : undefined;
};

describe("a deploy's record rewritten", () => {
  test("a small final record is written into the running record's own file, and parses whole", async () => {
    await using gated = await startGated();
    const { repo, gate, server } = gated;
    const answer = post(server.url, { secret: SECRET });
    await waitFor(() => gate.starts().length === 1, "the deploy to run");
    const file = recordFile(repo.clone)!;
    const running = statSync(file);
    expect(JSON.parse(readFileSync(file, "utf8")).status).toBe("running");
    gate.open();
    expect(await (await answer).text()).toContain("[done] ok=true");
    const record = JSON.parse(readFileSync(file, "utf8"));
    expect(record.status).toBe("done");
    expect(record.result.ok).toBe(true);
    expect(statSync(file).ino).toBe(running.ino);
  });

  test("a final record past the file's first page goes through a new file, whole", async () => {
    // Output the record keeps (the run's stdout) takes it past 4096 bytes.
    await using gated = await startGated({ SERVICE_RUN_SCRIPT: `sh -c 'head -c 6000 /dev/zero | tr "\\\\0" x'` });
    const { repo, server } = gated;
    expect(await (await post(server.url, { secret: SECRET })).text()).toContain("[done] ok=true");
    const file = recordFile(repo.clone)!;
    await waitFor(() => hasEnded(JSON.parse(readFileSync(file, "utf8")).status), "the record to end");
    const record = JSON.parse(readFileSync(file, "utf8"));
    expect(record.result.run.stdout).toHaveLength(6000);
    expect(readFileSync(file, "utf8").length).toBeGreaterThan(6000);
  });
});
