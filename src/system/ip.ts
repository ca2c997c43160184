/**
 * Whether a text is an IPv4 or IPv6 address, as `node:net`'s `isIP` says (4, 6, or 0), without loading `node:net`
 * (under Bun its JavaScript and the stream code it brings cost a server about 3 MB of idle memory:
 * docs/performance.md). The same expressions as Node.js's own (lib/internal/net.js), zone ids included.
 */
const V4_SEG = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])";
const V4 = `(?:${V4_SEG}\\.){3}${V4_SEG}`;
const V6_SEG = "(?:[0-9a-fA-F]{1,4})";
const IPV4 = new RegExp(`^${V4}$`);
const IPV6 = new RegExp(
  "^(?:" +
    `(?:${V6_SEG}:){7}(?:${V6_SEG}|:)|` +
    `(?:${V6_SEG}:){6}(?:${V4}|:${V6_SEG}|:)|` +
    `(?:${V6_SEG}:){5}(?::${V4}|(?::${V6_SEG}){1,2}|:)|` +
    `(?:${V6_SEG}:){4}(?:(?::${V6_SEG}){0,1}:${V4}|(?::${V6_SEG}){1,3}|:)|` +
    `(?:${V6_SEG}:){3}(?:(?::${V6_SEG}){0,2}:${V4}|(?::${V6_SEG}){1,4}|:)|` +
    `(?:${V6_SEG}:){2}(?:(?::${V6_SEG}){0,3}:${V4}|(?::${V6_SEG}){1,5}|:)|` +
    `(?:${V6_SEG}:){1}(?:(?::${V6_SEG}){0,4}:${V4}|(?::${V6_SEG}){1,6}|:)|` +
    `(?::(?:(?::${V6_SEG}){0,5}:${V4}|(?::${V6_SEG}){1,7}|:))` +
    ")(?:%[0-9a-zA-Z-.:]{1,})?$",
);

/** 4 for an IPv4 address, 6 for an IPv6 one (a zone id allowed), else 0. */
export function isIP(text: string): 0 | 4 | 6 {
  if (IPV4.test(text)) return 4;
  if (IPV6.test(text)) return 6;
  return 0;
}
