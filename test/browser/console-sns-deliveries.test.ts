/**
 * The console's topics page operating HTTP/HTTPS subscriptions, in headless Chromium against a really started
 * server on a fake clock and a real node receiver that answers 500: each subscription's state (pending
 * confirmation, confirmed), its failing deliveries with the last error and the next attempt, Retry now (sent
 * again at once) and Drop (confirmed first, gone, audited).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { CreateTopicCommand, PublishCommand, SubscribeCommand } from '@aws-sdk/client-sns';
import { type ConsoleUnderTest, startConsole } from '../helpers/browser.ts';
import { eventually } from '../helpers/client-toolkit.ts';
import { snsClient } from '../helpers/sns-client.ts';

describe('console: operating HTTP subscriptions', { concurrency: false }, () => {
  let ui: ConsoleUnderTest;
  let receiver: ReturnType<typeof createServer>;
  const notified: string[] = [];
  let first: string;
  let second: string;

  before(async () => {
    // Confirms through SubscribeURL unless the path is /never; every notification fails with a 500.
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', async () => {
        const type = request.headers['x-amz-sns-message-type'];
        if (type === 'SubscriptionConfirmation' && request.url !== '/never')
          await fetch(
            (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { SubscribeURL: string }).SubscribeURL,
          );
        if (type === 'Notification') notified.push(String(request.headers['x-amz-sns-message-id']));
        response.writeHead(type === 'Notification' ? 500 : 200);
        response.end('secret internal error text');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    ui = await startConsole();
    const sns = snsClient(ui.sluice.endpoint);
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'hooks' }));
    await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'http', Endpoint: `${url}/never` }));
    await sns.send(
      new SubscribeCommand({
        TopicArn,
        Protocol: 'http',
        Endpoint: `${url}/hook`,
        ReturnSubscriptionArn: true,
      }),
    );
    await eventually(async () => {
      const answer = (await (
        await fetch(`${ui.sluice.endpoint}/api/sns/http-subscriptions?topic=hooks`)
      ).json()) as { subscriptions: Array<{ state: string }> };
      return answer.subscriptions.some((s) => s.state === 'Confirmed');
    }, 'the /hook subscription confirmed');
    ({ MessageId: first } = (await sns.send(new PublishCommand({ TopicArn, Message: 'one' }))) as {
      MessageId: string;
    });
    ({ MessageId: second } = (await sns.send(new PublishCommand({ TopicArn, Message: 'two' }))) as {
      MessageId: string;
    });
    sns.destroy();
    await ui.clock.advance(0);
    await eventually(() => notified.length >= 2, 'both first attempts', 30_000);
  });

  after(async () => {
    await ui?.close();
    await new Promise<void>((resolve) => receiver?.close(() => resolve()));
  });

  test('shows each HTTP subscription’s state and failing deliveries; Retry now sends again, Drop removes one', async () => {
    const { page, sluice } = ui;
    await page.goto(`${sluice.endpoint}/console#/topics`);
    const topic = page.locator('section[data-topic="hooks"]');
    const confirmed = topic.locator('.http-subscription', { hasText: '/hook' });
    await confirmed.locator('tr[data-delivery]').nth(1).waitFor();
    assert.equal(
      await topic.locator('.http-subscription', { hasText: '/never' }).locator('[data-state]').textContent(),
      'pending confirmation',
    );
    assert.equal(await confirmed.locator('[data-state]').textContent(), 'confirmed');
    assert.match((await confirmed.textContent()) ?? '', /0 pending, 2 failing/);
    const row = (id: string) => confirmed.locator(`tr[data-message-id="${id}"]`);
    const cells = await row(first)
      .locator('td')
      .evaluateAll((tds) => tds.map((td) => td.textContent?.trim()));
    assert.deepEqual(cells.slice(0, 4), [first, '1', 'HTTP 500', '2026-12-01 09:00:20 UTC']);
    assert.doesNotMatch((await page.content()) ?? '', /secret internal error text/);

    // The click only starts the console's request: the clock is moved once the server has taken the retry,
    // or the worker's wake-up may come before the delivery is due again (as it did in CI under load).
    await Promise.all([
      page.waitForResponse(
        (response) => response.url().endsWith('/api/sns/deliveries/retry') && response.status() === 200,
      ),
      row(first).locator('[data-action="retry"]').click(),
    ]);
    await ui.clock.advance(0);
    await eventually(() => notified.filter((id) => id === first).length === 2, 'the retried attempt', 30_000);

    await row(second).locator('[data-action="drop"]').click();
    await row(second)
      .getByRole('button', { name: `Drop the delivery of ${second}` })
      .click();
    await row(second).waitFor({ state: 'detached' });
    await page.getByText(`Delivery of ${second} dropped.`).waitFor();
    await page.reload();
    await row(first).locator('td').nth(1).filter({ hasText: '2' }).waitFor();
    assert.equal(await row(second).count(), 0);
    const audit = (await (await fetch(`${sluice.endpoint}/api/audit`)).json()) as {
      entries: Array<{ action: string; source: string; via: string }>;
    };
    assert.deepEqual(
      audit.entries.filter((e) => e.action === 'drop-sns-delivery').map((e) => e.source),
      ['hooks'],
    );
  });
});
