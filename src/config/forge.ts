/**
 * Which forge and repository an app's `status` settings name (from the settings or the `origin` URL), its API and
 * token: what commit statuses are written to (notify/) and what a gate reads (gate/).
 */
import type { Provider, StatusSettings } from "./schema-notify.ts";
import { statusToken } from "./notify.ts";

/** The public hosts whose forge and API are known without an `apiUrl`. */
const PUBLIC_HOSTS: Record<string, { provider: Provider; apiUrl: string }> = {
  "github.com": { provider: "github", apiUrl: "https://api.github.com" },
  "gitlab.com": { provider: "gitlab", apiUrl: "https://gitlab.com/api/v4" },
  "codeberg.org": { provider: "gitea", apiUrl: "https://codeberg.org/api/v1" },
  "gitea.com": { provider: "gitea", apiUrl: "https://gitea.com/api/v1" },
  "bitbucket.org": { provider: "bitbucket", apiUrl: "https://api.bitbucket.org/2.0" },
};

/** The public API of each provider, for a repository whose origin does not name a self-hosted one. Gitea has none. */
const PUBLIC_API: Partial<Record<Provider, string>> = {
  github: "https://api.github.com",
  gitlab: "https://gitlab.com/api/v4",
  bitbucket: "https://api.bitbucket.org/2.0",
};

/** Host and `owner/name` of a remote URL: https, ssh (`ssh://`, `git@host:owner/name`); undefined for a path. */
export function parseRemote(url: string): { host: string; repo: string } | undefined {
  const text = url.trim();
  const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/)(.+)$/.exec(text);
  let host: string;
  let path: string;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    try {
      const parsed = new URL(text);
      if (parsed.protocol === "file:") return undefined;
      host = parsed.hostname;
      path = decodeURIComponent(parsed.pathname);
    } catch {
      return undefined;
    }
  } else if (scp) {
    [, host, path] = scp as unknown as [string, string, string];
  } else {
    return undefined;
  }
  const repo = path.replace(/^\/+|\/+$/g, "").replace(/\.git$/, "");
  if (!host || !repo.includes("/")) return undefined;
  return { host: host.toLowerCase(), repo };
}

export interface StatusTarget {
  provider: Provider;
  repo: string;
  apiUrl: string;
  token: string;
  context: string;
  targetUrl?: string;
}

/** The context a status is reported under: the one `status` names, or `deploy` (`deploy/<app>` in multi-app mode). */
export function statusContextOf(settings: Pick<StatusSettings, "context">, app: string | undefined): string {
  return settings.context ?? (app ? `deploy/${app}` : "deploy");
}

/**
 * Fills in what the settings leave out, from the `origin` URL. Returns the target, or what is missing (one
 * message; `service check` and the deploy's log say the same).
 */
export function statusTarget(
  settings: StatusSettings,
  origin: string | undefined,
  app: string | undefined,
  cwd: string,
  env: NodeJS.ProcessEnv,
): StatusTarget | { problem: string } {
  const remote = origin ? parseRemote(origin) : undefined;
  const known = remote ? PUBLIC_HOSTS[remote.host.replace(/^www\./, "")] : undefined;
  const provider = settings.provider ?? known?.provider;
  if (!provider) {
    const from = remote
      ? `the origin host ${remote.host} is not a known public forge`
      : "the repository has no origin URL to infer it from";
    return { problem: `status: set provider (github, gitlab, gitea, bitbucket): ${from}` };
  }
  // An origin on another host is self-hosted (GitHub Enterprise, a GitLab or Gitea of its own): its API must be named.
  const apiUrl =
    settings.apiUrl ??
    (known ? (known.provider === provider ? known.apiUrl : undefined) : remote ? undefined : PUBLIC_API[provider]);
  if (!apiUrl)
    return {
      problem: `status: set apiUrl: the ${provider} API of ${remote ? remote.host : "this repository"} is not a known public one`,
    };
  const repo = settings.repo ?? remote?.repo;
  if (!repo)
    return {
      problem: `status: set repo (owner/name${provider === "gitlab" ? " or the project id" : ""}): the origin URL does not name it`,
    };
  const token = statusToken(settings, cwd, env);
  if ("problem" in token) return token;
  const context = statusContextOf(settings, app);
  return {
    provider,
    repo,
    apiUrl,
    token: token.token,
    context,
    ...(settings.targetUrl ? { targetUrl: settings.targetUrl } : {}),
  };
}
