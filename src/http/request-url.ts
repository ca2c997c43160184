/**
 * The path and query of a request. Bun builds `request.url` from the Host header, so a request with an empty or
 * malformed Host (`Host: [::1`, `Host: a b`, `Host: x:99999`, HTTP/1.0 without one) has a relative or unparsable
 * URL: the scheme and host are dropped and the rest parsed against `localhost`, so it never throws.
 */

const SCHEME_AND_HOST = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

/** The request's URL with `localhost` for its host (only the path and query are the request's); undefined when unusable. */
export function requestUrl(request: Request): URL | undefined {
  const target = request.url.replace(SCHEME_AND_HOST, "");
  try {
    return new URL(`http://localhost${target.startsWith("/") ? target : `/${target}`}`);
  } catch {
    return undefined;
  }
}

/** A URL whose path has only characters the URL parser keeps as they are (no `.`, `%`, `\`…), then a query or its end. */
const PLAIN_PATH = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*(\/[\w~/-]*)(?:\?|$)/i;

/**
 * `requestUrl(request)?.pathname`, without parsing the URL when its path is plain (a webhook's always is): the
 * path the router looks up, on every request, refused ones included.
 */
export function requestPath(request: Request): string | undefined {
  return PLAIN_PATH.exec(request.url)?.[1] ?? requestUrl(request)?.pathname;
}
