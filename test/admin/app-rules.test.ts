/**
 * docs/admin.md "An app's page": `GET /api/apps/<app>/stats` also says what decides the app's deploys (its branch,
 * tags, gate, freeze windows with the one in force and the next, limits, paths), so a screen tells why nothing
 * deploys; a token that is not admin is told no directory of the server, and no answer carries a secret.
 */
import { describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, startAdmin } from "../_support/admin-helpers.ts";
import { APP_SECRETS, standardTokens, TOKEN_VALUES, tokenSetup } from "../_support/token-fixtures.ts";

const STATUS_TOKEN = "status-token-0123456789abcdef";
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe("what decides an app's deploys, on its page's API", () => {
  test("branch, tags, gate, freeze windows and the next, limits, paths; server paths for an admin only; no secret", async () => {
    const setup = tokenSetup();
    setup.config(standardTokens(setup.file), [
      "status: { provider: github, repo: acme/web, apiUrl: 'http://127.0.0.1:9' }",
      "branch: main",
      'tags: "v*"',
      "gate: { checks: [ci/test, { name: build, by: github-actions }], waitMs: 600000 }",
      "freeze:",
      "  - { from: 'Fri 16:00', to: 'Mon 08:00', timeZone: Europe/Berlin, reason: weekend }",
      "limits: { memory: 536870912, cpu: 1.5, nice: 10 }",
      "paths: ['src/**', package.json]",
    ]);
    await using server = await startAdmin(setup.cwd, { SERVICE_SECRET: undefined, SERVICE_STATUS_TOKEN: STATUS_TOKEN });
    const stats = async (token: string) => {
      const res = await fetch(`${server.admin}/api/apps/web/stats`, { headers: bearer(token) });
      expect(res.status).toBe(200);
      const text = await res.text();
      for (const secret of [STATUS_TOKEN, ...Object.values(APP_SECRETS), ...Object.values(TOKEN_VALUES), ADMIN_TOKEN])
        expect(text).not.toContain(secret);
      return JSON.parse(text).rules;
    };
    const read = await stats(TOKEN_VALUES.grafana);
    expect(read).toMatchObject({
      branch: "main",
      tags: "v*",
      deployRefs: null,
      gate: { checks: ["ci/test", { name: "build", by: "github-actions" }], waitMs: 600000, bakeMs: 0 },
      freeze: {
        windows: [{ from: "Fri 16:00", to: "Mon 08:00", timeZone: "Europe/Berlin", reason: "weekend" }],
        nextFreeze: { reason: "weekend", until: "Mon 08:00 Europe/Berlin" },
      },
      limits: { memory: 536870912, cpu: 1.5, nice: 10 },
      paths: ["src/**", "package.json"],
      rollbackOnFailure: false,
      releases: null,
    });
    expect(typeof read.freeze.nextFreeze.start).toBe("string");
    expect("frozen" in read.freeze).toBe(true);
    expect(read.repoPath).toBeUndefined();
    expect(JSON.stringify(read)).not.toContain(setup.repos.web.clone);

    const admin = await stats(TOKEN_VALUES.ops);
    expect(admin.repoPath).toBe(setup.repos.web.clone);
    expect({ ...admin, repoPath: undefined }).toEqual({ ...read, repoPath: undefined });
  });
});
