/**
 * A lean SQS client for the bench: AWS JSON 1.0 over node:http with keep-alive sockets, bodies built
 * with JSON.stringify and parsed with JSON.parse, nothing else. The AWS SDK spends 1.5-3 ms of CPU per
 * request on a small machine (middleware stack, signing, schema (de)serialization); this spends a few
 * tens of microseconds, so the numbers measure the server rather than the client.
 *
 * The Authorization header is a fixed, plausibly shaped fake: Sluice does not verify signatures and
 * moto only reads the region/access key out of it.
 */
import { Agent } from 'node:http';
import type { BatchResult, DeleteEntry, QueueClient, ReceivedMessage, SendEntry } from './client.ts';
import { rawPost } from './raw-post.ts';

const AUTHORIZATION =
  'AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0';

/** A non-200 answer: name is the short `__type` (after '#'), e.g. QueueDoesNotExist. */
export class SqsError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = type;
  }
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asArray(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

function optString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function batchResult(out: Json): BatchResult {
  return {
    Successful: asArray(out.Successful).map((e) => ({ Id: optString(e.Id) })),
    Failed: asArray(out.Failed).map((e) => ({ Id: optString(e.Id) })),
  };
}

export function makeRawClient(endpoint: string, maxSockets = 64): QueueClient {
  const url = new URL(endpoint);
  const agent = new Agent({ keepAlive: true, maxSockets });

  const call = async (action: string, input: Json): Promise<Json> => {
    const { status, text } = await rawPost(
      agent,
      url,
      {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `AmazonSQS.${action}`,
        authorization: AUTHORIZATION,
      },
      JSON.stringify(input),
      action,
    );
    let out: unknown;
    try {
      out = text === '' ? {} : JSON.parse(text);
    } catch {
      throw new SqsError('InvalidJson', `${action}: unparseable response: ${text.slice(0, 200)}`, 0);
    }
    const body = isObject(out) ? out : {};
    if (status === 200) return body;
    const rawType = optString(body.__type) ?? `HTTP${status}`;
    const type = rawType.slice(rawType.lastIndexOf('#') + 1);
    const message = optString(body.message) ?? optString(body.Message) ?? text.slice(0, 200);
    throw new SqsError(type, `${action}: ${message}`, status);
  };

  return {
    kind: 'raw',
    async createQueue(name, attributes) {
      const out = await call('CreateQueue', { QueueName: name, Attributes: attributes });
      const queueUrl = optString(out.QueueUrl);
      if (!queueUrl) throw new Error('CreateQueue returned no QueueUrl');
      return queueUrl;
    },
    async sendMessage(queueUrl, body) {
      await call('SendMessage', { QueueUrl: queueUrl, MessageBody: body });
    },
    async sendMessageBatch(queueUrl: string, entries: SendEntry[]) {
      return batchResult(await call('SendMessageBatch', { QueueUrl: queueUrl, Entries: entries }));
    },
    async receiveMessage(queueUrl, max, waitSeconds) {
      const input: Json = { QueueUrl: queueUrl, MaxNumberOfMessages: max };
      if (waitSeconds !== undefined) input.WaitTimeSeconds = waitSeconds;
      const out = await call('ReceiveMessage', input);
      return asArray(out.Messages).map(
        (m): ReceivedMessage => ({
          MessageId: optString(m.MessageId),
          ReceiptHandle: optString(m.ReceiptHandle),
          Body: optString(m.Body),
        }),
      );
    },
    async deleteMessage(queueUrl, receiptHandle) {
      await call('DeleteMessage', { QueueUrl: queueUrl, ReceiptHandle: receiptHandle });
    },
    async deleteMessageBatch(queueUrl: string, entries: DeleteEntry[]) {
      return batchResult(await call('DeleteMessageBatch', { QueueUrl: queueUrl, Entries: entries }));
    },
    async getQueueAttributes(queueUrl, names) {
      const out = await call('GetQueueAttributes', { QueueUrl: queueUrl, AttributeNames: names });
      const attributes: Record<string, string> = {};
      if (isObject(out.Attributes)) {
        for (const [k, v] of Object.entries(out.Attributes)) if (typeof v === 'string') attributes[k] = v;
      }
      return attributes;
    },
    close() {
      agent.destroy();
    },
  };
}
