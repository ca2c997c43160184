/**
 * A preload (`bun --preload test/_support/dump-modules.ts src/cli.ts …`): when the process exits, the modules of
 * src/ it loaded are written to the file SERVICE_TEST_MODULES_OUT names, one per line, relative to src/.
 */
import { writeFileSync } from "node:fs";

const out = process.env.SERVICE_TEST_MODULES_OUT;
const src = new URL("../../src/", import.meta.url).pathname;
if (out)
  process.on("exit", () => {
    const loaded = Object.keys(require.cache)
      .filter((file) => file.startsWith(src))
      .map((file) => file.slice(src.length));
    writeFileSync(out, `${loaded.sort().join("\n")}\n`);
  });
