/**
 * What to set on the forge for the webhook (docs/forges.md): where to click, the URL, the content type, the secret
 * and the events, for the forge the `origin` remote names or the one asked for.
 */
import { parseRemote } from "../config/forge.ts";
import { PROVIDERS, type Provider } from "../config/schema-notify.ts";

export const FORGES = PROVIDERS;

/** The forge a remote URL's host names (a self-hosted one by the word in its host name), if any. */
export function forgeOfRemote(url: string | undefined): { forge?: Provider; host?: string; repo?: string } {
  const remote = url ? parseRemote(url) : undefined;
  if (!remote) return {};
  const host = remote.host.toLowerCase();
  const forge = host.includes("github")
    ? "github"
    : host.includes("gitlab")
      ? "gitlab"
      : host.includes("bitbucket")
        ? "bitbucket"
        : /gitea|forgejo|codeberg/.test(host)
          ? "gitea"
          : undefined;
  return { ...(forge ? { forge } : {}), host: remote.host, repo: remote.repo.replace(/\.git$/, "") };
}

/** The forge's webhook page of the repository, when the remote names it. */
function hooksPage(forge: Provider, host: string | undefined, repo: string | undefined): string | undefined {
  if (!host || !repo) return undefined;
  const base = `https://${host}/${repo}`;
  return {
    github: `${base}/settings/hooks/new`,
    gitlab: `${base}/-/hooks`,
    gitea: `${base}/settings/hooks`,
    bitbucket: `${base}/admin/webhooks`,
  }[forge];
}

/**
 * The lines that set up the webhook on `forge`: `url` the payload URL, `secret` what to say in the secret's field
 * (the value itself on a terminal, else where it is).
 */
export function forgeSettings(
  forge: Provider,
  url: string,
  secret: string,
  remote: { host?: string; repo?: string } = {},
): string[] {
  const page = hooksPage(forge, remote.host, remote.repo);
  const at = page ? ` (${page})` : "";
  switch (forge) {
    case "github":
      return [
        `GitHub: the repository's Settings → Webhooks → Add webhook${at}:`,
        `  Payload URL:   ${url}`,
        "  Content type:  application/json",
        `  Secret:        ${secret}`,
        '  Events:        "Just the push event."; Active ticked',
      ];
    case "gitlab":
      return [
        `GitLab: the project's Settings → Webhooks → Add new webhook${at}:`,
        `  URL:           ${url}`,
        `  Secret token:  ${secret}`,
        "  Trigger:       Push events (all branches, or the branch this service deploys)",
        "  (GitLab always sends application/json)",
      ];
    case "gitea":
      return [
        `Gitea / Forgejo: the repository's Settings → Webhooks → Add webhook → Gitea (or Forgejo)${at}:`,
        `  Target URL:    ${url}`,
        "  HTTP method:   POST",
        "  Content type:  application/json",
        `  Secret:        ${secret}`,
        "  Trigger on:    Push events",
      ];
    case "bitbucket":
      return [
        `Bitbucket: the repository's Repository settings → Webhooks → Add webhook${at}:`,
        `  URL:           ${url}`,
        `  Secret:        ${secret}`,
        "  Triggers:      Repository push",
        "  (Bitbucket always sends application/json)",
      ];
  }
}
