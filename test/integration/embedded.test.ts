import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { FakeClock, type RunningSluice, startSluice } from 'sluice';
import { sqsClient } from '../helpers/sqs-client.ts';

/**
 * Sluice started in-process through the package's entry point, with an injected clock: a real SQLite
 * file and real HTTP, while time moves only when the test says so.
 */
describe('embedded server (import from "sluice")', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-embedded-'));
  const clock = new FakeClock();
  let sluice: RunningSluice;
  let sqs: SQSClient;
  before(async () => {
    sluice = await startSluice({ port: 0, dataDir, clock, logLevel: 'silent' });
    sqs = sqsClient(sluice.endpoint);
  });
  after(async () => {
    sqs?.destroy();
    await sluice?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('redelivers a FIFO message, ahead of its group, when the injected clock passes its visibility timeout', async () => {
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: 'embedded.fifo',
        Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true', VisibilityTimeout: '30' },
      }),
    );
    for (const body of ['first', 'second'])
      await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: body, MessageGroupId: 'g' }));
    const receive = () =>
      sqs.send(
        new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 1, MessageSystemAttributeNames: ['All'] }),
      );
    assert.equal((await receive()).Messages?.[0]?.Body, 'first');
    await clock.advance(29_999);
    assert.equal((await receive()).Messages, undefined, 'the group is blocked until the timeout runs out');
    await clock.advance(1);
    const again = (await receive()).Messages?.[0];
    assert.equal(again?.Body, 'first');
    assert.equal(again?.Attributes?.ApproximateReceiveCount, '2');
  });
});
