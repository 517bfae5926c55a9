import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { CreateQueueCommand, GetQueueAttributesCommand, ListQueueTagsCommand } from '@aws-sdk/client-sqs';
import { freePort } from '../../tools/free-port.ts';
import { type RunningServer, removeDataDir, SLUICE_CLI, startServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

const run = promisify(execFile);

describe('sluice command line', () => {
  it('documents every serve option in --help', async () => {
    const { stdout } = await run(process.execPath, [...SLUICE_CLI, 'serve', '--help']);
    for (const option of [
      '--port',
      '--host',
      '--data',
      '--in-memory',
      '--durability',
      '--config',
      '--region',
      '--account',
      '--log-level',
      '--max-request-bytes',
      '--redrive-rate',
      '--redrive-backlog',
      '--alarm-webhook',
      '--credentials',
      '--insecure',
      '--tls-cert',
      '--tls-key',
      '--strict-receipt-handles',
      '--test-clock',
    ]) {
      assert.match(stdout, new RegExp(`${option} `), `serve --help does not mention ${option}`);
    }
    const main = await run(process.execPath, [...SLUICE_CLI, '--help']);
    assert.match(main.stdout, /sluice serve/);
  });

  it('has every option of every command in the command-line guide', async () => {
    const guide = readFileSync(new URL('../../docs/guide/cli.md', import.meta.url), 'utf8');
    for (const command of ['serve', 'redrive', 'stats', 'audit', 'dlq']) {
      const { stdout } = await run(process.execPath, [...SLUICE_CLI, command, '--help']);
      const options = new Set(stdout.match(/--[a-z][a-z-]*/g));
      assert.ok(options.size > 3, stdout);
      for (const option of options)
        assert.ok(guide.includes(`\`${option}`), `docs/guide/cli.md does not document ${command} ${option}`);
    }
  });

  it('refuses unknown options and bad values with exit code 2', async () => {
    for (const args of [
      ['serve', '--nope'],
      ['serve', '--durability', 'maybe'],
      ['serve', '--port', 'x'],
      ['bogus'],
    ]) {
      await assert.rejects(
        run(process.execPath, [...SLUICE_CLI, ...args]),
        (error: { code?: number; stderr?: string }) => {
          assert.equal(error.code, 2, `exit code for ${args.join(' ')}`);
          assert.match(error.stderr ?? '', /^sluice: /);
          return true;
        },
      );
    }
  });

  it('answers a usage mistake with one line and where the help is, not the whole help', async () => {
    for (const [args, error, help] of [
      [['serve', '--bogus'], "unknown option '--bogus'", 'sluice serve --help'],
      [['serve', '--port', '70000'], '--port must be an integer from 0 to 65535', 'sluice serve --help'],
      [['redrive', '--bogus'], "unknown option '--bogus'", 'sluice redrive --help'],
      [['stats', 'orders', '--bogus'], "unknown option '--bogus'", 'sluice stats --help'],
      [['bogus'], 'unknown command "bogus"', 'sluice --help'],
    ] as const) {
      await assert.rejects(
        run(process.execPath, [...SLUICE_CLI, ...args]),
        (failure: { code?: number; stderr?: string }) => {
          assert.equal(failure.code, 2, `exit code for ${args.join(' ')}`);
          const lines = (failure.stderr ?? '').trimEnd().split('\n');
          assert.deepEqual(lines, [
            `sluice: ${error}`,
            `Run \`${help}\` to see the ${help === 'sluice --help' ? 'commands' : 'options'}.`,
          ]);
          return true;
        },
      );
    }
  });

  it('creates and updates the queues of --config at start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
    const config = join(dir, 'queues.json');
    const dlqArn = 'arn:aws:sqs:eu-west-1:123456789012:orders-dlq';
    writeFileSync(
      config,
      JSON.stringify({
        queues: [
          { name: 'orders-dlq', attributes: { MessageRetentionPeriod: 1209600 } },
          {
            name: 'orders',
            attributes: {
              VisibilityTimeout: 60,
              RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 3 }),
            },
            tags: { team: 'payments' },
          },
        ],
      }),
    );
    const args = ['--config', config, '--region', 'eu-west-1', '--account', '123456789012'];
    const first = await startServer({ dataDir: join(dir, 'data'), args });
    await first.stop();
    // A second start with changed values updates the existing queue.
    writeFileSync(
      config,
      JSON.stringify({ queues: [{ name: 'orders', attributes: { VisibilityTimeout: 90 } }] }),
    );
    const second = await startServer({ dataDir: join(dir, 'data'), args });
    try {
      const sqs = sqsClient(second.endpoint, { region: 'eu-west-1' });
      const QueueUrl = `${second.endpoint}/123456789012/orders`;
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }),
      );
      assert.equal(Attributes?.VisibilityTimeout, '90');
      assert.equal(Attributes?.QueueArn, 'arn:aws:sqs:eu-west-1:123456789012:orders');
      assert.deepEqual(JSON.parse(Attributes?.RedrivePolicy ?? '{}'), {
        deadLetterTargetArn: dlqArn,
        maxReceiveCount: 3,
      });
      const { Tags } = await sqs.send(new ListQueueTagsCommand({ QueueUrl }));
      assert.deepEqual(Tags, { team: 'payments' });
      sqs.destroy();
    } finally {
      await second.stop();
      removeDataDir(dir);
    }
  });

  it('shuts down cleanly on a SIGTERM sent as soon as it says it is listening', async () => {
    // A supervisor or test that stops the server right after reading the line must get the clean shutdown.
    for (let run = 0; run < 5; run++) {
      const server = await startServer();
      await server.stop();
      removeDataDir(server.dataDir);
      assert.deepEqual([server.process.signalCode, server.process.exitCode], [null, 0], server.output());
      assert.match(server.output(), /^\S+Z INFO {2}SIGTERM, shutting down$/m);
    }
  });

  it('refuses to start a second server on a data directory already in use', async () => {
    const first = await startServer();
    try {
      await assert.rejects(startServer({ dataDir: first.dataDir }), /in use by another Sluice server/);
    } finally {
      await first.stop();
      removeDataDir(first.dataDir);
    }
  });

  it('fails to start with a clear message on a broken config file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
    const config = join(dir, 'bad.json');
    writeFileSync(
      config,
      JSON.stringify({ queues: [{ name: 'x', attributes: { VisibilityTimeout: 99999 } }] }),
    );
    await assert.rejects(
      startServer({ dataDir: join(dir, 'data'), args: ['--config', config] }),
      /InvalidAttributeValue/,
    );
    removeDataDir(dir);
  });
});

