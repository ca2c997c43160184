/**
 * A real browser for the dashboard: Debian's headless Chromium driven by playwright-core (no browser download).
 * Where there is no Chromium (chromium.ts) the browser tests are skipped, saying so.
 */
import { existsSync } from "node:fs";
import type { BrowserContext, Locator, Page } from "playwright-core";
import { ADMIN_TOKEN } from "./admin-helpers.ts";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.ts";
import { tempDir, waitFor } from "./helpers.ts";

export { CHROMIUM, CHROMIUM_ARGS };

/** Whether Chromium is here; warns once per file that asks when it is not. */
export function hasBrowser(what: string): boolean {
  const found = existsSync(CHROMIUM);
  if (!found)
    console.warn(
      `${what} skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set SERVICE_TEST_CHROMIUM)`,
    );
  return found;
}

/** A fresh headless browser profile; `await using` closes it. `acceptTls` takes a self-signed certificate. */
export async function launchBrowser(
  options: { acceptTls?: boolean; viewport?: { width: number; height: number } } = {},
): Promise<BrowserContext & AsyncDisposable> {
  const { chromium } = await import("playwright-core");
  const context = await chromium.launchPersistentContext(tempDir("service-chromium-"), {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    ignoreHTTPSErrors: options.acceptTls ?? false,
    ...(options.viewport ? { viewport: options.viewport } : {}),
  });
  return Object.assign(context, { [Symbol.asyncDispose]: () => context.close() });
}

/** Waits until the one element `locator` names is shown. */
export const shown = (locator: Locator) => locator.waitFor({ state: "visible" });

/** Waits until `locator`'s text passes `check`. */
export const hasText = (locator: Locator, check: (text: string) => boolean) =>
  waitFor(async () => check((await locator.textContent()) ?? ""), `${locator} to have the text`);

/** The context's page, logged in on the dashboard at `admin` with `token` (20 s for every wait). */
export async function loggedIn(context: BrowserContext, admin: string, token = ADMIN_TOKEN): Promise<Page> {
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(20_000);
  await page.goto(`${admin}/`);
  await page.getByLabel("Admin token").fill(token);
  await page.getByRole("button", { name: "Log in" }).click();
  return page;
}

/**
 * Clicks `button` and answers the dashboard's confirmation: `yes` confirms, `no` goes back, `escape` closes it
 * with the key. Returns the question it asked.
 */
export async function confirmWith(
  page: Page,
  button: Locator,
  answer: "yes" | "no" | "escape" = "yes",
): Promise<string> {
  await button.click();
  const dialog = page.getByRole("dialog");
  await shown(dialog);
  const question = (await dialog.locator("p").textContent()) ?? "";
  if (answer === "escape") await page.keyboard.press("Escape");
  else if (answer === "no") await dialog.getByRole("button", { name: "Go back" }).click();
  else await dialog.locator('[data-answer="yes"]').click();
  await dialog.waitFor({ state: "hidden" });
  return question;
}

/** axe-core's violations of serious or critical impact on the page as it is now (axe is injected, never shipped). */
export async function seriousViolations(page: Page): Promise<string[]> {
  const source = await Bun.file(require.resolve("axe-core/axe.min.js")).text();
  // evaluate runs outside the page's CSP, which (rightly) refuses any script not from the listener.
  await page.evaluate(source);
  const found = (await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } }).axe;
    return (await axe.run()).violations;
  })) as { id: string; impact: string; help: string; nodes: { target: string[] }[] }[];
  return found
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join(", ")})`);
}

/** What scrolls sideways: the page itself, or a table wider than its container (empty when nothing does). */
export function sidewaysScroll(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const wide: string[] = [];
    const root = document.documentElement;
    if (root.scrollWidth > window.innerWidth) wide.push(`the page: ${root.scrollWidth} > ${window.innerWidth} px`);
    for (const table of Array.from(document.querySelectorAll("table"))) {
      const box = table.parentElement;
      if (box && table.scrollWidth > box.clientWidth)
        wide.push(`table ${table.className || table.id || "?"}: ${table.scrollWidth} > ${box.clientWidth} px`);
    }
    return wide;
  });
}
