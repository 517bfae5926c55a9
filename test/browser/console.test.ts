import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { FakeClock, type RunningSluice, startSluice } from 'sluice';
import { type ConsoleUnderTest, consolePage, launchChromium, startConsole } from '../helpers/browser.ts';

const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url).pathname;
const MAX_RESPONSE_BYTES = 200 * 1024;

/**
 * The console in headless Chromium against a really started server on a fake clock, so visibility timeouts,
 * the DLQ alarm check and the move task's rate are driven by the test instead of waited for. The page itself
 * polls on real time; the test waits for what it shows.
 */
describe('web console', { concurrency: false }, () => {
  let ui: ConsoleUnderTest;
  let sluice: RunningSluice;
  let page: Page;
  const responses: Array<{ url: string; bytes: number }> = [];
  const pass = (seconds: number) => ui.pass(seconds);

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    ui = await startConsole();
    ({ sluice, page } = ui);
    page.on('response', async (response) => {
      const body = await response.body().catch(() => undefined);
      if (body) responses.push({ url: response.url(), bytes: body.length });
    });
  });

  after(async () => {
    await ui?.close();
  });

  async function statusShows(text: string | RegExp): Promise<void> {
    await page.locator('#status', { hasText: text }).waitFor();
  }

  async function receivedCount(): Promise<string[]> {
    return page.locator('#poll-results .receive-count').allTextContents();
  }

  test('create queues, send and poll, watch a poison message reach the DLQ, redrive it at a rate', {
    timeout: 120_000,
  }, async () => {
    await page.goto(`${sluice.endpoint}/console`);
    await page.getByRole('heading', { name: 'Queues', exact: true }).waitFor();

    // The DLQ first, by keyboard only: type the name and press Enter in the form.
    await page.getByLabel('Name (FIFO names end in .fifo)').focus();
    await page.keyboard.type('orders-dlq');
    await page.keyboard.press('Enter');
    await statusShows('Created queue orders-dlq.');
    await page.locator('tr[data-queue="orders-dlq"]').waitFor();

    // The source queue: 30 s visibility, dead-lettered after 2 receives.
    await page.getByLabel('Name (FIFO names end in .fifo)').fill('orders');
    await page.getByLabel('Visibility timeout (s)').fill('30');
    await page.getByLabel('Dead-letter queue').selectOption('orders-dlq');
    await page.getByLabel('Max receives before the DLQ').fill('2');
    await page.getByRole('button', { name: 'Create queue' }).click();
    await statusShows('Created queue orders.');
    const attributes = await sluice.service.actions.GetQueueAttributes({
      QueueUrl: `${sluice.endpoint}/000000000000/orders`,
      AttributeNames: ['All'],
    });
    assert.equal(attributes.Attributes?.VisibilityTimeout, '30');
    assert.deepEqual(JSON.parse(attributes.Attributes?.RedrivePolicy ?? '{}'), {
      deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:orders-dlq',
      maxReceiveCount: 2,
    });

    // A DLQ that keeps messages only a day: a standard DLQ keeps their original send time, so the page warns.
    await sluice.service.actions.SetQueueAttributes({
      QueueUrl: `${sluice.endpoint}/000000000000/orders-dlq`,
      Attributes: { MessageRetentionPeriod: '86400' },
    });

    // The filter narrows the list by name.
    await page.getByLabel('Filter by name').fill('dlq');
    await page.locator('tr[data-queue="orders"]').waitFor({ state: 'detached' });
    assert.equal(await page.locator('tr[data-queue="orders-dlq"]').count(), 1);
    await page.getByLabel('Filter by name').fill('');

    // Send three messages, one JSON with an attribute; poll them with a 30 s visibility timeout.
    await page.getByRole('link', { name: 'orders', exact: true }).click();
    await page.getByRole('heading', { name: /^orders/ }).waitFor();
    await page.getByLabel('Body').fill('{"order":42,"items":["tea"]}');
    await page.getByRole('button', { name: 'Add attribute' }).click();
    await page.getByLabel('Attribute 1 name').fill('source');
    await page.locator('.attr-value').fill('console');
    await page.getByRole('button', { name: 'Send message' }).click();
    await statusShows(/^Sent message /);
    await page.locator('.attr-name').fill('');
    for (const body of ['second', 'third']) {
      await page.getByLabel('Body').fill(body);
      await page.getByRole('button', { name: 'Send message' }).click();
      await statusShows(/^Sent message /);
      await page.locator('#status').evaluate((node) => {
        node.textContent = '';
      });
    }
    await page.locator('#count-visible', { hasText: '3' }).waitFor();

    await page.getByLabel('Visibility timeout (s)').fill('30');
    await page.getByRole('button', { name: 'Poll' }).click();
    await page.locator('#poll-results', { hasText: '3 messages received' }).waitFor();
    assert.deepEqual(await receivedCount(), ['1', '1', '1']);
    const jsonBody = page.locator('#poll-results pre.body', { hasText: '"order": 42' });
    assert.equal(await jsonBody.textContent(), JSON.stringify({ order: 42, items: ['tea'] }, null, 2));
    await page.locator('#poll-results', { hasText: 'source (String)' }).waitFor();
    await page.locator('#count-in-flight', { hasText: '3' }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'queue.png'), fullPage: true });

    // Not deleted: after the timeout they come back with a receive count of 2; the next receive dead-letters them.
    await pass(31);
    await page.getByRole('button', { name: 'Poll' }).click();
    await page.locator('#poll-results .receive-count', { hasText: '2' }).first().waitFor();
    assert.deepEqual(await receivedCount(), ['2', '2', '2']);
    await pass(31);
    await page.getByRole('button', { name: 'Poll' }).click();
    await page.locator('#poll-results', { hasText: '0 messages received' }).waitFor();

    // The alarm check runs every 10 s of server time: the list shows the badge, the DLQ page its banner.
    await pass(10);
    await page.getByRole('link', { name: '← Queues' }).click();
    await page.locator('tr[data-queue="orders-dlq"] .badge', { hasText: 'ALARM' }).waitFor();
    await page.locator('tr[data-queue="orders-dlq"] [data-col="visible"]', { hasText: '3' }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'queues.png'), fullPage: true });
    await page.getByRole('link', { name: 'orders-dlq' }).click();
    await page.getByRole('heading', { name: /^orders-dlq/ }).waitFor();
    await page.locator('#alarm-banner', { hasText: 'Alarm: 3 messages in this dead-letter queue' }).waitFor();
    await page.locator('#links', { hasText: 'Dead-letter queue of: orders' }).waitFor();
    await page
      .locator('#retention-warning', { hasText: /oldest message here expires in 2[34]\.\d h/ })
      .waitFor();
    await page.locator('#alarm-history summary').click();
    await page.locator('#alarm-history li', { hasText: 'raised' }).waitFor();
    await sluice.sampler.sample();
    await page.getByRole('button', { name: 'Last 24 hours' }).click();
    await page.locator('#charts figcaption', { hasText: 'Depth, last 24 hours' }).waitFor();
    await page.getByRole('button', { name: 'Last hour' }).click();
    await page.locator('#charts figcaption', { hasText: 'Depth, last hour' }).waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'dlq.png'), fullPage: true });

    // Redrive back to the source at 1 message per second: the bar fills one step per second of server time.
    await page.getByLabel('Messages per second').fill('1');
    await page.getByRole('button', { name: 'Start DLQ redrive' }).click();
    await page.locator('#redrive-status', { hasText: /^RUNNING: \d of 3 moved/ }).waitFor();
    await page.locator('#redrive-cancel').waitFor();
    let seen = -1;
    for (let second = 0; second < 10; second++) {
      await pass(1);
      const value = Number(
        await page.locator('#redrive-progress').evaluate((p) => (p as HTMLProgressElement).value),
      );
      assert.ok(value >= seen, 'the progress bar never goes back');
      seen = value;
      if ((await page.locator('#redrive-status').textContent())?.startsWith('COMPLETED')) break;
      // Let the page's 1 s poll see the new state before time moves on.
      await page.waitForFunction(
        (v) => Number((document.querySelector('#redrive-progress') as HTMLProgressElement).value) >= v,
        value,
      );
    }
    await page.locator('#redrive-status', { hasText: 'COMPLETED: 3 of 3 moved' }).waitFor();
    assert.equal(
      await page.locator('#redrive-progress').evaluate((p) => (p as HTMLProgressElement).value),
      3,
    );
    await page.locator('#redrive-cancel').waitFor({ state: 'hidden' });

    // Back in the source, and purged after the confirmation, by keyboard.
    await page.getByRole('link', { name: 'orders', exact: true }).click();
    await page.getByRole('heading', { name: /^orders$/ }).waitFor();
    await page.locator('#count-visible', { hasText: '3' }).waitFor();
    await page.locator('#purge').focus();
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Yes, purge');
    await page.keyboard.press('Enter');
    await statusShows('Purged orders.');
    await page.locator('#count-visible', { hasText: '0' }).waitFor();

    const largest = responses.reduce((a, b) => (b.bytes > a.bytes ? b : a), { url: '', bytes: 0 });
    assert.ok(responses.length > 20, 'responses were recorded');
    assert.ok(largest.bytes < MAX_RESPONSE_BYTES, `${largest.url} answered ${largest.bytes} bytes`);
  });

  test('attributes and tags are edited from the queue page', { timeout: 60_000 }, async () => {
    await page.goto(`${sluice.endpoint}/console#/queue/orders`);
    await page.locator('#attr-VisibilityTimeout').fill('45');
    await page.locator('#attr-MessageRetentionPeriod').fill('7200');
    await page.getByRole('button', { name: 'Save attributes' }).click();
    await statusShows('Saved MessageRetentionPeriod, VisibilityTimeout.');
    const url = `${sluice.endpoint}/000000000000/orders`;
    const { Attributes } = await sluice.service.actions.GetQueueAttributes({
      QueueUrl: url,
      AttributeNames: ['All'],
    });
    assert.equal(Attributes?.VisibilityTimeout, '45');
    assert.equal(Attributes?.MessageRetentionPeriod, '7200');

    // A value SQS refuses is reported in the status line, AWS's error code included.
    await page.locator('#attr-DelaySeconds').fill('901');
    await page.getByRole('button', { name: 'Save attributes' }).click();
    await statusShows(/SetQueueAttributes: InvalidAttributeValue/);

    await page.locator('#tag-key').fill('team');
    await page.locator('#tag-value').fill('payments');
    await page.getByRole('button', { name: 'Add tag' }).click();
    await statusShows('Tag saved.');
    await page.locator('#tags td', { hasText: 'payments' }).waitFor();
    assert.deepEqual((await sluice.service.actions.ListQueueTags({ QueueUrl: url })).Tags, {
      team: 'payments',
    });
    await page.getByRole('button', { name: 'Remove tag team' }).click();
    await statusShows('Removed tag team.');
    assert.deepEqual((await sluice.service.actions.ListQueueTags({ QueueUrl: url })).Tags ?? {}, {});
  });

  test('everything above ran under the CSP without a violation, and nothing the browser loaded failed', async () => {
    const headers = (await page.request.get(`${sluice.endpoint}/console`)).headers();
    assert.match(headers['content-security-policy'] ?? '', /script-src 'self'.*frame-ancestors 'none'/);
    assert.equal(headers['x-frame-options'], 'DENY');
    assert.equal(headers['x-content-type-options'], 'nosniff');
    assert.deepEqual(ui.cspViolations, []);
    assert.deepEqual(ui.failedLoads, []);
    // The page names its icon; a browser without one asks for /favicon.ico, which used to answer 400.
    assert.ok(
      responses.some((response) => response.url.endsWith('/console/favicon.svg')),
      'the icon was loaded',
    );
  });
});

