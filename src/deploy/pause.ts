/** An app's pause: deploys are not started while it holds (README "service pause"). */
export interface PauseState {
  /** Why, as given to `service pause`; null when none was given. */
  reason: string | null;
  /** ISO time the pause began. */
  since: string;
}

/** The pause in force for `app` (undefined in single-app mode) in the service directory `cwd`, if any. */
export function pauseOf(_cwd: string, _app?: string): PauseState | undefined {
  return undefined;
}
