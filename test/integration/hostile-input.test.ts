import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { postForm, postJson } from '../helpers/raw-requests.ts';
import { type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';

/** Requests no real client sends; each must get an AWS-shaped 4xx, never a 500, a hang or a crash. */
describe('hostile input', () => {
  let server: RunningServer;
  before(async () => {
    server = await startServer();
    const created = await json('CreateQueue', JSON.stringify({ QueueName: 'hostile' }));
    assert.equal(created.status, 200);
  });
  after(async () => {
    await server.stop();
    removeDataDir(server.dataDir);
  });

  const json = (action: string, body: string | Blob) => postJson(server.endpoint, action, body);
  const form = (body: string) => postForm(server.endpoint, body);
  const queueUrl = () => `${server.endpoint}/000000000000/hostile`;

  it('refuses invalid UTF-8 in a JSON body instead of storing replacement characters', async () => {
    const prefix = Buffer.from(`{"QueueUrl":"${queueUrl()}","MessageBody":"`);
    const response = await json(
      'SendMessage',
      new Blob([Buffer.concat([prefix, Buffer.from([0xff, 0xfe]), Buffer.from('"}')])]),
    );
    assert.equal(response.status, 400);
    assert.match(String(response.headers.get('x-amzn-query-error')), /;Sender$/);
  });

  it('refuses percent-encoded bytes that are not UTF-8 in a Query request', async () => {
    const response = await form(
      `Action=SendMessage&Version=2012-11-05&QueueUrl=${encodeURIComponent(queueUrl())}&MessageBody=%FF%FE`,
    );
    assert.equal(response.status, 400);
    assert.match(await response.text(), /<ErrorResponse[\s\S]*<Type>Sender<\/Type>/);
  });

  it('answers deeply nested and non-object JSON bodies with a serialization error', async () => {
    for (const body of ['['.repeat(100_000) + ']'.repeat(100_000), '"text"', 'null', '{"QueueUrl":']) {
      const response = await json('ListQueues', body);
      assert.equal(response.status, 400, body.slice(0, 20));
      const parsed = (await response.json()) as { __type: string };
      assert.match(parsed.__type, /^com\.amazonaws\.sqs#/);
    }
  });

  it('answers unknown HTTP methods and a missing Action in the Query shape', async () => {
    for (const [method, body] of [
      ['PUT', 'x'],
      ['POST', 'Version=2012-11-05'],
      ['DELETE', undefined],
    ] as const) {
      const response = await fetch(server.endpoint, { method, body });
      assert.equal(response.status, 400, method);
      assert.match(await response.text(), /<ErrorResponse/);
    }
  });

  it('still serves after all of it and logged no unexpected error', async () => {
    const response = await json('GetQueueUrl', JSON.stringify({ QueueName: 'hostile' }));
    assert.equal(response.status, 200);
    assert.doesNotMatch(server.output(), /^\S+Z (ERROR|FATAL) /m);
  });
});
