/** Fixtures of the scoped tokens' tests: two apps (web, api), each its own secret, and tokens in 0600 files. */
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeRepo, type Repo, tempDir } from "./helpers.ts";

export const TOKEN_VALUES = {
  grafana: "grafana-token-0123456789abcdef",
  "ci-web": "ci-web-token-0123456789abcdef",
  ops: "ops-token-0123456789abcdef-ops",
} as const;

export const APP_SECRETS = { web: "web-secret-0123456789abcdef", api: "api-secret-0123456789abcdef" } as const;

/** Writes `value` (and a newline) to `file` with `mode`. */
export function writeToken(file: string, value: string, mode = 0o600): void {
  writeFileSync(file, `${value}\n`, { mode });
  chmodSync(file, mode);
}

export interface TokenSetup {
  /** The service's working directory, holding service.yaml. */
  cwd: string;
  /** Where the token files are. */
  dir: string;
  file(name: string): string;
  /** Writes service.yaml with `tokens` as its YAML lines (each `  - {…}`). */
  config(tokens: string[], extra?: string[]): void;
  /** The repositories of the two apps (their clones are the apps' repoPath). */
  repos: { web: Repo; api: Repo };
}

/**
 * Two apps, web and api, and the three tokens of docs/admin.md (read, deploy of web, admin) in their files; both
 * apps run `runScript` (`true` unless told).
 */
export function tokenSetup(runScript = "true"): TokenSetup {
  const cwd = tempDir("service-tokens-");
  const dir = tempDir("service-token-files-");
  const repos = { web: makeRepo(), api: makeRepo() };
  const file = (name: string) => join(dir, name);
  for (const [name, value] of Object.entries(TOKEN_VALUES)) writeToken(file(name), value);
  const config = (tokens: string[], extra: string[] = []) =>
    writeFileSync(
      join(cwd, "service.yaml"),
      [
        "apps:",
        ...(["web", "api"] as const).flatMap((name) => [
          `  - name: ${name}`,
          `    host: ${name}.example.com`,
          "    path: /deploy",
          `    repoPath: ${repos[name].clone}`,
          `    runScript: ${JSON.stringify(runScript)}`,
          `    secret: ${APP_SECRETS[name]}`,
        ]),
        "tokens:",
        ...tokens,
        ...extra,
        "",
      ].join("\n"),
    );
  config(standardTokens(file));
  return { cwd, dir, file, config, repos };
}

/** The `tokens` lines of docs/admin.md's example, with the files of `file`. */
export function standardTokens(file: (name: string) => string): string[] {
  return [
    `  - { name: grafana, role: read, file: ${file("grafana")} }`,
    `  - { name: ci-web, role: deploy, apps: [web], file: ${file("ci-web")} }`,
    `  - { name: ops, role: admin, file: ${file("ops")} }`,
  ];
}
