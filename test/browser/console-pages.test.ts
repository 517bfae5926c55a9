import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Page } from 'playwright-core';
import type { RunningSluice } from 'sluice';
import {
  bottomOf,
  type ConsoleUnderTest,
  screenshot,
  startConsole,
  topOf,
  VIEWPORT,
} from '../helpers/browser.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * What a new user meets first, page by page, in headless Chromium at 1280x800 against a really started
 * server on a fake clock: the queue page's actions on the first screen, the list's URLs, delete control and
 * sparklines, which chart range is on, the queue's metrics, what a delete really did, the alarms page with
 * its history and silence controls, and plural forms. Each test leaves a screenshot for docs/guide/console.md.
 */
describe('console pages at 1280x800', { concurrency: false }, () => {
  let ui: ConsoleUnderTest;
  let sluice: RunningSluice;
  let page: Page;
  let sqs: SQSClient;
  const url = (name: string) => `${sluice.endpoint}/000000000000/${name}`;
  const arn = (name: string) => `arn:aws:sqs:us-east-1:000000000000:${name}`;
  const pass = (seconds: number) => ui.pass(seconds);

  before(async () => {
    ui = await startConsole();
    ({ sluice, page } = ui);
    sqs = sqsClient(sluice.endpoint);
    await createQueue('orders-dlq');
    await createQueue('orders', { RedrivePolicy: redrivePolicy('orders-dlq') });
  });

  after(async () => {
    sqs?.destroy();
    await ui?.close();
  });

  async function createQueue(name: string, attributes: Record<string, string> = {}): Promise<void> {
    await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  }

  /** Dead-lettered after one receive. */
  const redrivePolicy = (deadLetterQueue: string) =>
    JSON.stringify({ deadLetterTargetArn: arn(deadLetterQueue), maxReceiveCount: 1 });

  async function send(queue: string, body: string, groupId?: string): Promise<void> {
    await sqs.send(
      new SendMessageCommand({ QueueUrl: url(queue), MessageBody: body, MessageGroupId: groupId }),
    );
  }

  async function open(hash: string): Promise<void> {
    await page.goto(`${sluice.endpoint}/console${hash}`);
  }

  test('the queue page puts send, poll, purge and redrive on the first screen, charts below', {
    timeout: 60_000,
  }, async () => {
    // A dead-letter queue in alarm is the longest first screen: the alarm and retention banners come first.
    await sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: url('orders-dlq'),
        Attributes: { MessageRetentionPeriod: '86400' },
      }),
    );
    await send('orders-dlq', 'poison');
    await pass(10);
    await open('#/queue/orders-dlq');
    await page.locator('#alarm-banner').waitFor();
    await page.locator('#retention-warning').waitFor();
    const controls = [
      '#send-form button[type=submit]',
      '#poll-form button[type=submit]',
      '#purge',
      '#redrive-form button[type=submit]',
    ];
    for (const control of controls) {
      const bottom = await bottomOf(page, control);
      assert.ok(bottom <= VIEWPORT.height, `${control} ends at ${bottom} px, below the first screen`);
    }
    const chartsTop = await topOf(page, '#charts-section');
    for (const control of controls)
      assert.ok((await bottomOf(page, control)) < chartsTop, `${control} comes before the charts`);
    await screenshot(page, 'dlq');

    await open('#/queue/orders');
    await page.locator('#send-form').waitFor();
    for (const control of controls.slice(0, 3))
      assert.ok((await bottomOf(page, control)) <= VIEWPORT.height, `${control} on the first screen`);
    await screenshot(page, 'queue');
  });

  test('the queue page shows the queue’s metrics from its history; the raw /metrics link is secondary', {
    timeout: 60_000,
  }, async () => {
    await createQueue('billing');
    // A minute of traffic, one step per 10 s sample: 12 sent, 6 received, 3 deleted.
    for (let step = 0; step < 6; step++) {
      for (const body of ['a', 'b']) await send('billing', body);
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: url('billing'), VisibilityTimeout: 600 }),
      );
      if (step % 2 === 0)
        await sqs.send(
          new DeleteMessageCommand({ QueueUrl: url('billing'), ReceiptHandle: Messages[0]?.ReceiptHandle }),
        );
      await pass(10);
    }
    await open('#/queue/billing');
    const metric = (name: string) => page.locator(`#metrics [data-metric="${name}"] .value`);
    await metric('sent').filter({ hasText: '0.20' }).waitFor();
    assert.equal(await metric('received').textContent(), '0.10');
    assert.equal(await metric('deleted').textContent(), '0.05');
    assert.equal(await metric('empty-receives').textContent(), '0.00');
    assert.equal(await metric('visible').textContent(), '6');
    assert.equal(await metric('in-flight').textContent(), '3');
    assert.equal(await metric('oldest').textContent(), '1 min');
    assert.match((await page.locator('#metrics').textContent()) ?? '', /per second over the last 60 s/);
    assert.equal(await page.locator('header a[href="/metrics"]').count(), 0, 'no header link out of the app');
    const raw = page.locator('#metrics a[href="/metrics"]');
    assert.equal(await raw.getAttribute('target'), '_blank', 'the raw text opens beside the console');
    await page.locator('#metrics').scrollIntoViewIfNeeded();
    await screenshot(page, 'metrics');
  });

  test('the chart range buttons show which range is on', { timeout: 30_000 }, async () => {
    await open('#/queue/billing');
    const group = page.getByRole('group', { name: 'Chart range' });
    const buttons = group.getByRole('button');
    assert.equal(await buttons.count(), 2);
    const look = (index: number) =>
      buttons.nth(index).evaluate((button) => {
        const style = getComputedStyle(button);
        return `${style.backgroundColor} ${style.color}`;
      });
    assert.equal(await buttons.nth(0).getAttribute('aria-pressed'), 'true');
    assert.notEqual(await look(0), await look(1), 'the pressed range looks different');
    await buttons.nth(1).click();
    await page.locator('#charts figcaption', { hasText: '24 hours' }).first().waitFor();
    assert.equal(await buttons.nth(1).getAttribute('aria-pressed'), 'true');
    const [first, second] = [await look(0), await look(1)];
    assert.notEqual(first, second);
    await buttons.nth(0).click();
    await page.locator('#charts figcaption', { hasText: 'hour' }).first().waitFor();
    assert.equal(await look(0), second, 'the pressed look follows the pressed button');
    await page.locator('#charts-section').scrollIntoViewIfNeeded();
    await screenshot(page, 'charts');
  });

  test('a fresh queue’s sparkline follows its depth sample by sample', { timeout: 60_000 }, async () => {
    await createQueue('fresh');
    // One more message per 10 s sample: a minute-old queue whose depth climbs from 1 to 6.
    for (let step = 0; step < 6; step++) {
      await send('fresh', `m${step}`);
      await pass(10);
    }
    await open('');
    const row = page.locator('tr[data-queue="fresh"]');
    const points = (await row.locator('svg polyline').getAttribute('points')) ?? '';
    const heights = new Set(points.split(' ').map((point) => point.split(',')[1]));
    assert.ok(heights.size >= 6, `the sparkline climbs through 6 depths, not ${heights.size}: ${points}`);
    assert.match((await row.locator('svg title').textContent()) ?? '', /over the last 50 s: 1 → 6/);
  });

  test('the queue list has a URL column and a delete control', { timeout: 60_000 }, async () => {
    await createQueue('scratch');
    await open('');
    const row = page.locator('tr[data-queue="fresh"]');
    await row.waitFor();
    assert.equal(await row.locator('[data-col="url"]').textContent(), url('fresh'));
    await page.getByRole('button', { name: 'Delete queue scratch' }).click();
    await page.getByRole('button', { name: 'Yes, delete scratch' }).click();
    await page.locator('#status', { hasText: 'Deleted queue scratch.' }).waitFor();
    await page.locator('tr[data-queue="scratch"]').waitFor({ state: 'detached' });
    const { QueueUrls = [] } = await sqs.send(new ListQueuesCommand({}));
    assert.ok(!QueueUrls.some((queueUrl) => queueUrl.endsWith('/scratch')), 'the queue is gone');
    // The confirmation can be declined.
    await page.getByRole('button', { name: 'Delete queue fresh' }).click();
    await page.getByRole('button', { name: 'Keep fresh' }).click();
    assert.equal(await row.count(), 1);
    await screenshot(page, 'queues');
  });

  test('a delete with an outdated receipt handle says what the server answered, and why a message stays', {
    timeout: 60_000,
  }, async () => {
    // FIFO: a handle whose visibility timeout lapsed is refused, and the message stays.
    await createQueue('jobs.fifo', { FifoQueue: 'true', ContentBasedDeduplication: 'true' });
    await send('jobs.fifo', 'job', 'g');
    await open('#/queue/jobs.fifo');
    await page.getByLabel('Visibility timeout (s)').first().fill('30');
    await page.getByRole('button', { name: 'Poll' }).click();
    await page.locator('#poll-results .message').waitFor();
    await pass(31);
    await page.locator('#poll-results .message button', { hasText: 'Delete' }).click();
    const outcome = page.locator('#poll-results .message .outcome');
    await outcome.filter({ hasText: 'Not deleted' }).waitFor();
    const said = (await outcome.textContent()) ?? '';
    assert.match(said, /InvalidParameterValue/);
    assert.match(said, /The receipt handle has expired/);
    assert.match(said, /stays in the queue/);
    assert.match(said, /FIFO/);
    await page.locator('#count-visible', { hasText: '1' }).waitFor();
    await screenshot(page, 'delete-refused');

    // Standard: the server accepts the lapsed handle; the message had meanwhile left for the DLQ.
    await createQueue('payments-dlq');
    await createQueue('payments', { RedrivePolicy: redrivePolicy('payments-dlq') });
    await send('payments', 'charge');
    await open('#/queue/payments');
    await page.getByLabel('Visibility timeout (s)').first().fill('30');
    await page.getByRole('button', { name: 'Poll' }).click();
    await page.locator('#poll-results .message').waitFor();
    await pass(31);
    // Another consumer's receive: the message has had its one receive, so it moves to the DLQ.
    const late = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url('payments') }));
    assert.equal(late.Messages?.length ?? 0, 0);
    await page.locator('#poll-results .message button', { hasText: 'Delete' }).click();
    await outcome.filter({ hasText: 'DeleteMessage succeeded' }).waitFor();
    const accepted = (await outcome.textContent()) ?? '';
    assert.match(accepted, /visibility timeout had lapsed/);
    assert.match(accepted, /dead-letter queue payments-dlq/);
    const dlq = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: url('payments-dlq'),
        AttributeNames: ['ApproximateNumberOfMessages'],
      }),
    );
    assert.equal(dlq.Attributes?.ApproximateNumberOfMessages, '1', 'the message stayed, in the DLQ');
    await screenshot(page, 'delete-lapsed');
  });

  test('the alarms page lists every alarm with its history, and silences and unsilences it', {
    timeout: 60_000,
  }, async () => {
    await pass(10);
    await open('#/alarms');
    await page.getByRole('heading', { name: 'Alarms', exact: true }).waitFor();
    const alarm = page.locator('article[data-alarm="orders-dlq"]');
    await alarm.locator('.badge', { hasText: 'ALARM' }).waitFor();
    assert.equal(await page.locator('article[data-alarm]').count(), 2, 'orders-dlq and payments-dlq');
    await alarm.locator('tr[data-event="raised"]').waitFor();
    assert.match(
      (await alarm.locator('tr[data-event="raised"]').textContent()) ?? '',
      /^2026-12-01 09:00:\d\dZ.*holds 1 message \(threshold 0\)/,
    );

    await alarm.getByRole('button', { name: 'Silence', exact: true }).click();
    await alarm.locator('.silence', { hasText: 'Silenced' }).waitFor();
    const states = async () =>
      (
        (await (await fetch(`${sluice.endpoint}/alarms`)).json()) as {
          alarms: Array<{ queue: string; silenced: boolean; history: Array<{ event: string }> }>;
        }
      ).alarms.find((state) => state.queue === 'orders-dlq');
    assert.equal((await states())?.silenced, true, 'the server has it silenced at once');
    await pass(10);
    await alarm.locator('tr[data-event="silenced"]').waitFor();
    await screenshot(page, 'alarms');

    await alarm.getByRole('button', { name: 'Unsilence', exact: true }).click();
    await alarm.getByRole('button', { name: 'Silence', exact: true }).waitFor();
    assert.equal((await states())?.silenced, false);
    await pass(10);
    await alarm.locator('tr[data-event="unsilenced"]').waitFor();
    assert.deepEqual(
      (await states())?.history.map((entry) => entry.event),
      ['raised', 'expiring', 'silenced', 'unsilenced'],
    );

    // The header links here, with the count of alarms raised; an unknown page says so.
    await page.locator('header a[href="#/alarms"]', { hasText: 'Alarms (2)' }).waitFor();
    await open('#/nowhere');
    await page.getByRole('heading', { name: 'No such page' }).waitFor();
  });

  test('counts of one are singular', { timeout: 30_000 }, async () => {
    await open('#/queue/orders-dlq');
    await page.locator('#alarm-banner', { hasText: 'Alarm: 1 message in this dead-letter queue' }).waitFor();
    await page.locator('#alarm-history summary').click();
    await page.locator('#alarm-history', { hasText: 'holds 1 message (threshold 0)' }).waitFor();
  });

  test('nothing the browser loaded failed, and the CSP was never violated', () => {
    assert.deepEqual(ui.failedLoads, []);
    assert.deepEqual(ui.cspViolations, []);
  });
});

