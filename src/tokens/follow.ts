/**
 * The tokens in force follow the config file: an entry added (`service token add`) is accepted and one removed
 * (`service token revoke`) refused from the server's next look at its config, without a restart. An entry that
 * cannot be used then (a file missing, a value another token's) is left out, said once, and the others stay.
 */
import type { ResolvedApp } from "../config/apps.ts";
import { parseTokens, readTokens, TokenSet, type TokenSpec } from "./list.ts";
import { reservedSecrets } from "./load.ts";

/** What the admin listener asks of its tokens: each with its value now (undefined: refused for now). */
export interface TokensInForce {
  current(): { spec: TokenSpec; value: string | undefined }[];
}

export interface FollowSource {
  /** The `tokens` entries of the configuration as it is now (a cheap look: the reloader's). */
  entries: () => unknown;
  /** The names of the apps the configuration has now. */
  appNames: () => string[];
  /** The apps in force, for the secrets no token may equal (asked only when the entries changed). */
  apps: () => ResolvedApp[];
  /** The admin token in force. */
  adminToken: () => string | undefined;
  cwd: string;
  info: (line: string) => void;
  warn: (line: string) => void;
}

const specKey = (spec: TokenSpec) => JSON.stringify([spec.name, spec.role, spec.apps ?? null, spec.file]);

export class FollowedTokens implements TokensInForce {
  private key: string;
  private specs: TokenSpec[];
  private set: TokenSet;

  /** `specs` and `set` as the start loaded and checked them. */
  constructor(
    private readonly source: FollowSource,
    specs: TokenSpec[],
    set: TokenSet,
  ) {
    this.key = this.keyNow();
    this.specs = specs;
    this.set = set;
  }

  private keyNow(): string {
    return JSON.stringify([this.source.entries() ?? null, this.source.appNames()]);
  }

  current(): { spec: TokenSpec; value: string | undefined }[] {
    const key = this.keyNow();
    if (key !== this.key) {
      this.key = key;
      this.rebuild();
    }
    return this.set.current();
  }

  /** The entries as they are now; a spec unchanged keeps its object (a dashboard session is tied to it). */
  private rebuild(): void {
    const { source } = this;
    const problems: string[] = [];
    const parsed = parseTokens(source.entries(), source.appNames(), source.cwd, problems);
    const before = new Map(this.specs.map((spec) => [specKey(spec), spec]));
    const specs = parsed
      .filter((spec, i) => parsed.findIndex((other) => other.name === spec.name) === i)
      .map((spec) => before.get(specKey(spec)) ?? spec);
    const reserved = () => reservedSecrets(source.adminToken(), source.apps(), source.cwd);
    const values = readTokens(specs, reserved(), problems, true);
    for (const problem of problems) source.warn(`${problem}; left out until it is right`);
    const names = (list: TokenSpec[]) => new Set(list.map((spec) => spec.name));
    const [was, now] = [names(this.specs), names(specs)];
    const added = [...now].filter((name) => !was.has(name));
    const removed = [...was].filter((name) => !now.has(name));
    if (added.length || removed.length)
      source.info(
        `tokens changed in the config: ${[...added.map((n) => `added ${n}`), ...removed.map((n) => `removed ${n}`)].join(", ")}`,
      );
    this.specs = specs;
    this.set = new TokenSet(specs, values, { reserved, warn: source.warn });
  }
}
