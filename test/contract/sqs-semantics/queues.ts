import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ContractService, context } from '../harness.ts';

/**
 * Queues: creation and its validation, attributes, listing, resolving URLs, name reuse, tags and
 * permissions. Part of the SQS semantics suite (../sqs-semantics.ts).
 */
export function queuesSuite(h: ContractService): void {
  const { newQueue, send, counts, rejects } = h;

  describe('queues', () => {
    it('creates idempotently with equal attributes and refuses different ones', async () => {
      const url = await newQueue({ VisibilityTimeout: '60' });
      const name = url.split('/').at(-1)!;
      const again = await h.service.actions.CreateQueue(
        { QueueName: name, Attributes: { VisibilityTimeout: '60' } },
        context,
      );
      assert.equal(again.QueueUrl, url);
      await rejects(
        h.service.actions.CreateQueue({ QueueName: name, Attributes: { VisibilityTimeout: '61' } }, context),
        'QueueNameExists',
      );
      assert.equal(url, `http://127.0.0.1:9324/000000000000/${name}`);
    });

    it('validates names and attribute values', async () => {
      await rejects(
        h.service.actions.CreateQueue({ QueueName: 'bad name' }, context),
        'InvalidParameterValue',
      );
      await rejects(
        h.service.actions.CreateQueue({ QueueName: 'x'.repeat(81) }, context),
        'InvalidParameterValue',
      );
      await rejects(
        h.service.actions.CreateQueue(
          { QueueName: 'ok', Attributes: { VisibilityTimeout: '43201' } },
          context,
        ),
        'InvalidAttributeValue',
      );
      await rejects(
        h.service.actions.CreateQueue({ QueueName: 'ok', Attributes: { NoSuchThing: '1' } }, context),
        'InvalidAttributeName',
      );
      await rejects(
        h.service.actions.CreateQueue(
          { QueueName: 'ok', Attributes: { ContentBasedDeduplication: 'true' } },
          context,
        ),
        'InvalidAttributeName',
      );
      await rejects(h.service.actions.CreateQueue({}, context), 'MissingParameter');
    });

    it('reports every attribute with SQS defaults and computed values', async () => {
      const url = await newQueue();
      const { Attributes } = (await h.service.actions.GetQueueAttributes({
        QueueUrl: url,
        AttributeNames: ['All'],
      })) as {
        Attributes: Record<string, string>;
      };
      assert.equal(Attributes.VisibilityTimeout, '30');
      assert.equal(Attributes.MaximumMessageSize, '1048576');
      assert.equal(Attributes.MessageRetentionPeriod, '345600');
      assert.equal(Attributes.DelaySeconds, '0');
      assert.equal(Attributes.ReceiveMessageWaitTimeSeconds, '0');
      assert.equal(Attributes.QueueArn, `arn:aws:sqs:us-east-1:000000000000:${url.split('/').at(-1)}`);
      assert.equal(Attributes.CreatedTimestamp, String(Math.floor(h.clock.now() / 1000)));
      assert.equal(Attributes.ApproximateNumberOfMessages, '0');
      assert.equal(Attributes.FifoQueue, undefined);
      const one = (await h.service.actions.GetQueueAttributes({
        QueueUrl: url,
        AttributeNames: ['VisibilityTimeout'],
      })) as {
        Attributes: Record<string, string>;
      };
      assert.deepEqual(one.Attributes, { VisibilityTimeout: '30' });
      await rejects(
        h.service.actions.GetQueueAttributes({ QueueUrl: url, AttributeNames: ['Nope'] }),
        'InvalidAttributeName',
      );
    });

    it('sets attributes and moves LastModifiedTimestamp', async () => {
      const url = await newQueue();
      await h.clock.advance(5_000);
      await h.service.actions.SetQueueAttributes({
        QueueUrl: url,
        Attributes: { VisibilityTimeout: '0045' },
      });
      const { Attributes } = (await h.service.actions.GetQueueAttributes({
        QueueUrl: url,
        AttributeNames: ['All'],
      })) as {
        Attributes: Record<string, string>;
      };
      assert.equal(Attributes.VisibilityTimeout, '45');
      assert.equal(Number(Attributes.LastModifiedTimestamp) - Number(Attributes.CreatedTimestamp), 5);
    });

    it('lists by prefix with pagination only when MaxResults is given', async () => {
      for (const name of ['list-a', 'list-b', 'list-c'])
        await h.service.actions.CreateQueue({ QueueName: name }, context);
      const all = await h.service.actions.ListQueues({ QueueNamePrefix: 'list-' }, context);
      assert.equal(all.QueueUrls?.length, 3);
      assert.equal(all.NextToken, undefined);
      const first = await h.service.actions.ListQueues({ QueueNamePrefix: 'list-', MaxResults: 2 }, context);
      assert.deepEqual(
        first.QueueUrls?.map((url) => url.split('/').at(-1)),
        ['list-a', 'list-b'],
      );
      assert.ok(first.NextToken);
      const second = await h.service.actions.ListQueues(
        { QueueNamePrefix: 'list-', MaxResults: 2, NextToken: first.NextToken },
        context,
      );
      assert.deepEqual(
        second.QueueUrls?.map((url) => url.split('/').at(-1)),
        ['list-c'],
      );
      assert.equal(second.NextToken, undefined);
      await rejects(h.service.actions.ListQueues({ NextToken: 'garbage' }, context), 'InvalidParameterValue');
    });

    it('resolves a queue by any host and by path, and refuses other accounts', async () => {
      const url = await newQueue();
      const name = url.split('/').at(-1)!;
      await send(`http://elsewhere:1234/000000000000/${name}`, 'x');
      await send(`/000000000000/${name}`, 'y');
      await rejects(send(`http://h/111111111111/${name}`, 'z'), 'QueueDoesNotExist');
      await rejects(send('http://h/000000000000/missing', 'z'), 'QueueDoesNotExist');
      const { QueueUrl } = await h.service.actions.GetQueueUrl({ QueueName: name }, context);
      assert.equal(QueueUrl, url);
      await rejects(h.service.actions.GetQueueUrl({ QueueName: 'missing' }, context), 'QueueDoesNotExist');
    });

    it('refuses to reuse a deleted name for 60 seconds', async () => {
      const url = await newQueue();
      const name = url.split('/').at(-1)!;
      await send(url, 'gone with the queue');
      await h.service.actions.DeleteQueue({ QueueUrl: url });
      await rejects(send(url, 'x'), 'QueueDoesNotExist');
      await rejects(h.service.actions.CreateQueue({ QueueName: name }, context), 'QueueDeletedRecently');
      await h.clock.advance(60_000);
      await h.service.actions.CreateQueue({ QueueName: name }, context);
      assert.equal((await counts(url)).visible, 0);
    });

    it('tags, untags and lists tags', async () => {
      const url = await newQueue();
      await h.service.actions.TagQueue({ QueueUrl: url, Tags: { team: 'a', env: 'test' } });
      await h.service.actions.UntagQueue({ QueueUrl: url, TagKeys: ['env'] });
      assert.deepEqual(await h.service.actions.ListQueueTags({ QueueUrl: url }), { Tags: { team: 'a' } });
      const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
      await rejects(h.service.actions.TagQueue({ QueueUrl: url, Tags: many }), 'InvalidParameterValue');
    });

    it('keeps permissions as the queue policy', async () => {
      const url = await newQueue();
      await h.service.actions.AddPermission({
        QueueUrl: url,
        Label: 'p1',
        AWSAccountIds: ['123456789012'],
        Actions: ['SendMessage'],
      });
      await rejects(
        h.service.actions.AddPermission({
          QueueUrl: url,
          Label: 'p1',
          AWSAccountIds: ['123456789012'],
          Actions: ['SendMessage'],
        }),
        'InvalidParameterValue',
      );
      const { Attributes } = (await h.service.actions.GetQueueAttributes({
        QueueUrl: url,
        AttributeNames: ['Policy'],
      })) as {
        Attributes: Record<string, string>;
      };
      const policy = JSON.parse(Attributes.Policy!) as {
        Statement: Array<{ Sid: string; Action: string }>;
      };
      assert.deepEqual(policy.Statement[0]?.Action, 'SQS:SendMessage');
      await h.service.actions.RemovePermission({ QueueUrl: url, Label: 'p1' });
      await rejects(
        h.service.actions.RemovePermission({ QueueUrl: url, Label: 'p1' }),
        'InvalidParameterValue',
      );
      const after = await h.service.actions.GetQueueAttributes({
        QueueUrl: url,
        AttributeNames: ['Policy'],
      });
      assert.deepEqual(after, {});
    });
  });
}
