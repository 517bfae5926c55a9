import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Locator, Page } from 'playwright-core';
import type { RunningSluice } from 'sluice';
import { bottomOf, type ConsoleUnderTest, startConsole, topOf, VIEWPORT } from '../helpers/browser.ts';
import { deadLetteredOrders } from '../helpers/dead-lettered.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/** The computed styles a person sees of an element. */
function looks(element: Locator) {
  return element.evaluate((node) => {
    const style = getComputedStyle(node);
    return {
      background: style.backgroundColor,
      color: style.color,
      borderColor: style.borderTopColor,
      borderWidth: style.borderTopWidth,
      cursor: style.cursor,
      display: style.display,
      paddingLeft: Number.parseFloat(style.paddingLeft),
      underline: style.textDecorationLine.includes('underline'),
      height: node.getBoundingClientRect().height,
    };
  });
}

/** The console's colours (console.css), as computed styles give them. */
const ACCENT = 'rgb(11, 92, 173)';
const WHITE = 'rgb(255, 255, 255)';

/**
 * How the console says what happened, in headless Chromium against a really started server: the status area
 * (styled by outcome, replaced or cleared by the next action, kept by the page's own refreshes), Previous and
 * Next that look disabled when they are, and Browse messages as a button beside Poll.
 */
describe('console: feedback', { concurrency: false }, () => {
  let ui: ConsoleUnderTest;
  let sluice: RunningSluice;
  let page: Page;
  let sqs: SQSClient;
  const status = () => page.locator('#status');
  const rows = () => page.locator('#message-list tbody tr');

  before(async () => {
    ui = await startConsole();
    ({ sluice, page } = ui);
    sqs = sqsClient(sluice.endpoint);
    // More than the Messages page's 20 a page, so that there is a second page.
    await deadLetteredOrders(
      sqs,
      Array.from({ length: 24 }, (_, i) => ({ MessageBody: `{"order":${i + 1}}` })),
      'shop',
    );
  });

  after(async () => {
    sqs?.destroy();
    await ui?.close();
  });

  /** Ticks the first message of the page and replays it; the status says so. */
  async function replayFirst(): Promise<void> {
    await rows().first().locator('input[type=checkbox]').check();
    await page.locator('#replay-selected').click();
    await page.locator('#status.success', { hasText: 'Replayed 1 message.' }).waitFor();
  }

  test('the status area is styled by outcome, replaced by the next action, cleared by a search, dismissable', {
    timeout: 60_000,
  }, async () => {
    await page.goto(`${sluice.endpoint}/console#/messages/shop-dlq`);
    await page.locator('#message-list table').waitFor();
    assert.equal((await looks(status())).height, 0, 'no empty bar before anything happened');

    await replayFirst();
    const success = await looks(status());
    assert.equal(success.color, 'rgb(23, 115, 58)');
    assert.notEqual(success.background, 'rgba(0, 0, 0, 0)');
    assert.ok(success.height > 20, `the bar is ${success.height} px high`);

    // A search is the next action: the replay's outcome does not outlive it.
    await page.locator('#search-text').fill('order');
    await page.locator('#search-form button[type=submit]').click();
    await page.locator('#status:empty').waitFor({ state: 'attached' });
    assert.equal((await looks(status())).height, 0);

    await page.locator('#search-filter').fill('nonsense');
    await page.locator('#search-form button[type=submit]').click();
    await page.locator('#status.error', { hasText: 'InvalidParameterValue' }).waitFor();
    const error = await looks(status());
    assert.equal(error.color, 'rgb(180, 35, 24)');
    assert.notEqual(error.background, success.background);

    // The next action's success replaces the error.
    await page.locator('#search-filter').fill('');
    await page.locator('#search-form button[type=submit]').click();
    await page.locator('#status:empty').waitFor({ state: 'attached' });
    await replayFirst();
    assert.doesNotMatch((await status().textContent()) ?? '', /InvalidParameterValue/);

    await status().getByRole('button', { name: 'Dismiss' }).click();
    await page.locator('#status:empty').waitFor({ state: 'attached' });
  });

  test('an action’s outcome stays while the page refreshes itself', { timeout: 60_000 }, async () => {
    await page.goto(`${sluice.endpoint}/console#/queue/shop`);
    await page.locator('#send-body').fill('by hand');
    await page.getByRole('button', { name: 'Send message' }).click();
    await page.locator('#status.success', { hasText: /^Sent message / }).waitFor();
    const visible = Number(await page.locator('#count-visible').textContent());
    // Only the page's own refresh (every 2 s) can show this one.
    await sqs.send(
      new SendMessageCommand({ QueueUrl: `${sluice.endpoint}/000000000000/shop`, MessageBody: 'by SDK' }),
    );
    await page.locator('#count-visible', { hasText: String(visible + 1) }).waitFor();
    assert.match((await status().textContent()) ?? '', /^Sent message /);
  });

  test('Previous and Next are disabled, and look it, where there is no page to go to', {
    timeout: 60_000,
  }, async () => {
    await page.goto(`${sluice.endpoint}/console#/messages/shop-dlq`);
    await page.locator('#message-list table').waitFor();
    const back = page.locator('#page-back');
    const next = page.locator('#page-next');
    const compare = async (disabled: Locator, enabled: Locator) => {
      assert.equal(await disabled.isDisabled(), true);
      assert.equal(await enabled.isDisabled(), false);
      const [off, on] = [await looks(disabled), await looks(enabled)];
      assert.equal(on.cursor, 'pointer');
      assert.equal(off.cursor, 'not-allowed');
      assert.deepEqual([on.background, on.color, on.borderColor], [WHITE, ACCENT, ACCENT]);
      assert.notEqual(off.color, on.color, 'a disabled button’s text is greyed');
      assert.notEqual(off.borderColor, on.borderColor);
      assert.notEqual(off.background, on.background);
    };
    assert.equal(await rows().count(), 20);
    await compare(back, next);
    await next.click();
    await page.locator('#message-list tbody tr', { hasText: '{"order":24}' }).waitFor();
    await compare(next, back);
  });

  test('Browse messages is a button beside Poll, on the first screen, and opens the Messages page', {
    timeout: 60_000,
  }, async () => {
    await page.goto(`${sluice.endpoint}/console#/queue/shop-dlq`);
    const browse = page.getByRole('link', { name: 'Browse messages' });
    await browse.waitFor();
    const poll = page.locator('#poll-form button[type=submit]');
    const [link, button] = [await looks(browse), await looks(poll)];
    assert.equal(link.display, 'inline-block');
    assert.equal(link.underline, false);
    assert.deepEqual([link.borderWidth, link.borderColor, link.background], ['1px', ACCENT, WHITE]);
    assert.equal(link.paddingLeft, button.paddingLeft);
    assert.ok(
      Math.abs(link.height - button.height) <= 1,
      `${link.height} px high beside ${button.height} px`,
    );
    assert.ok(
      Math.abs(
        (await topOf(page, '#browse-messages')) - (await topOf(page, '#poll-form button[type=submit]')),
      ) <= 1,
    );
    assert.ok((await bottomOf(page, '#browse-messages')) <= VIEWPORT.height);
    await browse.click();
    await page.getByRole('heading', { name: 'Messages of shop-dlq' }).waitFor();
    assert.equal(new URL(page.url()).hash, '#/messages/shop-dlq');
    assert.deepEqual(ui.cspViolations, []);
  });
});
