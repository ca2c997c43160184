const JSON_TYPE = "application/json; charset=utf-8";

/**
 * The text and options of answers given again and again (404, 401, 429): a frozen body is serialised once, and its
 * answer's options built once per status and frozen headers (constants, or a bounded few), so a flood of refused
 * requests builds nothing but the Response. The options hold a `Headers`, not a record: a Response copies a
 * `Headers` at a fraction of the cost of building one (and a change to one Response's headers stays its own).
 */
const prepared = new WeakMap<object, { text: string; inits: Map<number, Map<object, ResponseInit>> }>();

/** The key of an answer without extra headers. */
const NO_HEADERS = Object.freeze({});

const isFrozenObject = (value: unknown): value is object =>
  typeof value === "object" && value !== null && Object.isFrozen(value);

/** An answer in JSON: one line of it and a newline. */
export function jsonResponse(status: number, body: unknown, headers?: Readonly<Record<string, string>>): Response {
  if (isFrozenObject(body) && (headers === undefined || Object.isFrozen(headers))) {
    let known = prepared.get(body);
    if (!known) prepared.set(body, (known = { text: `${JSON.stringify(body)}\n`, inits: new Map() }));
    let byHeaders = known.inits.get(status);
    if (!byHeaders) known.inits.set(status, (byHeaders = new Map()));
    const key = headers ?? NO_HEADERS;
    let init = byHeaders.get(key);
    if (!init) byHeaders.set(key, (init = { status, headers: new Headers({ "content-type": JSON_TYPE, ...headers }) }));
    return new Response(known.text, init);
  }
  return new Response(`${JSON.stringify(body)}\n`, { status, headers: { "content-type": JSON_TYPE, ...headers } });
}
