/**
 * The path the router looks up: found without parsing the URL when it is plain, and always the path the URL
 * parser would give (dot segments, percent escapes, backslashes, malformed Host headers included).
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { requestPath, requestUrl } from "../../src/http/request-url.ts";

/** What Bun's `request.url` can be: the scheme, the Host header as sent (well formed or not), the request target. */
const asRequest = (url: string) => ({ url }) as Request;

const HOSTS = [
  "example.com",
  "127.0.0.1:3141",
  "[::1]:80",
  "",
  "a b",
  "[::1",
  "x:99999",
  "a?b",
  "a#b",
  "a/b",
  "ä.example",
];
const PATH_CHARS = [
  "/",
  "a",
  "Z",
  "0",
  "-",
  "_",
  "~",
  ".",
  "%",
  "%2e",
  "%2F",
  "\\",
  "?",
  "#",
  "&",
  "=",
  " ",
  "ü",
  ";",
  "@",
  ":",
];

describe("the request path (the webhook's routing)", () => {
  test("requestPath is requestUrl's pathname for any Host and target", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...HOSTS),
        fc.array(fc.constantFrom(...PATH_CHARS), { maxLength: 24 }),
        (host, chars) => {
          const request = asRequest(`http://${host}${chars.join("")}`);
          expect(requestPath(request)).toBe(requestUrl(request)?.pathname);
        },
      ),
      { numRuns: 5000 },
    );
  });

  test("a plain path is its own pathname; dot segments and escapes are resolved as the URL parser does", () => {
    expect(requestPath(asRequest("http://example.com/hook?ack=1"))).toBe("/hook");
    expect(requestPath(asRequest("http://example.com/hooks/web_app-2~x"))).toBe("/hooks/web_app-2~x");
    expect(requestPath(asRequest("http://example.com/x/../hook"))).toBe("/hook");
    expect(requestPath(asRequest("http://example.com/%2e%2e/hook"))).toBe("/hook");
    expect(requestPath(asRequest("http://a?b/hook"))).toBe("/");
    expect(requestPath(asRequest("http://[::1/hook"))).toBe("/hook");
  });
});