/** The console of a server with access keys: the sign-in form, a session with its key's limits, sign-out. */
describe('web console with credentials', { concurrency: false }, () => {
  const ADMIN = { accessKeyId: 'AKIDADMIN', secretAccessKey: 'admin-secret' };
  const ORDERS = { accessKeyId: 'AKIDORDERS', secretAccessKey: 'orders-secret', queues: ['orders*'] };
  const clock = new FakeClock(Date.UTC(2026, 11, 1, 9));
  let sluice: RunningSluice;
  let browser: Browser;
  let page: Page;
  let dataDir: string;
  const cspViolations: string[] = [];

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sluice-console-keys-'));
    sluice = await startSluice({
      port: 0,
      dataDir,
      clock,
      logLevel: 'silent',
      credentials: [ADMIN, ORDERS],
    });
    const context = { baseUrl: sluice.endpoint, senderId: ADMIN.accessKeyId };
    for (const name of ['orders-a-dlq', 'secret'])
      await sluice.service.actions.CreateQueue({ QueueName: name }, context);
    const RedrivePolicy = JSON.stringify({
      deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:orders-a-dlq',
      maxReceiveCount: 3,
    });
    await sluice.service.actions.CreateQueue(
      { QueueName: 'orders-a', Attributes: { RedrivePolicy } },
      context,
    );
    browser = await launchChromium();
    page = await consolePage(browser, cspViolations);
  });

  after(async () => {
    await browser?.close();
    await sluice?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function signIn(key: { accessKeyId: string; secretAccessKey: string }): Promise<void> {
    await page.getByLabel('Access key id').fill(key.accessKeyId);
    await page.getByLabel('Secret access key').fill(key.secretAccessKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  test('signs in, lists and creates only the key’s queues, signs out', { timeout: 60_000 }, async () => {
    const first = await page.goto(`${sluice.endpoint}/console`);
    assert.equal(first?.status(), 401);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();

    await signIn({ ...ORDERS, secretAccessKey: 'wrong' });
    await page.getByRole('alert').filter({ hasText: 'Wrong access key id or secret.' }).waitFor();

    await signIn(ORDERS);
    await page.getByRole('heading', { name: 'Queues', exact: true }).waitFor();
    await page.locator('#signed-in-as', { hasText: 'Signed in as AKIDORDERS' }).waitFor();
    await page.locator('tr[data-queue="orders-a"]').waitFor();
    assert.equal(await page.locator('tr[data-queue="secret"]').count(), 0, 'outside the key: not listed');

    // The page's SQS calls carry the session: CreateQueue works within orders*, and is refused outside it.
    await page.getByLabel('Name (FIFO names end in .fifo)').fill('orders-b');
    await page.getByRole('button', { name: 'Create queue' }).click();
    await page.locator('#status', { hasText: 'Created queue orders-b.' }).waitFor();
    await page.locator('tr[data-queue="orders-b"]').waitFor();
    await page.getByLabel('Name (FIFO names end in .fifo)').fill('secret-2');
    await page.getByRole('button', { name: 'Create queue' }).click();
    await page.locator('#status', { hasText: 'CreateQueue: AccessDenied' }).waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    const status = await page.evaluate(async () => (await fetch('/api/overview')).status);
    assert.equal(status, 401, 'the session is over');

    await page.goto(`${sluice.endpoint}/console`);
    await signIn(ADMIN);
    await page.locator('tr[data-queue="secret"]').waitFor();
    // The sign-in form's inline style is allowed by its hash; the console's own policy holds throughout.
    assert.deepEqual(cspViolations, []);
  });

  test('silences a DLQ alarm from the alarms page over the session, naming the key', {
    timeout: 30_000,
  }, async () => {
    // Signed in as AKIDADMIN by the test before; the DLQ is watched from the next alarm check on.
    await clock.advance(10_000);
    await page.goto(`${sluice.endpoint}/console#/alarms`);
    const alarm = page.locator('article[data-alarm="orders-a-dlq"]');
    await alarm.getByRole('button', { name: 'Silence', exact: true }).click();
    await alarm.locator('.silence', { hasText: /^Silenced by AKIDADMIN at / }).waitFor();
    await clock.advance(10_000);
    await alarm.locator('tr[data-event="silenced"]', { hasText: 'silenced by AKIDADMIN' }).waitFor();
    assert.deepEqual(cspViolations, []);
  });
});
