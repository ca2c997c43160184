/**
 * What decides whether a push deploys, before anything is queued (docs/architecture.md "Triggers"): the paths it
 * touches, a skip marker in its message, the release tag it names, a GitHub deployment event. A delivery that does
 * not deploy is answered `[skipped] <text>` and counted by its reason.
 */

/** Why a push does not deploy. */
export interface TriggerSkip {
  /** What `/metrics` counts it by (`service_skipped_pushes_total{app,reason}`). */
  reason: "paths" | "marker" | "tag" | "environment";
  /** The `[skipped]` line's text and the JSON answer's `reason`, e.g. `no change under apps/web/** since 1a2b3c4d5e6f`. */
  text: string;
}