/** A server with --strict-receipt-handles: a standard queue refuses a lapsed handle too, and the console says so. */
describe('console delete with strict receipt handles', { concurrency: false }, () => {
  let ui: ConsoleUnderTest;
  let sqs: SQSClient;

  before(async () => {
    ui = await startConsole({ strictReceiptHandles: true });
    sqs = sqsClient(ui.sluice.endpoint);
  });

  after(async () => {
    sqs?.destroy();
    await ui?.close();
  });

  test('a lapsed handle is refused, and the message stays for the next receive', {
    timeout: 60_000,
  }, async () => {
    const { page, sluice } = ui;
    await sqs.send(new CreateQueueCommand({ QueueName: 'strict' }));
    await sqs.send(
      new SendMessageCommand({ QueueUrl: `${sluice.endpoint}/000000000000/strict`, MessageBody: 'once' }),
    );
    await page.goto(`${sluice.endpoint}/console#/queue/strict`);
    await page.getByRole('button', { name: 'Poll' }).click();
    await page.locator('#poll-results .message').waitFor();
    await ui.pass(31);
    await page.locator('#poll-results .message button', { hasText: 'Delete' }).click();
    const outcome = page.locator('#poll-results .message .outcome');
    await outcome.filter({ hasText: 'Not deleted' }).waitFor();
    const said = (await outcome.textContent()) ?? '';
    assert.match(said, /ReceiptHandleIsInvalid/);
    assert.match(said, /its visibility timeout has lapsed \(strict receipt handles\)/);
    assert.match(said, /stays in the queue/);
    assert.match(said, /refuses stale handles/);
    await page.locator('#count-visible', { hasText: '1' }).waitFor();
    assert.deepEqual(ui.failedLoads, []);
  });
});
