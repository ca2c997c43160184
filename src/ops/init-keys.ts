/**
 * One sentence per configuration key, for the annotated `service.yaml` of `service init` (ops/annotated.ts). Typed
 * by the keys of UserConfig: a key added to the schema without its sentence here does not compile. A key without a
 * default shows `example` instead.
 */
import type { UserConfig } from "../config/schema.ts";

export interface KeyNote {
  /** What the key does, in one sentence. */
  say: string;
  /** Shown (commented) when the key has no default. */
  example?: unknown;
  /** What stands for "Unset by default; for example:" where the default is not one value (it depends). */
  unset?: string;
}

export const KEY_NOTES: Record<keyof UserConfig, KeyNote> = {
  port: { say: "TCP port to listen on (0: any free port)." },
  repoPath: { say: "Directory where `git pull` and the run script run (relative: to the working directory)." },
  runScript: { say: "Command run after the pull; several lines run one by one, stopping at the first failure." },
  runTimeoutMs: { say: "Time limit of the run script, in milliseconds." },
  rollbackOnFailure: { say: "On a failed deploy, reset to the commit before the pull and run the script again." },
  pull: {
    say: "`pull`: git pull; `reset`: fetch, then `git reset --hard` to the remote's tip (local changes in the clone are lost).",
  },
  path: { say: "URL path that accepts the webhook." },
  secret: {
    say: "Webhook secret (keep it out of this file).",
    unset: "Default: one generated into .service.secret.",
  },
  queueLimit: { say: "Most deploys waiting per repository; past it a POST gets 429." },
  queuePolicy: { say: "`latest`: a push arriving while a deploy already waits joins it instead of queueing another." },
  hostname: { say: "Address to listen on; 127.0.0.1 behind a reverse proxy on this machine." },
  heartbeatMs: { say: "Silence after which a streamed deploy writes a heartbeat line, in milliseconds." },
  branch: { say: "Deploy only pushes to this branch (others are answered skipped).", example: "main" },
  events: { say: "Deploy only on these forge events; `push` matches every forge's push.", example: ["push"] },
  deployRefs: { say: "What `service deploy --ref` and the admin API may name (patterns).", example: ["main", "v*"] },
  tags: { say: "Deploy release tags: a glob (`v*`) or a semver range (`^1.4`).", example: "^1.0" },
  dedupeDeliveries: { say: "A delivery the forge sends again (same id, 24 hours) is not deployed twice." },
  acknowledge: { say: "Answer at once with the deploy id instead of streaming (the forge times out at 10 s)." },
  maxBodyBytes: { say: "Largest request body accepted; larger gets 413." },
  keepDeploys: { say: "Retention: the log files of this many newest deploys are kept." },
  keepDays: { say: "Retention: deploy files older than this many days are removed (0: no age limit)." },
  maxLogBytes: { say: "Most output one deploy's .log keeps; the live stream has everything." },
  trustProxy: { say: "Take the host and client address from your reverse proxy's X-Forwarded-* headers." },
  boundConnections: {
    say: "Close connections past the bounds as they are accepted.",
    example: true,
    unset: "Default: true, except on a loopback hostname; for example:",
  },
  status: {
    say: "Commit statuses on the forge per deploy (token from SERVICE_STATUS_TOKEN or tokenFile).",
    example: { provider: "github", tokenFile: "/etc/service/status-token" },
  },
  notify: {
    say: "Where deploys are announced: Slack, Discord, ntfy or JSON.",
    example: [{ url: "https://hooks.slack.com/services/…", format: "slack", on: ["failed", "rolled_back"] }],
  },
  healthCheckUrl: {
    say: "After the run script, GET this URL until it answers 2xx.",
    example: "http://127.0.0.1:3000/up",
  },
  healthCheck: { say: "After the run script, run this command until it exits 0.", example: "curl -fsS localhost:3000" },
  healthCheckTimeoutMs: { say: "How long the health check may take before the deploy fails, in milliseconds." },
  healthCheckIntervalMs: { say: "Time between two health check attempts, in milliseconds." },
  pollIntervalMs: {
    say: "Ask the remote for new commits this often (no webhook needed); at least 5000.",
    example: 60000,
  },
  allowedSigners: {
    say: "Only commits signed by a key of this SSH allowed-signers file deploy.",
    example: "/etc/service/allowed_signers",
  },
  env: {
    say: "Variables added to the run script's environment (`{ file: … }` for a secret).",
    example: { NODE_ENV: "production" },
  },
  envFile: { say: "A dotenv file read at each deploy; its values are secrets.", example: "/etc/service/app.env" },
  envCommand: {
    say: "A command whose output gives secret variables at each deploy, never stored on the disk (docs/security.md).",
    example: "age -d -i /etc/service/age.key secrets.env.age",
  },
  envCommandFormat: { say: "How envCommand prints its variables: dotenv or json." },
  envCommandTimeoutMs: { say: "How long envCommand may take before the deploy fails, in milliseconds." },
  ageIdentityFile: {
    say: "The age identities that open an age-encrypted envFile (0600; docs/security.md).",
    example: "/etc/service/age.key",
  },
  releases: {
    say: "Build each deploy in its own directory and switch `current` to it in one step (docs/releases.md).",
    example: { path: "/srv/app", keep: 5, shared: [".env"], carry: ["node_modules"] },
  },
  gate: {
    say: "Deploy a commit only once these forge checks are success on it (needs `status`).",
    example: { checks: ["ci/test"], waitMs: 1800000 },
  },
  limits: {
    say: "Cap the deploy's scripts through cgroups; where they cannot be used, deploys are refused.",
    example: { memory: "1G", cpu: 1, nice: 10 },
  },
  watch: {
    say: "After the health check, watch a Prometheus query (or a command) for a while; a breach rolls back (docs/watch.md).",
    example: {
      forMs: 300000,
      prometheus: { url: "http://127.0.0.1:9090", query: 'sum(rate(http_requests_total{code=~"5.."}[1m]))', max: 0.05 },
    },
  },
  previews: {
    say: "A running copy of each open pull request, torn down when it closes (docs/previews.md).",
    example: {
      path: "/srv/web/previews",
      url: "https://pr-{number}.preview.example.com",
      ports: "4100-4199",
      user: "preview",
    },
  },
  activateScript: {
    say: "With releases: run in `current` after each switch (a restart).",
    example: "systemctl --user restart app",
  },
  freeze: {
    say: "No deploy starts while a window holds, unless forced.",
    example: [{ from: "Fri 16:00", to: "Mon 08:00", timeZone: "Europe/Berlin" }],
  },
  catchUp: { say: "When a pause or freeze ends, deploy the newest push refused during it, once." },
  paths: { say: "Deploy a push only when it touches a file matching one of these globs.", example: ["src/**"] },
  skipMarkers: {
    say: "Skip a push whose head commit says [skip deploy] (or your own markers).",
    example: true,
    unset: "Default: false (a list of markers of your own replaces them); for example:",
  },
  deploymentEvents: { say: "Deploy GitHub `deployment` events' commits and post their statuses." },
  environment: { say: "The forge environment this app deploys (deployment events for another are skipped)." },
  deploymentCreators: {
    say: "With deploymentEvents: only deployments created by these logins deploy.",
    example: ["github-actions[bot]"],
  },
  adminPublicUrl: {
    say: "The dashboard's public URL, linked from deployment statuses.",
    example: "https://deploy.example.com/admin",
  },
  environmentUrl: {
    say: "The deployed app's URL, given to the forge's deployment statuses.",
    example: "https://example.com",
  },
  apps: {
    say: "Multi-app mode: several apps, each with its host, path, repository, script and secret.",
    example: [
      { name: "web", host: "deploy.example.com", path: "/web", repoPath: "/srv/web", runScript: "npm run deploy" },
    ],
  },
  maxConcurrentDeploys: {
    say: "At most this many deploys build at once across every app (0: no limit).",
    example: 4,
    unset: "Default: the CPUs of the machine, at least 2; for example:",
  },
  adminPort: {
    say: "Port of the admin listener (/healthz, /metrics, the API, the dashboard).",
    example: 9090,
    unset: "Unset by default (no admin listener); for example:",
  },
  adminHostname: { say: "Address of the admin listener." },
  adminToken: {
    say: "Admin API token (keep it out of this file).",
    unset: "Default: one generated into .service/admin.token.",
  },
  adminOidc: {
    say: "People sign in to the dashboard with the team's OpenID provider; roles from their groups (docs/admin.md).",
    example: {
      issuer: "https://id.example.com/realms/acme",
      clientId: "deploy-dashboard",
      clientSecretFile: "/etc/service/oidc-secret",
      roles: { claim: "groups", admin: ["ops"], read: ["engineering"] },
    },
  },
  adminTrustedHeader: {
    say: "The user a sign-in proxy in front of the admin listener names in a header (docs/admin.md).",
    example: {
      header: "Remote-User",
      groupsHeader: "Remote-Groups",
      from: ["127.0.0.1/32"],
      secretFile: "/etc/service/proxy-secret",
      roles: { admin: ["ops"] },
    },
  },
  adminTokenLogin: { say: "The dashboard's token form; false hides it (people sign in with adminOidc)." },
  adminSessionHours: { say: "How long a dashboard session lasts after its login, in hours." },
  adminKioskDays: { say: "How long a kiosk session of the wall (/wall?kiosk=1, a read token) lasts, in days." },
  adminMcp: {
    say: "The MCP endpoint for agents on the admin listener: read or write (docs/agents.md).",
    example: "read",
  },
  audit: {
    say: "The audit trail's retention: whole monthly files older than keepDays go.",
    example: { keepDays: 365 },
  },
  tokens: {
    say: "Admin tokens scoped to a role and apps (`service token add` writes them).",
    example: [{ name: "grafana", role: "read", file: ".service/tokens/grafana" }],
  },
  httpsPrompt: { say: "Ask about HTTPS at an interactive start on Linux until it is set up." },
};