/** What a person sees first: the startup lines, the server's address in a browser, a health check. */
describe('first contact with sluice serve', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  it('prints the console URL at start, on a line after the listening line', async () => {
    // Two log lines, one stream: the second follows the first, maybe in a later chunk.
    const consoleLine = / INFO {2}console at /;
    for (let waited = 0; !consoleLine.test(server.output()); waited += 50) {
      assert.ok(waited < 10_000, server.output());
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const lines = server.output().split('\n');
    const listening = lines.findIndex((line) => / INFO {2}listening on /.test(line));
    assert.ok(listening >= 0, server.output());
    assert.match(
      lines[listening + 1] ?? '',
      new RegExp(`^\\S+Z INFO  console at ${server.endpoint}/console$`),
    );
    const page = await fetch(`${server.endpoint}/console`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  });

  it("sends a browser opening the server's address to the console, and leaves SQS requests to / alone", async () => {
    const browser = await fetch(`${server.endpoint}/`, {
      headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
      redirect: 'manual',
    });
    assert.equal(browser.status, 303);
    assert.equal(browser.headers.get('location'), '/console');
    const followed = await fetch(`${server.endpoint}/`, { headers: { accept: 'text/html' } });
    assert.equal(followed.url, `${server.endpoint}/console`);
    assert.match(await followed.text(), /<html/i);
    // A Query-protocol GET (it carries an Action) is still the SQS API, whatever it accepts; as every Query GET
    // it must carry an Authorization header (docs/decisions/query-by-get.md).
    const query = await fetch(`${server.endpoint}/?Action=ListQueues&Version=2012-11-05`, {
      headers: {
        accept: 'text/html',
        authorization:
          'AWS4-HMAC-SHA256 Credential=test/20261205/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0',
      },
    });
    assert.equal(query.status, 200);
    assert.match(await query.text(), /<ListQueuesResponse/);
  });

  it('logs nothing about a cluster lease on a single node, at start or at shutdown', async () => {
    const alone = await startServer();
    await alone.stop();
    removeDataDir(alone.dataDir);
    assert.match(alone.output(), /SIGTERM, shutting down/);
    assert.doesNotMatch(alone.output(), /lease|cluster jobs/);
  });

  it('warns of the retention trap only for a DLQ whose retention nobody chose', async () => {
    const sqs = sqsClient(server.endpoint);
    const pair = async (dlq: string, source: string, dlqAttributes: Record<string, string>) => {
      await sqs.send(new CreateQueueCommand({ QueueName: dlq, Attributes: dlqAttributes }));
      const RedrivePolicy = JSON.stringify({
        deadLetterTargetArn: `arn:aws:sqs:us-east-1:000000000000:${dlq}`,
        maxReceiveCount: 3,
      });
      await sqs.send(new CreateQueueCommand({ QueueName: source, Attributes: { RedrivePolicy } }));
    };
    try {
      await pair('chosen-dlq', 'chosen', { MessageRetentionPeriod: '86400' }); // one day, on purpose
      await pair('plain-dlq', 'plain', {}); // four days, as the source: the default
      // The log is written in order: once the second pair's warning is there, the first's would be too.
      for (let waited = 0; !server.output().includes('dead-letter queue plain-dlq keeps'); waited += 50) {
        assert.ok(waited < 10_000, server.output());
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const warnings = server
        .output()
        .split('\n')
        .filter((line) => line.includes('a message keeps its original send time'));
      assert.equal(warnings.length, 1, warnings.join('\n'));
      assert.match(
        warnings[0]!,
        /dead-letter queue plain-dlq keeps messages 345600 s, not longer than plain's 345600 s/,
      );
    } finally {
      sqs.destroy();
    }
  });

  it('answers HEAD /health like GET, without the body', async () => {
    const get = await fetch(`${server.endpoint}/health`);
    const getBody = await get.text();
    const head = await fetch(`${server.endpoint}/health`, { method: 'HEAD' });
    assert.equal(head.status, get.status);
    assert.equal(head.headers.get('content-type'), get.headers.get('content-type'));
    assert.equal(head.headers.get('content-length'), String(Buffer.byteLength(getBody)));
    assert.equal(await head.text(), '');
  });
});

describe('sluice stats and sluice redrive with no server at the endpoint', () => {
  it('say that no Sluice answers there and ask whether sluice serve is running', async () => {
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    for (const [command, ...args] of [
      ['stats', 'orders', '--endpoint', endpoint],
      ['stats', `${endpoint}/000000000000/orders`],
      ['redrive', '--source', 'orders-dlq', '--endpoint', endpoint],
      ['redrive', '--source', 'arn:aws:sqs:us-east-1:000000000000:orders-dlq', '--endpoint', endpoint],
    ]) {
      await assert.rejects(
        run(process.execPath, [...SLUICE_CLI, command!, ...args], {
          env: { ...process.env, NODE_NO_WARNINGS: '1' },
        }),
        (failure: { code?: number; stderr?: string }) => {
          assert.equal(failure.code, 1, `${command} ${args.join(' ')}`);
          assert.equal(
            failure.stderr,
            `sluice ${command}: no Sluice at ${endpoint}: is \`sluice serve\` running?\n`,
          );
          return true;
        },
      );
    }
  });
});

/** Writes `content` to `file` and starts `sluice serve --config file`, which must refuse it; what it printed. */
async function refusedConfig(file: string, content: unknown): Promise<string> {
  writeFileSync(file, JSON.stringify(content));
  // A file that were accepted would start a server: the timeout ends it, and the test fails.
  return run(process.execPath, [...SLUICE_CLI, 'serve', '--in-memory', '--port', '0', '--config', file], {
    timeout: 30_000,
  }).then(
    () => assert.fail(`sluice serve accepted ${JSON.stringify(content)}`),
    (failure: { code?: number; stderr?: string }) => {
      assert.equal(failure.code, 2, `${JSON.stringify(content)}: ${failure.stderr}`);
      return failure.stderr ?? '';
    },
  );
}

describe('sluice serve --config', () => {
  it('refuses a key it does not know, naming the key and the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
    const cases: Array<[unknown, string]> = [
      [{ queue: [] }, 'unknown key "queue"'],
      [{ queues: [{ name: 'a', attributs: {} }] }, 'unknown key "queues[0].attributs"'],
      [
        { queues: [{ name: 'a', attributes: { VisibilityTimout: 5 } }] },
        'unknown key "queues[0].attributes.VisibilityTimout"',
      ],
      [{ redrive: { rate: 5 } }, 'unknown key "redrive.rate"'],
      [{ alarms: { treshold: 5 } }, 'unknown key "alarms.treshold"'],
      [
        { alarms: { queues: { 'orders-dlq': { silence: true } } } },
        'unknown key "alarms.queues.orders-dlq.silence"',
      ],
      [
        { credentials: [{ accessKeyId: 'AKID', secretAccessKey: 's', secret: 's' }] },
        'unknown key "credentials[0].secret"',
      ],
    ];
    try {
      await Promise.all(
        cases.map(async ([content, error], index) => {
          const file = join(dir, `config-${index}.json`);
          assert.match(
            await refusedConfig(file, content),
            new RegExp(
              `^\\S+Z FATAL cannot start: config file ${file}: ${error.replace(/[[\].]/g, '\\$&')} \\(known: `,
            ),
          );
        }),
      );
    } finally {
      removeDataDir(dir);
    }
  });

  it('refuses a strictReceiptHandles that is not a boolean, or that is set on a FIFO queue', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
    const cases: Array<[unknown, string]> = [
      [
        { queues: [{ name: 'orders', strictReceiptHandles: 'yes' }] },
        '"queues[0].strictReceiptHandles" must be true or false',
      ],
      [
        { queues: [{ name: 'orders.fifo', attributes: { FifoQueue: true }, strictReceiptHandles: false }] },
        '"queues[0].strictReceiptHandles" is for standard queues: FIFO queues always refuse stale handles',
      ],
    ];
    try {
      await Promise.all(
        cases.map(async ([content, error], index) => {
          const file = join(dir, `config-${index}.json`);
          const said = await refusedConfig(file, content);
          assert.equal(said.replace(/^\S+Z FATAL /, ''), `cannot start: config file ${file}: ${error}\n`);
        }),
      );
    } finally {
      removeDataDir(dir);
    }
  });

  it('takes a RedrivePolicy as a JSON object, and a source queue listed before its DLQ', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-config-'));
    const config = join(dir, 'queues.json');
    const arn = (name: string) => `arn:aws:sqs:us-east-1:000000000000:${name}`;
    writeFileSync(
      config,
      JSON.stringify({
        queues: [
          {
            name: 'orders',
            attributes: { RedrivePolicy: { deadLetterTargetArn: arn('orders-dlq'), maxReceiveCount: 3 } },
          },
          {
            name: 'audit',
            attributes: {
              RedrivePolicy: JSON.stringify({ deadLetterTargetArn: arn('orders-dlq'), maxReceiveCount: '5' }),
            },
          },
          {
            name: 'orders-dlq',
            attributes: {
              MessageRetentionPeriod: 1209600,
              RedriveAllowPolicy: {
                redrivePermission: 'byQueue',
                sourceQueueArns: [arn('orders'), arn('audit')],
              },
            },
          },
        ],
      }),
    );
    const server = await startServer({ inMemory: true, args: ['--config', config] });
    const sqs = sqsClient(server.endpoint);
    try {
      const policyOf = async (name: string) => {
        const { Attributes } = await sqs.send(
          new GetQueueAttributesCommand({
            QueueUrl: `${server.endpoint}/000000000000/${name}`,
            AttributeNames: ['RedrivePolicy', 'RedriveAllowPolicy'],
          }),
        );
        return Attributes;
      };
      assert.deepEqual(JSON.parse((await policyOf('orders'))?.RedrivePolicy ?? '{}'), {
        deadLetterTargetArn: arn('orders-dlq'),
        maxReceiveCount: 3,
      });
      assert.deepEqual(JSON.parse((await policyOf('audit'))?.RedrivePolicy ?? '{}'), {
        deadLetterTargetArn: arn('orders-dlq'),
        maxReceiveCount: 5,
      });
      assert.deepEqual(JSON.parse((await policyOf('orders-dlq'))?.RedriveAllowPolicy ?? '{}'), {
        redrivePermission: 'byQueue',
        sourceQueueArns: [arn('orders'), arn('audit')],
      });
    } finally {
      sqs.destroy();
      await server.stop();
      removeDataDir(dir);
      removeDataDir(server.dataDir);
    }
  });
});
