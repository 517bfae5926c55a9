import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type LaunchOptions, type Page } from 'playwright-core';

/** Debian's chromium (`.ci/run` installs it); playwright-core never downloads a browser of its own. */
export const CHROMIUM = '/usr/bin/chromium';

/** The window the console is tested and pictured in: a common laptop screen. */
export const VIEWPORT = { width: 1280, height: 800 };

export const launchChromium = (extraArgs: readonly string[] = []): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', ...extraArgs],
  } satisfies LaunchOptions);

/** A 1280x800 page that fails the test on any script error of the console's, and notes what its CSP blocked. */
export async function consolePage(browser: Browser, cspViolations: string[]): Promise<Page> {
  const page = await browser.newPage({ viewport: VIEWPORT });
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (error) => {
    throw error;
  });
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  return page;
}

/**
 * Where the tests' screenshots go: test-artifacts/ by default, docs/images/ (the pictures of the console
 * guide, committed) when SLUICE_DOC_IMAGES=1, so that an ordinary test run leaves the tracked files alone.
 */
const SCREENSHOTS = new URL(
  process.env.SLUICE_DOC_IMAGES === '1' ? '../../docs/images/' : '../../test-artifacts/',
  import.meta.url,
).pathname;

/** The first screen of the page, 1280x800, as `docs/images/console-NAME.png` (or under test-artifacts/). */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `console-${name}.png`) });
}

/** The top of `selector`'s box in page coordinates (scrolled or not), in CSS pixels. */
export async function topOf(page: Page, selector: string): Promise<number> {
  return page.locator(selector).evaluate((element) => element.getBoundingClientRect().top + window.scrollY);
}

/** The bottom of `selector`'s box in page coordinates, in CSS pixels. */
export async function bottomOf(page: Page, selector: string): Promise<number> {
  return page
    .locator(selector)
    .evaluate((element) => element.getBoundingClientRect().bottom + window.scrollY);
}
