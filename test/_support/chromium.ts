/**
 * Which Chromium drives the dashboard, and how: Debian's headless one unless `SERVICE_TEST_CHROMIUM` names another
 * binary. Free of test-runner hooks, so a plain script (scripts/screenshots.ts) uses it too.
 */
export const CHROMIUM = process.env.SERVICE_TEST_CHROMIUM ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
