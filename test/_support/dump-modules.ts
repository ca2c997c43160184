/**
 * A preload (`bun --preload test/_support/dump-modules.ts src/cli.ts …`): when the process exits, the modules it
 * loaded (of src/ and of node_modules/) are written to the file SERVICE_TEST_MODULES_OUT names, one per line,
 * relative to the project root.
 */
import { writeFileSync } from "node:fs";

const out = process.env.SERVICE_TEST_MODULES_OUT;
const root = new URL("../../", import.meta.url).pathname;
if (out)
  process.on("exit", () => {
    const loaded = Object.keys(require.cache)
      .filter((file) => file.startsWith(root))
      .map((file) => file.slice(root.length));
    writeFileSync(out, `${loaded.sort().join("\n")}\n`);
  });
