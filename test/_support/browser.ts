/**
 * A real browser for the dashboard's tests: Debian's headless Chromium driven by playwright-core (no browser
 * download). `browserPath` is undefined where none is installed (the tests skip, saying so).
 */
import { existsSync } from "node:fs";
import type { BrowserContext, Locator } from "playwright-core";
import { tempDir, waitFor } from "./helpers.ts";

const CHROMIUM = process.env.SERVICE_TEST_CHROMIUM ?? "/usr/bin/chromium";

export const browserPath = existsSync(CHROMIUM) ? CHROMIUM : undefined;
if (!browserPath)
  console.warn(
    `browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set SERVICE_TEST_CHROMIUM)`,
  );

/** A fresh headless Chromium with its own profile; close it when done. */
export async function launchBrowser(): Promise<BrowserContext> {
  const { chromium } = await import("playwright-core");
  return chromium.launchPersistentContext(tempDir("service-chromium-"), {
    executablePath: browserPath,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
    viewport: { width: 1100, height: 720 },
  });
}

/** Waits until the one element `locator` names is shown. */
export const shown = (locator: Locator) => locator.waitFor({ state: "visible" });

/** Waits until `locator`'s text passes `check`. */
export const hasText = (locator: Locator, check: (text: string) => boolean) =>
  waitFor(async () => check((await locator.textContent()) ?? ""), `${locator} to have the text`);
