/**
 * Where a commit and a comparison of two commits are shown on the app's forge, for the dashboard's links: derived
 * from the clone's `origin` URL (credentials dropped, an ssh remote mapped to https) for the public forges, or for a
 * self-hosted one that the app's `status` names (its provider, and an API URL on the origin's host). Anything else
 * gets no link: a wrong link is worse than none.
 */
import { originUrl } from "../system/git.ts";
import type { ResolvedApp } from "./apps.ts";
import { PROVIDERS, type Provider, type StatusSettings } from "./schema-notify.ts";

/** URL templates: `{sha}` in `commit`, `{from}` and `{to}` in `compare` (each replaced by a commit id). */
export interface ForgeLinks {
  commit: string;
  compare: string;
}

const PUBLIC_FORGES: Record<string, Provider> = {
  "github.com": "github",
  "gitlab.com": "gitlab",
  "codeberg.org": "gitea",
  "gitea.com": "gitea",
  "bitbucket.org": "bitbucket",
};

/** Each forge's pages, after `https://host/owner/name`. */
const PATHS: Record<Provider, ForgeLinks> = {
  github: { commit: "/commit/{sha}", compare: "/compare/{from}...{to}" },
  gitlab: { commit: "/-/commit/{sha}", compare: "/-/compare/{from}...{to}" },
  gitea: { commit: "/commit/{sha}", compare: "/compare/{from}...{to}" },
  bitbucket: { commit: "/commits/{sha}", compare: "/branches/compare/{to}%0D{from}" },
};

/** `https://host[:port]/owner/name` of an http(s), `ssh://` or `git@host:owner/name` remote; undefined for others. */
function webBase(origin: string): { base: string; host: string } | undefined {
  const text = origin.trim();
  const scp = /^[^@/\s]+@([^:/\s]+):(?!\/)([^\s]+)$/.exec(text);
  let base: URL;
  try {
    if (scp) base = new URL(`https://${scp[1]}/${scp[2]}`);
    else {
      const url = new URL(text);
      if (url.protocol === "ssh:") base = new URL(`https://${url.hostname}${url.pathname}`);
      else if (url.protocol === "https:" || url.protocol === "http:") base = url;
      else return undefined;
    }
  } catch {
    return undefined;
  }
  const path = base.pathname.replace(/\/+$/, "").replace(/\.git$/, "");
  // owner/name, GitLab's groups/subgroups/name too; nothing that would leave the repository's pages.
  if (!/^(\/[A-Za-z0-9._~-]+){2,}$/.test(path) || path.split("/").some((part) => part === "." || part === ".."))
    return undefined;
  return { base: `${base.protocol}//${base.host}${path}`, host: base.hostname.toLowerCase() };
}

/** The self-hosted forge `status` names for `host`: its provider, when its API URL is on that host. */
function selfHosted(status: StatusSettings | undefined, host: string): Provider | undefined {
  if (!status?.provider || !status.apiUrl || !PROVIDERS.includes(status.provider)) return undefined;
  let api: string;
  try {
    api = new URL(status.apiUrl).hostname.toLowerCase();
  } catch {
    return undefined;
  }
  return api === host || api === `api.${host}` ? status.provider : undefined;
}

/** The commit and compare URL templates of the forge `origin` is on; null when it is none known. */
export function forgeLinks(origin: string | undefined, status?: StatusSettings): ForgeLinks | null {
  const web = origin ? webBase(origin) : undefined;
  if (!web) return null;
  const provider = PUBLIC_FORGES[web.host.replace(/^www\./, "")] ?? selfHosted(status, web.host);
  if (!provider) return null;
  const paths = PATHS[provider];
  return { commit: web.base + paths.commit, compare: web.base + paths.compare };
}

/** Where `app`'s commits are shown on its forge (from its clone's origin); null when on none known. */
export async function appLinks(app: Pick<ResolvedApp, "repoPath" | "status">): Promise<ForgeLinks | null> {
  return forgeLinks(await originUrl(app.repoPath, process.env), app.status);
}
