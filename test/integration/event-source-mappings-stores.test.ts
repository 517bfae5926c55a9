/**
 * Event source mappings kept by both stores: across a restart of a SQLite server, forgotten by test mode's
 * reset, and on PostgreSQL shared by two nodes, of which only the one running the cluster jobs polls.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  CreateEventSourceMappingCommand,
  GetEventSourceMappingCommand,
  LambdaClient,
  ListEventSourceMappingsCommand,
} from '@aws-sdk/client-lambda';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import { advanceClock, reset } from 'sluice-client/testing';
import { freshDatabase } from '../../tools/postgres.ts';
import { eventually } from '../helpers/client-toolkit.ts';
import { type FunctionServer, startFunctionServer } from '../helpers/function-server.ts';
import { type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

const REGION = 'us-east-1';
const ACCOUNT = '000000000000';

let fn: FunctionServer;
before(async () => {
  fn = await startFunctionServer();
});
after(() => fn?.close());

const lambdaClient = (endpoint: string) =>
  new LambdaClient({
    endpoint,
    region: REGION,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });

async function makeQueue(endpoint: string, name: string) {
  const sqs = sqsClient(endpoint);
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name }));
  sqs.destroy();
  return { url: QueueUrl!, arn: `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}` };
}

async function send(endpoint: string, url: string, body: string) {
  const sqs = sqsClient(endpoint);
  await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));
  sqs.destroy();
}

async function isEmpty(endpoint: string, url: string) {
  const sqs = sqsClient(endpoint);
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  sqs.destroy();
  return (
    Attributes!.ApproximateNumberOfMessages === '0' &&
    Attributes!.ApproximateNumberOfMessagesNotVisible === '0'
  );
}

const invokedWith = (functionName: string, body: string) =>
  fn.invocations.some(
    (invocation) =>
      invocation.functionName === functionName &&
      invocation.event.Records.some((record) => record.body === body),
  );

describe('event source mappings on SQLite', () => {
  it('keeps a mapping across a restart, and polls with it again', async () => {
    const first = await startServer({ args: ['--lambda-endpoint', fn.endpoint] });
    let second: RunningServer | undefined;
    try {
      const q = await makeQueue(first.endpoint, 'kept');
      const lambda = lambdaClient(first.endpoint);
      const { UUID } = await lambda.send(
        new CreateEventSourceMappingCommand({ EventSourceArn: q.arn, FunctionName: 'kept-fn', BatchSize: 3 }),
      );
      lambda.destroy();
      await first.stop();
      second = await startServer({ dataDir: first.dataDir, args: ['--lambda-endpoint', fn.endpoint] });
      const again = lambdaClient(second.endpoint);
      const mapping = await again.send(new GetEventSourceMappingCommand({ UUID }));
      again.destroy();
      assert.equal(mapping.BatchSize, 3);
      assert.equal(mapping.State, 'Enabled');
      await send(second.endpoint, q.url, 'after-restart');
      await eventually(
        () => invokedWith('kept-fn', 'after-restart'),
        'the invocation after the restart',
        30_000,
      );
      await eventually(() => isEmpty(second!.endpoint, q.url), 'the record deleted');
    } finally {
      await second?.stop();
      removeDataDir(first.dataDir);
    }
  });

  it("makes the config file's mappings at start, once", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-esm-config-'));
    const configFile = join(dir, 'sluice.json');
    const mapping = {
      EventSourceArn: `arn:aws:sqs:${REGION}:${ACCOUNT}:configured`,
      FunctionName: 'config-fn',
      BatchSize: 2,
    };
    writeFileSync(
      configFile,
      JSON.stringify({
        queues: [{ name: 'configured' }],
        lambda: { endpoint: fn.endpoint, eventSourceMappings: [mapping] },
      }),
    );
    const first = await startServer({ args: ['--config', configFile] });
    let second: RunningServer | undefined;
    try {
      await send(first.endpoint, `${first.endpoint}/${ACCOUNT}/configured`, 'configured-1');
      await eventually(
        () => invokedWith('config-fn', 'configured-1'),
        'the configured mapping invoking',
        30_000,
      );
      await first.stop();
      writeFileSync(
        configFile,
        JSON.stringify({
          queues: [{ name: 'configured' }],
          lambda: { endpoint: fn.endpoint, eventSourceMappings: [{ ...mapping, BatchSize: 5 }] },
        }),
      );
      second = await startServer({ dataDir: first.dataDir, args: ['--config', configFile] });
      const lambda = lambdaClient(second.endpoint);
      const { EventSourceMappings } = await lambda.send(new ListEventSourceMappingsCommand({}));
      lambda.destroy();
      assert.deepEqual(
        EventSourceMappings?.map((m) => [m.FunctionArn, m.BatchSize]),
        [[`arn:aws:lambda:${REGION}:${ACCOUNT}:function:config-fn`, 5]],
      );
    } finally {
      await second?.stop();
      removeDataDir(first.dataDir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("invokes each function at its own endpoint from the config file's lambda.functions, others at the default", async () => {
    const other = await startFunctionServer();
    const dir = mkdtempSync(join(tmpdir(), 'sluice-esm-functions-'));
    const configFile = join(dir, 'sluice.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        queues: [{ name: 'to-default' }, { name: 'to-other' }],
        lambda: {
          endpoint: fn.endpoint,
          functions: { 'elsewhere-fn': other.endpoint },
          eventSourceMappings: [
            { EventSourceArn: `arn:aws:sqs:${REGION}:${ACCOUNT}:to-default`, FunctionName: 'default-fn' },
            { EventSourceArn: `arn:aws:sqs:${REGION}:${ACCOUNT}:to-other`, FunctionName: 'elsewhere-fn' },
          ],
        },
      }),
    );
    const server = await startServer({ args: ['--config', configFile] });
    try {
      await send(server.endpoint, `${server.endpoint}/${ACCOUNT}/to-other`, 'for-elsewhere');
      await send(server.endpoint, `${server.endpoint}/${ACCOUNT}/to-default`, 'for-default');
      await eventually(
        () =>
          other.invocations.some((invocation) => invocation.functionName === 'elsewhere-fn') &&
          invokedWith('default-fn', 'for-default'),
        'both functions invoked',
        30_000,
      );
      assert.deepEqual(
        other.invocations.map((invocation) => invocation.event.Records.map((record) => record.body)),
        [['for-elsewhere']],
      );
      assert.ok(!fn.invocations.some((invocation) => invocation.functionName === 'elsewhere-fn'));
      await eventually(
        async () =>
          (await isEmpty(server.endpoint, `${server.endpoint}/${ACCOUNT}/to-other`)) &&
          (await isEmpty(server.endpoint, `${server.endpoint}/${ACCOUNT}/to-default`)),
        'both records deleted',
      );
    } finally {
      await server.stop();
      removeDataDir(server.dataDir);
      await other.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("forgets every mapping at test mode's reset", async () => {
    const server = await startServer({ args: ['--test-clock', '--lambda-endpoint', fn.endpoint] });
    try {
      const q = await makeQueue(server.endpoint, 'reset');
      const lambda = lambdaClient(server.endpoint);
      await lambda.send(
        new CreateEventSourceMappingCommand({ EventSourceArn: q.arn, FunctionName: 'reset-fn' }),
      );
      await reset(server.endpoint);
      const listed = await lambda.send(new ListEventSourceMappingsCommand({}));
      lambda.destroy();
      assert.deepEqual(listed.EventSourceMappings, []);
    } finally {
      await server.stop();
      removeDataDir(server.dataDir);
    }
  });
});

describe('event source mappings on PostgreSQL', () => {
  it('are shared by the nodes; the node running the cluster jobs polls, and another takes over when it stops', async () => {
    const database = await freshDatabase('sluice_esm');
    const nodes: RunningServer[] = [];
    try {
      const args = ['--store', database.url, '--lambda-endpoint', fn.endpoint];
      nodes.push(await startServer({ args }));
      nodes.push(await startServer({ args }));
      const [a, b] = nodes as [RunningServer, RunningServer];
      const q = await makeQueue(a.endpoint, 'shared');
      const onA = lambdaClient(a.endpoint);
      const { UUID } = await onA.send(
        new CreateEventSourceMappingCommand({ EventSourceArn: q.arn, FunctionName: 'pg-fn' }),
      );
      onA.destroy();
      const onB = lambdaClient(b.endpoint);
      assert.equal(
        (await onB.send(new GetEventSourceMappingCommand({ UUID }))).FunctionArn,
        `arn:aws:lambda:${REGION}:${ACCOUNT}:function:pg-fn`,
      );
      onB.destroy();
      await send(b.endpoint, q.url, 'pg-1');
      await eventually(() => invokedWith('pg-fn', 'pg-1'), 'the invocation', 30_000);
      await eventually(() => isEmpty(a.endpoint, q.url), 'the record deleted', 30_000);
      // The first node, which holds the lease, stops cleanly: the other takes the lease and the polling.
      await a.stop();
      await send(b.endpoint, q.url, 'pg-2');
      await eventually(() => invokedWith('pg-fn', 'pg-2'), 'the invocation by the other node', 60_000);
    } finally {
      for (const node of nodes) {
        await node.stop();
        removeDataDir(node.dataDir);
      }
      await database.drop();
    }
  });
});

describe('event source mappings and a crash', () => {
  it('lose nothing when the server is killed (-9) during invocations', async () => {
    const first = await startServer({ args: ['--test-clock', '--lambda-endpoint', fn.endpoint] });
    let second: RunningServer | undefined;
    try {
      const q = await makeQueue(first.endpoint, 'crash');
      const sqs = sqsClient(first.endpoint);
      await sqs.send(
        new SetQueueAttributesCommand({ QueueUrl: q.url, Attributes: { VisibilityTimeout: '30' } }),
      );
      sqs.destroy();
      const bodies = Array.from({ length: 20 }, (_, index) => `crash-${index}`);
      for (const body of bodies) await send(first.endpoint, q.url, body);
      // Two batches succeed; the next ones hang until the server is killed under them.
      const succeeded = new Set<string>();
      let answered = 0;
      const hang = new Promise<undefined>(() => {});
      fn.behave('crash-fn', ({ event }) => {
        if (answered >= 2) return hang;
        answered++;
        for (const record of event.Records) succeeded.add(record.body);
        return undefined;
      });
      const lambda = lambdaClient(first.endpoint);
      await lambda.send(
        new CreateEventSourceMappingCommand({
          EventSourceArn: q.arn,
          FunctionName: 'crash-fn',
          BatchSize: 3,
          ScalingConfig: { MaximumConcurrency: 2 },
        }),
      );
      lambda.destroy();
      await eventually(
        () => fn.runningOf('crash-fn') > 0 && answered === 2,
        'an invocation under way',
        30_000,
      );
      await first.kill();
      fn.behave('crash-fn', ({ event }) => {
        for (const record of event.Records) succeeded.add(record.body);
        return undefined;
      });
      second = await startServer({
        dataDir: first.dataDir,
        args: ['--test-clock', '--lambda-endpoint', fn.endpoint],
      });
      const endpoint = second.endpoint;
      // What was in flight at the crash comes back after its visibility timeout.
      const done = async () => succeeded.size === bodies.length && (await isEmpty(endpoint, q.url));
      const deadline = Date.now() + 90_000;
      while (!(await done())) {
        assert.ok(Date.now() < deadline, 'every message processed once the function answers');
        await advanceClock(endpoint, 31);
        // Time to act on the step before the next, which would time out an invocation under way.
        await eventually(done, 'every message processed', 5_000).catch(() => {});
      }
      assert.deepEqual([...succeeded].sort(), [...bodies].sort());
    } finally {
      await second?.stop();
      removeDataDir(first.dataDir);
    }
  });
});

describe('event source mappings with credentials', () => {
  it('take a signature for service lambda by a key of the server', async () => {
    const key = { accessKeyId: 'AKIDESMTEST', secretAccessKey: 'esm-secret-key-for-tests' };
    const server = await startServer({
      args: ['--credentials', `${key.accessKeyId}:${key.secretAccessKey}`],
    });
    try {
      const sqs = sqsClient(server.endpoint, { credentials: key });
      await sqs.send(new CreateQueueCommand({ QueueName: 'signed' }));
      sqs.destroy();
      const signed = new LambdaClient({
        endpoint: server.endpoint,
        region: REGION,
        credentials: key,
        maxAttempts: 1,
      });
      const { UUID } = await signed.send(
        new CreateEventSourceMappingCommand({
          EventSourceArn: `arn:aws:sqs:${REGION}:${ACCOUNT}:signed`,
          FunctionName: 'signed-fn',
        }),
      );
      assert.ok(UUID);
      signed.destroy();
      const wrong = new LambdaClient({
        endpoint: server.endpoint,
        region: REGION,
        credentials: { ...key, secretAccessKey: 'not-the-secret' },
        maxAttempts: 1,
      });
      await assert.rejects(
        wrong.send(new ListEventSourceMappingsCommand({})),
        (error: Error & { $metadata: { httpStatusCode?: number } }) => {
          assert.equal(error.$metadata.httpStatusCode, 403);
          return true;
        },
      );
      wrong.destroy();
      const unsigned = await fetch(`${server.endpoint}/2015-03-31/event-source-mappings/`);
      assert.equal(unsigned.status, 403);
    } finally {
      await server.stop();
      removeDataDir(server.dataDir);
    }
  });
});
