import { Agent } from 'node:http';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type QueueAttributeName,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { makeRawClient } from './raw-client.ts';

export type ClientKind = 'raw' | 'sdk';
export const CLIENT_KINDS: readonly ClientKind[] = ['raw', 'sdk'];

/** The fields of an SQS message the scenarios read. */
export interface ReceivedMessage {
  MessageId?: string | undefined;
  ReceiptHandle?: string | undefined;
  Body?: string | undefined;
}

export interface BatchEntryResult {
  Id?: string | undefined;
}

export interface BatchResult {
  Successful: BatchEntryResult[];
  Failed: BatchEntryResult[];
}

export interface SendEntry {
  Id: string;
  MessageBody: string;
  MessageGroupId?: string;
  MessageDeduplicationId?: string;
}

export interface DeleteEntry {
  Id: string;
  ReceiptHandle: string;
}

/**
 * The SQS calls the scenarios make, with the SDK's field names, so a scenario runs unchanged on the
 * AWS SDK (what an SDK user sees) or on the lean raw client (what the server can do).
 */
export interface QueueClient {
  readonly kind: ClientKind;
  createQueue(name: string, attributes: Record<string, string>): Promise<string>;
  sendMessage(queueUrl: string, body: string): Promise<void>;
  sendMessageBatch(queueUrl: string, entries: SendEntry[]): Promise<BatchResult>;
  receiveMessage(queueUrl: string, max: number, waitSeconds?: number): Promise<ReceivedMessage[]>;
  deleteMessage(queueUrl: string, receiptHandle: string): Promise<void>;
  deleteMessageBatch(queueUrl: string, entries: DeleteEntry[]): Promise<BatchResult>;
  getQueueAttributes(queueUrl: string, names: string[]): Promise<Record<string, string>>;
  close(): void;
}

/** Sockets per client: above the largest default concurrency, so no request waits for a socket. */
export const MAX_SOCKETS = 64;

/**
 * @aws-sdk/client-sqs: JSON protocol (the SDK default), keep-alive sockets, no retries (a failed
 * request is counted, not hidden), and a request timeout above the 20 s long-poll.
 */
function makeSdkClient(endpoint: string): QueueClient {
  // The SDK warns once that future releases need Node 22; it is noise in benchmark output.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const agent = new Agent({ keepAlive: true, maxSockets: MAX_SOCKETS });
  const sqs = new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    maxAttempts: 1,
    requestHandler: { httpAgent: agent, connectionTimeout: 5_000, requestTimeout: 30_000 },
  });
  return {
    kind: 'sdk',
    async createQueue(name, attributes) {
      const res = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
      if (!res.QueueUrl) throw new Error('CreateQueue returned no QueueUrl');
      return res.QueueUrl;
    },
    async sendMessage(queueUrl, body) {
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    },
    async sendMessageBatch(queueUrl, entries) {
      const res = await sqs.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
      return { Successful: res.Successful ?? [], Failed: res.Failed ?? [] };
    },
    async receiveMessage(queueUrl, max, waitSeconds) {
      const res = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queueUrl,
          MaxNumberOfMessages: max,
          ...(waitSeconds === undefined ? {} : { WaitTimeSeconds: waitSeconds }),
        }),
      );
      return res.Messages ?? [];
    },
    async deleteMessage(queueUrl, receiptHandle) {
      await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: receiptHandle }));
    },
    async deleteMessageBatch(queueUrl, entries) {
      const res = await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
      return { Successful: res.Successful ?? [], Failed: res.Failed ?? [] };
    },
    async getQueueAttributes(queueUrl, names) {
      const res = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: queueUrl,
          AttributeNames: names as QueueAttributeName[],
        }),
      );
      const out: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.Attributes ?? {})) if (v !== undefined) out[k] = v;
      return out;
    },
    close() {
      sqs.destroy();
      agent.destroy();
    },
  };
}

/** One client per target. */
export function makeClient(kind: ClientKind, endpoint: string): QueueClient {
  return kind === 'raw' ? makeRawClient(endpoint, MAX_SOCKETS) : makeSdkClient(endpoint);
}
