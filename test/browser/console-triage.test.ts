import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { Page } from 'playwright-core';
import type { RunningSluice } from 'sluice';
import { type ConsoleUnderTest, screenshot, startConsole } from '../helpers/browser.ts';
import { deadLetteredOrders } from '../helpers/dead-lettered.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * DLQ triage in the console, in headless Chromium against a really started server: the Messages page shows a
 * DLQ's messages with their origin and failure reason without receiving them, replays the selection and says
 * which message a consumer held, deletes after a confirmation, and the Audit page lists both.
 */
describe('console: DLQ triage', { concurrency: false }, () => {
  let ui: ConsoleUnderTest;
  let sluice: RunningSluice;
  let page: Page;
  let sqs: SQSClient;
  const url = (name: string) => `${sluice.endpoint}/000000000000/${name}`;

  before(async () => {
    ui = await startConsole();
    ({ sluice, page } = ui);
    sqs = sqsClient(sluice.endpoint);
    await deadLetteredOrders(
      sqs,
      [1, 2, 3].map((order) => ({ MessageBody: `{"order":${order}}` })),
    );
  });

  after(async () => {
    sqs?.destroy();
    await ui?.close();
  });

  const rows = () => page.locator('#message-list tbody tr');

  test('lists a DLQ’s messages with origin and reason, and replays the selection, skipping the one held', {
    timeout: 60_000,
  }, async () => {
    await page.goto(`${sluice.endpoint}/console#/queue/orders-dlq`);
    await page.locator('#browse-messages').click();
    await page.locator('#message-list table').waitFor();
    assert.equal(await rows().count(), 3);
    const first = rows().first();
    assert.match((await first.textContent()) ?? '', /orders/);
    assert.match(
      (await first.textContent()) ?? '',
      /received 1 time without being deleted \(maxReceiveCount 1\)/,
    );

    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url('orders-dlq'),
        MaxNumberOfMessages: 1,
        VisibilityTimeout: 300,
      }),
    );
    const held = Messages[0]!.MessageId!;
    await page.locator('#search-form button[type=submit]').click();
    await page.locator(`tr[data-message="${held}"][data-state="inFlight"]`).waitFor();
    for (const box of await page.locator('#message-list tbody input[type=checkbox]').all()) await box.check();
    await page.locator('#replay-selected').click();
    await page.locator('#status', { hasText: 'Replayed 2 messages.' }).waitFor();
    assert.match(
      (await page.locator('#status').textContent()) ?? '',
      new RegExp(`Skipped 1: ${held}: in flight`),
    );
    assert.equal(await rows().count(), 1, 'the held message is still there');
    // The picture of the guide: the outcome in the status area, the held message, the pager with nowhere to go.
    await screenshot(page, 'messages');
  });

  test('searches, deletes after confirming, and lists both actions on the Audit page', {
    timeout: 60_000,
  }, async () => {
    await sqs.send(
      new SendMessageCommand({ QueueUrl: url('orders-dlq'), MessageBody: 'sent straight here' }),
    );
    await page.locator('#search-text').fill('straight');
    await page.locator('#search-form button[type=submit]').click();
    await page.locator('#message-list tbody tr', { hasText: 'sent straight here' }).waitFor();
    assert.equal(await rows().count(), 1);
    await page.locator('#message-list tbody input[type=checkbox]').check();
    await page.locator('#delete-selected').click();
    await page.getByRole('button', { name: 'Yes, delete the selected messages' }).click();
    await page.locator('#status', { hasText: 'Deleted 1 message.' }).waitFor();
    await page.locator('#message-list', { hasText: 'No messages match.' }).waitFor();

    // A purge from the console is audited too, with how many messages it took.
    await page.goto(`${sluice.endpoint}/console#/queue/orders-dlq`);
    await page.locator('#purge').click();
    await page.getByRole('button', { name: 'Yes, purge' }).click();
    await page.locator('#status', { hasText: 'Purged orders-dlq.' }).waitFor();

    await page.locator('header nav a', { hasText: 'Audit' }).click();
    await page.locator('#audit tbody tr').first().waitFor();
    const actions = await page
      .locator('#audit tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) => [
          tr.getAttribute('data-action'),
          tr.children[2]?.textContent,
          tr.children[6]?.textContent,
        ]),
      );
    // Without credentials no request is authenticated, the console's included.
    assert.deepEqual(actions, [
      ['purge', 'unauthenticated', '1'],
      ['delete', 'unauthenticated', '1'],
      ['replay', 'unauthenticated', '2'],
    ]);
    await screenshot(page, 'audit');
    assert.deepEqual(ui.cspViolations, []);
    assert.deepEqual(ui.failedLoads, []);
  });

  test('replays one message with an edited body and attributes, and refuses attributes that are not JSON', {
    timeout: 60_000,
  }, async () => {
    await sqs.send(new CreateQueueCommand({ QueueName: 'orders-fixed' }));
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: url('orders-dlq'),
        MessageBody: '{"order":"4x"}',
        MessageAttributes: { kind: { DataType: 'String', StringValue: 'broken' } },
      }),
    );
    await page.goto(`${sluice.endpoint}/console#/messages/orders-dlq`);
    const row = page.locator('#message-list tbody tr', { hasText: '4x' });
    await row.locator('summary').click();
    await row.locator('.edit-attributes').fill('{"kind": ');
    await row.getByRole('button', { name: 'Replay this message' }).click();
    await page.locator('#status', { hasText: 'The message attributes must be JSON' }).waitFor();

    await row.locator('.edit-body').fill('{"order":4}');
    await row
      .locator('.edit-attributes')
      .fill(
        '{"kind": {"DataType": "String", "StringValue": "fixed"}, "by": {"DataType": "String", "StringValue": "on-call"}}',
      );
    await page.locator('#replay-destination').selectOption('orders-fixed');
    await row.getByRole('button', { name: 'Replay this message' }).click();
    await page.locator('#status', { hasText: 'Replayed 1 message.' }).waitFor();

    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: url('orders-fixed'), MessageAttributeNames: ['All'] }),
    );
    assert.equal(Messages.length, 1);
    assert.equal(Messages[0]?.Body, '{"order":4}');
    assert.deepEqual(
      Object.fromEntries(
        Object.entries(Messages[0]?.MessageAttributes ?? {}).map(([key, value]) => [key, value.StringValue]),
      ),
      { kind: 'fixed', by: 'on-call' },
    );

    // The Audit page says what the replay changed, as sizes and digests, and the new message's id.
    await page.locator('header nav a', { hasText: 'Audit' }).click();
    const details = page.locator('#audit tbody tr').first().locator('td').last();
    await details.waitFor();
    const shown = (await details.textContent()) ?? '';
    assert.match(shown, /new body: 11 bytes, sha256 [0-9a-f]{12}…/);
    assert.match(shown, /new attributes: 30 bytes, sha256 [0-9a-f]{12}…/);
    assert.match(shown, new RegExp(`new ids: ${Messages[0]!.MessageId}`));
  });

  test('shows the control characters of an entry as escapes, so one entry cannot pass for two', {
    timeout: 60_000,
  }, async () => {
    const forged = 'id\u001b[2J\u202e\n14 2026-12-07 00:00:00 AKIDADMIN console purge secret';
    const deleted = await fetch(`${sluice.endpoint}/api/messages/delete`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: sluice.endpoint },
      body: JSON.stringify({ queue: 'orders-dlq', ids: [forged] }),
    });
    assert.equal(deleted.status, 200);
    await page.goto(`${sluice.endpoint}/console#/alarms`);
    await page.locator('header nav a', { hasText: 'Audit' }).click();
    const first = page.locator('#audit tbody tr').first();
    await first.waitFor();
    assert.equal(
      await first.locator('td').last().textContent(),
      'ids id\\u001b[2J\\u202e\\u000a14 2026-12-07 00:00:00 AKIDADMIN console purge secret',
    );
    const entries = (await (await fetch(`${sluice.endpoint}/api/audit`)).json()) as { entries: unknown[] };
    assert.equal(await page.locator('#audit tbody tr').count(), entries.entries.length);
  });
});
