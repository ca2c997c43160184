/**
 * system/ip.ts says what `node:net`'s `isIP` says, on the addresses the config and the peers give and on random
 * texts of their characters.
 */
import { describe, expect, test } from "bun:test";
import { isIP as netIsIP } from "node:net";
import { isIP } from "../../src/system/ip.ts";

const CASES = [
  "127.0.0.1",
  "0.0.0.0",
  "255.255.255.255",
  "256.1.1.1",
  "01.2.3.4",
  "1.2.3",
  "1.2.3.4.5",
  " 1.2.3.4",
  "1.2.3.4 ",
  "::",
  "::1",
  "::ffff:127.0.0.1",
  "::ffff:1.2.3.256",
  "fe80::1%eth0",
  "fe80::1%",
  "2001:db8::8a2e:370:7334",
  "2001:0db8:0000:0000:0000:ff00:0042:8329",
  "2001:db8:::1",
  "1:2:3:4:5:6:7:8",
  "1:2:3:4:5:6:7:8:9",
  "1:2:3:4:5:6:1.2.3.4",
  "[::1]",
  "localhost",
  "",
  "12345::",
  "gggg::1",
];

describe("system/ip.ts isIP", () => {
  test("says what node:net's isIP says, on known addresses and on 20 000 random texts of their characters", () => {
    for (const text of CASES) expect([text, isIP(text) as number]).toEqual([text, netIsIP(text)]);
    const alphabet = "0123456789abcdefABCDEF:.%g- ";
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const pieces = ["::", ":", ".", "255", "1", "ffff", "0", "%eth0", "1.2.3.4", "abcd"];
    let six = 0;
    for (let i = 0; i < 20_000; i++) {
      let text = "";
      const length = 1 + Math.floor(random() * 12);
      for (let j = 0; j < length; j++)
        text +=
          random() < 0.5
            ? pieces[Math.floor(random() * pieces.length)]
            : alphabet[Math.floor(random() * alphabet.length)];
      const expected = netIsIP(text);
      if (expected === 6) six++;
      if (isIP(text) !== expected) expect([text, isIP(text) as number]).toEqual([text, expected]);
    }
    // The random texts reach both kinds of address, not only refusals.
    expect(six).toBeGreaterThan(100);
  });
});
