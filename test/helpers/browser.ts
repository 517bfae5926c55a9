import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type LaunchOptions, type Page } from 'playwright-core';
import { FakeClock, type RunningSluice, type SluiceOptions, startSluice } from 'sluice';

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

/** A server on a fake clock (DLQ alarms checked every 10 s) and a console page in Chromium, for one suite. */
export interface ConsoleUnderTest {
  readonly clock: FakeClock;
  readonly sluice: RunningSluice;
  readonly page: Page;
  /** Pages, scripts, styles and icons the browser failed to load (a GET answered 400 or more). */
  readonly failedLoads: string[];
  /** What the console's CSP blocked. */
  readonly cspViolations: string[];
  /** Advances server time by `seconds`, one second at a time, as a running server would live through it. */
  pass(seconds: number): Promise<void>;
  close(): Promise<void>;
}

export async function startConsole(options: SluiceOptions = {}): Promise<ConsoleUnderTest> {
  const clock = new FakeClock(Date.UTC(2026, 11, 1, 9));
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-console-'));
  const sluice = await startSluice({
    port: 0,
    dataDir,
    clock,
    logLevel: 'silent',
    alarms: { periodSeconds: 10 },
    ...options,
  });
  const stopServer = async () => {
    await sluice.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  // Without a browser (chromium not installed) the suite must fail, not hang on a server nobody closes.
  const browser = await launchChromium().catch(async (error: unknown) => {
    await stopServer();
    throw error;
  });
  const cspViolations: string[] = [];
  const failedLoads: string[] = [];
  const page = await consolePage(browser, cspViolations);
  page.on('response', (response) => {
    // The console's own SQS calls may fail on purpose (a refused attribute); what it loads must not.
    if (response.request().method() === 'GET' && response.status() >= 400)
      failedLoads.push(`${response.status()} ${response.url()}`);
  });
  return {
    clock,
    sluice,
    page,
    failedLoads,
    cspViolations,
    async pass(seconds) {
      for (let i = 0; i < seconds; i++) await clock.advance(1000);
    },
    async close() {
      await browser.close();
      await stopServer();
    },
  };
}
