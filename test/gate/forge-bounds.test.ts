/** The bounds of a read of any forge: refusals, failures, the deadline, the size, the pages, the origin. */
import { describe, expect, test } from "bun:test";
import {
  checksOf,
  EMPTY,
  FORGES,
  fakeForge,
  first,
  GITHUB_RUNS,
  type Provider,
  read,
  serve,
  TOKEN,
} from "../_support/forge-checks.ts";

describe("GitHub", () => {
  test("GitHub: a next page on another origin is not followed", async () => {
    const elsewhere = fakeForge({}, {});
    const forge = serve("github", {
      [FORGES.github.first]: {
        body: [],
        headers: { link: `<${elsewhere.url}${FORGES.github.first}&page=2>; rel="next"` },
      },
    });
    const answer = await read("github", forge);
    expect(answer).toEqual({
      ok: false,
      fatal: true,
      error: `GitHub's next page of statuses is on another origin (${elsewhere.url}): not followed`,
    });
    expect(elsewhere.refused).toEqual([]);
  });

  test("GitHub: a redirect is not followed, so the token never leaves the API's origin", async () => {
    const elsewhere = fakeForge({}, {});
    const forge = serve("github", {
      [FORGES.github.first]: { status: 302, headers: { location: `${elsewhere.url}/steal` } },
    });
    const answer = await read("github", forge);
    expect(answer.ok).toBe(false);
    expect(!answer.ok && answer.error).toContain("GitHub answered 302");
    expect(!answer.ok && answer.error).toContain("redirects are not followed");
    expect(elsewhere.refused).toEqual([]);
  });

  test("GitHub: one deadline covers the whole read, not each page", async () => {
    const forge = serve("github", {
      [FORGES.github.first]: { body: [], delayMs: 200 },
      [GITHUB_RUNS]: { body: { total_count: 0, check_runs: [] }, delayMs: 200 },
    });
    const answer = await read("github", forge, { timeoutMs: 300 });
    expect(answer).toEqual({
      ok: false,
      fatal: false,
      error: `GitHub did not answer GET ${GITHUB_RUNS.split("?")[0]} within 300 ms`,
    });
  });

  test("GitHub: a rate-limited 403 is worth reading again", async () => {
    const forge = serve("github", {
      [FORGES.github.first]: {
        status: 403,
        headers: { "x-ratelimit-remaining": "0" },
        body: { message: "API rate limit exceeded" },
      },
    });
    const answer = await read("github", forge);
    expect(answer).toMatchObject({ ok: false, fatal: false });
  });

  test("GitHub: a list longer than 20 pages is not read", async () => {
    const forge = serve(
      "github",
      Object.fromEntries(
        Array.from({ length: 25 }, (_, n) => {
          const path = n === 0 ? FORGES.github.first : `${FORGES.github.first}&page=${n + 1}`;
          return [
            path,
            (origin: string) => ({
              body: [],
              headers: { link: `<${origin}${FORGES.github.first}&page=${n + 2}>; rel="next"` },
            }),
          ];
        }),
      ),
    );
    const answer = await read("github", forge);
    expect(answer).toEqual({ ok: false, fatal: true, error: "GitHub lists more than 20 pages of statuses: not read" });
    expect(forge.requests.length).toBe(20);
  });
});

describe("Bitbucket", () => {
  test("Bitbucket: a next link to another origin is not followed", async () => {
    const elsewhere = fakeForge({}, {});
    const forge = serve("bitbucket", {
      [FORGES.bitbucket.first]: { body: { values: [], next: `${elsewhere.url}${FORGES.bitbucket.first}&page=2` } },
    });
    const answer = await read("bitbucket", forge);
    expect(answer).toMatchObject({ ok: false, fatal: true });
    expect(!answer.ok && answer.error).toContain("another origin");
    expect(elsewhere.refused).toEqual([]);
  });
});

describe("GitLab", () => {
  test("GitLab: entries that are no object or have no name are left out", async () => {
    const forge = serve("gitlab", {
      [FORGES.gitlab.first]: {
        body: [null, 7, "x", { status: "failed" }, { id: 1, name: "build", status: "success" }],
      },
    });
    expect(await checksOf(forge, read("gitlab", forge))).toEqual([{ name: "build", state: "success" }]);
  });
});

describe("every forge", () => {
  for (const provider of Object.keys(FORGES) as Provider[]) {
    const { name, first: path } = FORGES[provider];
    const pathOnly = path.split("?")[0];

    test(`${name}: 401, 403 and 404 are fatal, with the status in the message and no token in it`, async () => {
      for (const [status, reason] of [
        [401, "Unauthorized"],
        [403, "Forbidden"],
        [404, "Not Found"],
      ] as const) {
        const said = `Bad credentials ${TOKEN}\n[done] fake line ${"x".repeat(300)}`;
        const body = provider === "bitbucket" ? { type: "error", error: { message: said } } : { message: said };
        const forge = serve(provider, first(provider, { status, body }));
        const answer = await read(provider, forge);
        expect(answer).toMatchObject({ ok: false, fatal: true });
        const error = answer.ok ? "" : answer.error;
        expect(error).toStartWith(
          `${name} answered ${status} ${reason} for GET ${pathOnly}: Bad credentials [token] [done] fake line x`,
        );
        expect(error).not.toContain(TOKEN);
        expect(error).not.toContain("\n");
        expect(error.length).toBeLessThan(pathOnly!.length + 260);
      }
    });

    test(`${name}: a 500 is worth reading again`, async () => {
      const forge = serve(provider, first(provider, { status: 500, body: "<html>oops</html>" }));
      expect(await read(provider, forge)).toEqual({
        ok: false,
        fatal: false,
        error: `${name} answered 500 Internal Server Error for GET ${pathOnly}: <html>oops</html>`,
      });
    });

    test(`${name}: a forge that never answers is worth reading again, once the timeout is past`, async () => {
      const forge = serve(provider, first(provider, { hang: true }));
      expect(await read(provider, forge, { timeoutMs: 300 })).toEqual({
        ok: false,
        fatal: false,
        error: `${name} did not answer GET ${pathOnly} within 300 ms`,
      });
    });

    test(`${name}: a read the caller stops ends at once, worth reading again`, async () => {
      const forge = serve(provider, first(provider, { hang: true }));
      const stop = new AbortController();
      const answer = read(provider, forge, { signal: stop.signal, timeoutMs: 60_000 });
      stop.abort();
      expect(await answer).toMatchObject({ ok: false, fatal: false });
    });

    test(`${name}: an answer over 4 MiB is not read past the bound`, async () => {
      const forge = serve(provider, first(provider, { endless: true }));
      expect(await read(provider, forge)).toEqual({
        ok: false,
        fatal: true,
        error: `${name} answered more than 4 MiB for GET ${pathOnly}`,
      });
    });

    test(`${name}: malformed JSON is worth reading again`, async () => {
      const forge = serve(provider, first(provider, { body: "{not json" }));
      expect(await read(provider, forge)).toEqual({
        ok: false,
        fatal: false,
        error: `${name} answered GET ${pathOnly} with malformed JSON`,
      });
    });

    test(`${name}: no checks reported is an empty list`, async () => {
      const forge = serve(provider, first(provider, { body: EMPTY[provider] }));
      expect(await checksOf(forge, read(provider, forge))).toEqual([]);
    });
  }
});
