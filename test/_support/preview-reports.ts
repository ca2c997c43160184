/** A preview, its settings and a forge's target, as the reports' tests give them to `reportPreview`. */
import type { StatusTarget } from "../../src/config/forge.ts";
import type { PreviewPhase, PreviewReport } from "../../src/previews/report.ts";
import type { Preview, PreviewSettings } from "../../src/previews/types.ts";
import { FORGE_TOKEN, REPO } from "./preview-forge.ts";

export const HEAD = "da1560886d4f094c3e6c9ef40349f7d38b5d27d7";
export const NEXT = "95790bf891e76fee5e1747ab589903a6a1f80f22";

const API = { github: "", gitea: "/api/v1", gitlab: "/api/v4", bitbucket: "/2.0" } as const;

export function forgeTarget(provider: StatusTarget["provider"], url: string): StatusTarget {
  return { provider, repo: REPO, apiUrl: `${url}${API[provider]}`, token: FORGE_TOKEN, context: "deploy" };
}

export function previewOf(forge: Preview["forge"], changes: Partial<Preview> = {}): Preview {
  return {
    app: "default",
    forge,
    number: 7,
    title: "Faster search",
    branch: "feature/search",
    slug: "feature-search",
    head: HEAD,
    port: 4107,
    url: "https://pr-7.preview.example.com",
    dir: "/srv/previews/pr-7",
    created: "2026-11-28T10:00:00Z",
    updated: "2026-11-28T10:00:00Z",
    status: "building",
    ...changes,
  };
}

export function previewSettings(comment = false): PreviewSettings {
  return {
    path: "/srv/previews",
    teardownTimeoutMs: 300_000,
    url: "https://pr-{number}.preview.example.com",
    ports: { from: 4100, to: 4199 },
    max: 10,
    ttlDays: 7,
    slots: 1,
    authors: ["OWNER"],
    fromForks: false,
    env: {},
    comment,
    gate: false,
  };
}

export function reportOf(
  target: StatusTarget,
  preview: Preview,
  phase: PreviewPhase,
  extra: Partial<PreviewReport> = {},
): PreviewReport {
  return { target, settings: previewSettings(extra.settings?.comment ?? false), preview, phase, ...extra };
}
