/**
 * Skip markers (docs/configuration.md `skipMarkers`): a pushed head commit whose message says `[skip deploy]` (or
 * another marker) does not deploy. The message is read from the delivery's payload, the way each forge sends it.
 */

/** The markers `skipMarkers: true` looks for. */
export const DEFAULT_SKIP_MARKERS = ["[skip deploy]", "[deploy skip]", "[skip cd]", "[no deploy]"] as const;

/** The markers an app looks for: none when off, the defaults for `true`, else its own list. */
export function markersOf(setting: boolean | readonly string[] | undefined): readonly string[] {
  if (!setting) return [];
  return setting === true ? DEFAULT_SKIP_MARKERS : setting;
}

/** The first of `markers` that `message` contains, whatever the case. */
export function markerIn(message: string, markers: readonly string[]): string | undefined {
  const lower = message.toLowerCase();
  return markers.find((marker) => marker && lower.includes(marker.toLowerCase()));
}

type Payload = Record<string, unknown>;

const object = (value: unknown): Payload | undefined =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Payload) : undefined;

/**
 * The pushed head commit's message and hash as the payload carries them: GitHub `head_commit`, GitLab and
 * Gitea/Forgejo the entry of `commits` whose id is `after` (else the last one), Bitbucket
 * `push.changes[0].new.target`. Undefined when the payload has none (curl).
 */
export function headMessageOf(payload: Payload | undefined): { message: string; commit?: string } | undefined {
  if (!payload) return undefined;
  const pick = (commit: Payload | undefined, id: unknown) =>
    commit && typeof commit.message === "string"
      ? { message: commit.message, ...(typeof id === "string" ? { commit: id } : {}) }
      : undefined;
  const head = object(payload.head_commit);
  if (head) return pick(head, head.id);
  const commits = Array.isArray(payload.commits) ? payload.commits.map(object) : [];
  if (commits.length > 0) {
    const after = payload.checkout_sha ?? payload.after;
    const last = commits.find((c) => c?.id === after) ?? commits[commits.length - 1];
    return pick(last, last?.id);
  }
  const changes = object(payload.push)?.changes;
  const target = object(object(object(Array.isArray(changes) ? changes[0] : undefined)?.new)?.target);
  return pick(target, target?.hash);
}
