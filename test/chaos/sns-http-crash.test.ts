import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import {
  CreateTopicCommand,
  ListSubscriptionsByTopicCommand,
  PublishCommand,
  SubscribeCommand,
} from '@aws-sdk/client-sns';
import { eventually } from '../helpers/client-toolkit.ts';
import { NEEDS_OWN_SERVER, type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { snsClient } from '../helpers/sns-client.ts';

const KILLS = 5;
/** Publishes acknowledged in each round before its kill, at the least. */
const PER_ROUND = 21;

/**
 * Kill -9 while publishing to a topic with a confirmed HTTP subscriber whose answers take a little while (so
 * deliveries are in flight at the kill): after the last restart, and once the dead processes' claims lapse on
 * the test clock, every publish that was acknowledged has reached the subscriber at least once.
 */
test('SNS HTTP crash audit: kill -9 during deliveries loses no acknowledged publish', {
  skip: NEEDS_OWN_SERVER,
  timeout: 240_000,
}, async () => {
  const received = new Set<string>();
  let posts = 0;
  const receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, string>;
      if (message.Type === 'SubscriptionConfirmation') await fetch(message.SubscribeURL!);
      // An answer that takes a while: the kill finds deliveries sent and not yet answered.
      setTimeout(() => {
        if (message.Type === 'Notification') {
          received.add(message.MessageId!);
          posts++;
        }
        response.end('ok');
      }, 15);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/audit`;

  const acknowledged: string[] = [];
  let server: RunningServer | undefined = await startServer({ args: ['--test-clock'] });
  const dataDir = server.dataDir;
  try {
    const first = snsClient(server.endpoint);
    const { TopicArn } = await first.send(new CreateTopicCommand({ Name: 'audit' }));
    await first.send(new SubscribeCommand({ TopicArn, Protocol: 'http', Endpoint: hook }));
    first.destroy();
    for (let round = 0; round <= KILLS; round++) {
      const sns = snsClient(server.endpoint);
      // The claims of the processes killed before lapse 60 s after they were made, on this process's clock.
      await fetch(`${server.endpoint}/_sluice/clock/advance`, {
        method: 'POST',
        body: JSON.stringify({ seconds: 61 * (round + 1) }),
      });
      if (round === 0) {
        // Published only once the subscription is confirmed (the receiver's GET of SubscribeURL).
        await eventually(
          async () => {
            const listed = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn }));
            return listed.Subscriptions?.[0]?.SubscriptionArn !== 'PendingConfirmation';
          },
          'the subscription confirmed',
          30_000,
        );
      }
      if (round === KILLS) {
        sns.destroy();
        break;
      }
      let published = 0;
      const publisher = async () => {
        for (;;) {
          try {
            const answer = await sns.send(
              new PublishCommand({ TopicArn, Message: `m-${round}-${acknowledged.length}` }),
            );
            acknowledged.push(answer.MessageId!);
            published++;
          } catch {
            return; // the kill
          }
        }
      };
      const publishing = Promise.all([publisher(), publisher(), publisher()]);
      // The kill comes at a random moment once the round has published enough, however slow the machine.
      const until = Date.now() + 400 + Math.random() * 800;
      await eventually(() => Date.now() >= until && published >= PER_ROUND, 'the round published', 60_000);
      await server.kill();
      await publishing;
      sns.destroy();
      server = await startServer({ dataDir, args: ['--test-clock'] });
    }
    await eventually(
      () => acknowledged.every((id) => received.has(id)),
      'every acknowledged publish delivered',
      120_000,
    );
    const lost = acknowledged.filter((id) => !received.has(id)).length;
    console.log(
      `SNS HTTP crash audit: ${KILLS} kills, ${acknowledged.length} publishes acknowledged, ${posts} deliveries received (${received.size} distinct), lost ${lost}`,
    );
    assert.ok(acknowledged.length >= KILLS * PER_ROUND, `only ${acknowledged.length} publishes acknowledged`);
    assert.equal(lost, 0);
  } finally {
    await server?.stop();
    removeDataDir(dataDir);
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
});
