import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from 'sluice-client/clock';
import type { NotificationSigner } from '../../packages/server/src/core/sns/envelope.ts';
import type { SnsService } from '../../packages/server/src/core/sns/sns-service.ts';
import type { SqsService } from '../../packages/server/src/core/sqs-service.ts';
import type { SqliteStore } from '../../packages/server/src/store/sqlite/sqlite-store.ts';
import { snsOnMemoryStore } from '../helpers/sns-services.ts';

/**
 * Signing runs off the event loop, so a PublishBatch's signatures finish in any order. This signer finishes
 * them last-asked first, and time passes while it works, as it does on a loaded server: a batch's deliveries
 * must still reach each queue in the batch's order.
 */
class ReversingSigner implements NotificationSigner {
  private pending: Array<() => void> = [];
  constructor(
    private readonly clock: FakeClock,
    private readonly batch: number,
  ) {}
  sign(text: string): Promise<string> {
    return new Promise((resolve) => {
      this.pending.push(() => resolve(Buffer.from(text).toString('base64').slice(0, 16)));
      if (this.pending.length === this.batch) void this.finishInReverse();
    });
  }
  /** One signature at a time, each one's continuation run before the next, a millisecond apart. */
  private async finishInReverse(): Promise<void> {
    const finishing = this.pending.reverse();
    this.pending = [];
    for (const finish of finishing) {
      this.clock.advance(1);
      finish();
      await new Promise(setImmediate);
    }
  }
  async certificateUrl(baseUrl: string): Promise<string> {
    return `${baseUrl}/SimpleNotificationService-test.pem`;
  }
}

describe('PublishBatch keeps its entries in order', () => {
  const context = { baseUrl: 'http://127.0.0.1:9324', senderId: 'AKIDTEST' };
  const clock = new FakeClock();
  let store: SqliteStore;
  let sqs: SqsService;
  let sns: SnsService;
  before(() => {
    ({ store, sqs, sns } = snsOnMemoryStore({ clock, signer: new ReversingSigner(clock, 10) }));
  });
  after(() => store.close());

  it('delivers a batch signed out of order into a standard queue in entry order', async () => {
    const { QueueUrl } = await sqs.actions.CreateQueue({ QueueName: 'ordered' }, context);
    const { TopicArn } = await sns.CreateTopic({ Name: 'ordered' });
    await sns.Subscribe({ TopicArn, Protocol: 'sqs', Endpoint: sqs.queues.queueArn('ordered') }, context);
    const entries = Array.from({ length: 10 }, (_, index) => ({ Id: `e${index}`, Message: `m${index}` }));
    const { Failed } = await sns.PublishBatch({ TopicArn, PublishBatchRequestEntries: entries }, context);
    assert.deepEqual(Failed, []);
    const { Messages = [] } = await sqs.actions.ReceiveMessage(
      { QueueUrl, MaxNumberOfMessages: 10 },
      context,
    );
    const received = Messages.map((message) => JSON.parse(message.Body!).Message);
    assert.deepEqual(
      received,
      entries.map((entry) => entry.Message),
    );
  });
});
