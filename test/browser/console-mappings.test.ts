/** The queue page lists the Lambda event source mappings that consume the queue, and nothing without any. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { type ConsoleUnderTest, startConsole } from '../helpers/browser.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

describe('console: event source mappings', () => {
  let ui: ConsoleUnderTest;

  before(async () => {
    ui = await startConsole();
    const sqs = sqsClient(ui.sluice.endpoint);
    await sqs.send(new CreateQueueCommand({ QueueName: 'mapped' }));
    await sqs.send(new CreateQueueCommand({ QueueName: 'unmapped' }));
    sqs.destroy();
    await ui.sluice.eventSourceMappings.create({
      EventSourceArn: 'arn:aws:sqs:us-east-1:000000000000:mapped',
      FunctionName: 'orders-handler',
      BatchSize: 5,
      Enabled: false,
    });
  });

  after(() => ui?.close());

  test("a queue's page shows its mappings: function, state, batch size", async () => {
    const { page, sluice } = ui;
    await page.goto(`${sluice.endpoint}/console#/queue/mapped`);
    const section = page.locator('#event-source-mappings');
    await section.locator('td', { hasText: 'orders-handler' }).waitFor();
    const cells = await section.locator('tbody tr').first().locator('td').allTextContents();
    assert.deepEqual(cells.slice(0, 4), ['orders-handler', 'Disabled', '5', '0']);
    await page.goto(`${sluice.endpoint}/console#/queue/unmapped`);
    await page.locator('#send-form').waitFor();
    await page.waitForFunction(() =>
      document.querySelector('#event-source-mappings')?.hasAttribute('hidden'),
    );
    assert.deepEqual(ui.failedLoads, []);
    assert.deepEqual(ui.cspViolations, []);
  });
});
