/**
 * docs/admin.md "Tokens by command": the running server follows the `tokens` entries of its config file without a
 * restart. An entry added by hand that cannot be used yet is left out, said in the log, and the others stay; it is
 * accepted once its file is right. An entry removed is refused.
 */
import { describe, expect, test } from "bun:test";
import { bearer, startAdmin } from "../_support/admin-helpers.ts";
import { waitFor } from "../_support/helpers.ts";
import { standardTokens, TOKEN_VALUES, tokenSetup, writeToken } from "../_support/token-fixtures.ts";

const LATE = "late-token-0123456789abcdef";

describe("the running server follows its tokens entries", () => {
  test("an entry whose file is missing is left out and said; it opens once the file is there; an entry removed is refused", async () => {
    const setup = tokenSetup();
    await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined });
    const status = async (token: string) =>
      (await fetch(`${server.admin}/api/whoami`, { headers: bearer(token) })).status;
    expect(await status(TOKEN_VALUES.grafana)).toBe(200);

    setup.config([...standardTokens(setup.file), `  - { name: late, role: read, file: ${setup.file("late")} }`]);
    await waitFor(async () => {
      await status(TOKEN_VALUES.grafana);
      return (server.stdout.text + server.stderr.text).includes(
        `token "late": ${setup.file("late")} does not exist; left out until it is right`,
      );
    }, "the server saying the new entry is left out");
    expect(await status(TOKEN_VALUES.grafana)).toBe(200);
    expect(await status(LATE)).toBe(401);

    writeToken(setup.file("late"), LATE);
    expect(await status(LATE)).toBe(200);

    setup.config(standardTokens(setup.file).filter((line) => !line.includes("grafana")));
    await waitFor(async () => (await status(TOKEN_VALUES.grafana)) === 401, "grafana refused once its entry is gone");
    expect(await status(TOKEN_VALUES.ops)).toBe(200);
    expect(server.proc.exitCode).toBeNull();
  });
});
