import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { type RunningSluice, type SluiceOptions, startSluice } from 'sluice';
import { sqsClient } from '../helpers/sqs-client.ts';

/** The value of one unlabelled Prometheus sample line. */
function sample(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

/**
 * The metrics switch (`--no-metrics`, `metrics: false`) and the process memory gauges that npm run soak
 * reads, on really started servers driven by the AWS SDK.
 */
describe('metrics switch and process memory', () => {
  const started: Array<{ sluice: RunningSluice; sqs: SQSClient; dataDir: string }> = [];
  const start = async (options: SluiceOptions) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-metrics-switch-'));
    const sluice = await startSluice({ port: 0, dataDir, logLevel: 'silent', ...options });
    const sqs = sqsClient(sluice.endpoint);
    started.push({ sluice, sqs, dataDir });
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'switched' }));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'hello' }));
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl }));
    assert.equal(Messages[0]?.Body, 'hello');
    return sluice;
  };
  after(async () => {
    for (const { sluice, sqs, dataDir } of started) {
      sqs.destroy();
      await sluice.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('serves the process memory and heap of the server with the request metrics', async () => {
    const sluice = await start({});
    const text = await (await fetch(`${sluice.endpoint}/metrics`)).text();
    const rss = sample(text, 'process_resident_memory_bytes');
    const heapUsed = sample(text, 'nodejs_heap_size_used_bytes');
    const heapTotal = sample(text, 'nodejs_heap_size_total_bytes');
    assert.ok(rss !== undefined && heapUsed !== undefined && heapTotal !== undefined, text.slice(0, 500));
    assert.ok(heapUsed > 0 && heapUsed <= heapTotal, `heap ${heapUsed} of ${heapTotal}`);
    assert.ok(rss >= heapUsed, `rss ${rss} below heap ${heapUsed}`);
    assert.match(text, /sluice_requests_total\{action="SendMessage",status="200"\} 1/);
  });

  it('with metrics off serves the SQS API but no /metrics', async () => {
    const sluice = await start({ metrics: false });
    // An unknown GET path is read as an SQS query request without an Action: SQS's 404, not metrics.
    const response = await fetch(`${sluice.endpoint}/metrics`);
    const text = await response.text();
    assert.equal(response.status, 404);
    assert.doesNotMatch(text, /sluice_requests_total|process_resident_memory_bytes/);
  });
});
