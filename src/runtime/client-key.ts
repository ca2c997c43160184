/** A forwarded address longer than this is not an address; only this much of it becomes a key. */
const MAX_KEY_LENGTH = 64;

/**
 * The key a client is counted under. An IPv6 client usually holds a whole /64, so it is counted per /64:
 * otherwise it would get a fresh burst (of failures, of connections) from every address it picks. IPv4 (also
 * IPv4-mapped IPv6) per address. Used by the failure throttle (http/throttle.ts) and the connection bounds.
 */
export function clientKey(address: string): string {
  const plain = address
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/%.*$/, "")
    .slice(0, MAX_KEY_LENGTH);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(plain);
  if (mapped) return mapped[1]!;
  if (!plain.includes(":") || plain.includes(".")) return plain;
  const [head = "", tail] = plain.split("::", 2);
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill("0"), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ""))
    .join(":")}::/64`;
}
