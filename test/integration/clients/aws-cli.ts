import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { type AttributeValue, md5Hex, md5OfAttributes } from '../../helpers/md5.ts';
import { type Protocol, type RunResult, run } from './clients.ts';

/**
 * The AWS CLI driven as a user drives it (`aws sqs ... --endpoint-url E --output json`, or `aws sns ...`), with
 * its JSON stdout parsed here. Every call is kept in a transcript shown when a check fails.
 */
export class AwsCli {
  private transcript: string[] = [];

  constructor(
    readonly bin: string,
    readonly endpoint: string,
    /** Overrides of the client environment, e.g. other credentials. */
    readonly env: Readonly<Record<string, string>> = {},
    /** The CLI's command group every call runs under. */
    readonly service: 'sqs' | 'sns' = 'sqs',
  ) {}

  /** The same CLI, endpoint and environment, for the other service. */
  as(service: 'sqs' | 'sns'): AwsCli {
    const other = new AwsCli(this.bin, this.endpoint, this.env, service);
    other.transcript = this.transcript;
    return other;
  }

  async call(args: readonly string[]): Promise<RunResult> {
    const result = await run(
      this.bin,
      [this.service, ...args, '--endpoint-url', this.endpoint, '--output', 'json'],
      60_000,
      this.env,
    );
    // A --debug log is thousands of lines; the request botocore signs is the part worth showing.
    const stderr = args.includes('--debug') ? (requestLine(result.stderr) ?? result.stderr) : result.stderr;
    this.transcript.push(
      `$ aws ${this.service} ${args.map((a) => JSON.stringify(a)).join(' ')}  -> exit ${result.code} in ${result.ms} ms\n` +
        `${result.stdout}${stderr}`,
    );
    return result;
  }

  /** Runs a command that must succeed and returns its parsed JSON output ({} when it prints nothing). */
  async ok<T>(args: readonly string[]): Promise<T> {
    const result = await this.call(args);
    assert.equal(result.code, 0, `aws ${this.service} ${args[0]} failed:\n${result.stderr.slice(-4000)}`);
    return (result.stdout.trim() ? JSON.parse(result.stdout) : {}) as T;
  }

  /** Runs a command that must fail with the given error code, as the CLI prints it on stderr. */
  async fails(args: readonly string[], code: string): Promise<string> {
    const result = await this.call(args);
    assert.notEqual(result.code, 0, `aws ${this.service} ${args[0]} should have failed with ${code}`);
    assert.ok(
      result.stderr.includes(`An error occurred (${code}) when calling`),
      `aws ${this.service} ${args[0]}: expected error ${code} on stderr, got:\n${result.stderr}`,
    );
    return result.stderr;
  }

  output(): string {
    return this.transcript.join('\n');
  }
}

/** botocore's --debug line describing the request it is about to sign (headers and body). */
function requestLine(debugLog: string): string | undefined {
  return debugLog.split('\n').find((line) => line.includes('Making request for OperationModel'));
}

/** The wire protocol of a request, from that line: a JSON target header, or form fields. */
export function protocolOf(debugLog: string): Protocol | 'unknown' {
  const request = requestLine(debugLog) ?? '';
  if (/'X-Amz-Target': 'AmazonSQS\.\w+'/.test(request)) return 'json';
  if (request.includes("'Content-Type': 'application/x-www-form-urlencoded")) return 'query';
  return 'unknown';
}

interface QueueUrlOutput {
  QueueUrl: string;
}
interface AttributesOutput {
  Attributes: Record<string, string>;
}
interface SendOutput {
  MessageId: string;
  MD5OfMessageBody: string;
  MD5OfMessageAttributes?: string;
}
interface ReceivedMessage {
  MessageId: string;
  ReceiptHandle: string;
  MD5OfBody: string;
  Body: string;
  Attributes?: Record<string, string>;
  MD5OfMessageAttributes?: string;
  MessageAttributes?: Record<string, AttributeValue>;
}
interface ReceiveOutput {
  Messages?: ReceivedMessage[];
}

export const NON_EXISTENT_QUEUE = 'AWS.SimpleQueueService.NonExistentQueue';

const runId = () => randomBytes(4).toString('hex');

/**
 * The SQS lesson's walkthrough (reference file), with the everyday commands' details checked on
 * the way: message attributes, a body with CR LF, XML/JSON specials and emoji, the errors a user
 * sees. Left out: what needs time to pass or move tasks (three receives landing a message in the
 * DLQ, redriving it back). One flow, because every CLI call costs a second or more of start-up.
 */
export async function walkthrough(cli: AwsCli, expectedProtocol: Protocol): Promise<void> {
  const id = runId();
  const sourceName = `lesson-orders-${id}`;
  const dlq = await cli.ok<QueueUrlOutput>([
    'create-queue',
    '--queue-name',
    `lesson-dlq-${id}`,
    '--attributes',
    'MessageRetentionPeriod=1209600',
  ]);
  const leftovers = [dlq.QueueUrl];
  try {
    const { Attributes: dlqAttrs } = await cli.ok<AttributesOutput>([
      'get-queue-attributes',
      '--queue-url',
      dlq.QueueUrl,
      '--attribute-names',
      'QueueArn',
      'MessageRetentionPeriod',
    ]);
    assert.equal(dlqAttrs.MessageRetentionPeriod, '1209600');
    const dlqArn = dlqAttrs.QueueArn!;
    assert.match(dlqArn, new RegExp(`^arn:aws:sqs:[^:]+:[^:]+:lesson-dlq-${id}$`));

    const sourceAttributes = {
      VisibilityTimeout: '180',
      ReceiveMessageWaitTimeSeconds: '20',
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: '3' }),
    };
    const source = await cli.ok<QueueUrlOutput>([
      'create-queue',
      '--queue-name',
      sourceName,
      '--attributes',
      JSON.stringify(sourceAttributes),
    ]);
    const url = source.QueueUrl;
    leftovers.push(url);
    assert.ok(url.endsWith(`/${sourceName}`), `QueueUrl ${url}`);
    await cli.fails(
      [
        'create-queue',
        '--queue-name',
        sourceName,
        '--attributes',
        JSON.stringify({ ...sourceAttributes, VisibilityTimeout: '181' }),
      ],
      'QueueAlreadyExists',
    );

    const lookup = await cli.call(['get-queue-url', '--queue-name', sourceName, '--debug']);
    assert.equal(protocolOf(lookup.stderr), expectedProtocol, 'wire protocol of this CLI');
    assert.equal(lookup.code, 0, 'get-queue-url');
    assert.equal((JSON.parse(lookup.stdout) as QueueUrlOutput).QueueUrl, url);

    const { Attributes: srcAttrs } = await cli.ok<AttributesOutput>([
      'get-queue-attributes',
      '--queue-url',
      url,
      '--attribute-names',
      'All',
    ]);
    assert.equal(srcAttrs.VisibilityTimeout, '180');
    assert.equal(srcAttrs.ReceiveMessageWaitTimeSeconds, '20');
    assert.equal(srcAttrs.DelaySeconds, '0');
    assert.ok(srcAttrs.QueueArn?.endsWith(`:${sourceName}`), `QueueArn ${srcAttrs.QueueArn}`);
    // SQS normalises the policy: maxReceiveCount comes back as a JSON number.
    assert.deepEqual(JSON.parse(srcAttrs.RedrivePolicy ?? '{}'), {
      deadLetterTargetArn: dlqArn,
      maxReceiveCount: 3,
    });

    const body = 'order 1001\r\nline2 &amp; & < > " \' caf\u00e9 \u65e5\u672c \u{1f680}';
    const attributes: Record<string, AttributeValue> = {
      customer: { DataType: 'String', StringValue: 'a & <b>' },
      quantity: { DataType: 'Number', StringValue: '7' },
      doc: { DataType: 'String.json', StringValue: '{"x":1}' },
    };
    const first = await cli.ok<SendOutput>([
      'send-message',
      '--queue-url',
      url,
      '--message-body',
      body,
      '--message-attributes',
      JSON.stringify(attributes),
    ]);
    assert.equal(first.MD5OfMessageBody, md5Hex(body));
    assert.equal(first.MD5OfMessageAttributes, md5OfAttributes(attributes));
    await cli.ok<SendOutput>([
      'send-message',
      '--queue-url',
      url,
      '--message-body',
      'order 1002 (delayed)',
      '--delay-seconds',
      '60',
    ]);

    // The queue's 20 s long poll answers at once: a message is waiting.
    const received = await cli.ok<ReceiveOutput>([
      'receive-message',
      '--queue-url',
      url,
      '--attribute-names',
      'All',
      '--message-attribute-names',
      'All',
      '--max-number-of-messages',
      '10',
    ]);
    assert.equal(received.Messages?.length, 1, 'only the undelayed message is received');
    const message = received.Messages[0]!;
    assert.equal(message.MessageId, first.MessageId);
    assert.equal(message.Body, body, 'body comes back byte-identical');
    assert.equal(message.MD5OfBody, md5Hex(body));
    assert.deepEqual(message.MessageAttributes, attributes);
    assert.equal(message.MD5OfMessageAttributes, md5OfAttributes(attributes));
    assert.equal(message.Attributes?.ApproximateReceiveCount, '1');
    assert.match(message.Attributes?.SentTimestamp ?? '', /^\d{13}$/);

    await cli.ok([
      'change-message-visibility',
      '--queue-url',
      url,
      '--receipt-handle',
      message.ReceiptHandle,
      '--visibility-timeout',
      '300',
    ]);
    await cli.ok(['delete-message', '--queue-url', url, '--receipt-handle', message.ReceiptHandle]);
    await cli.fails(
      ['delete-message', '--queue-url', url, '--receipt-handle', 'not-a-receipt-handle'],
      'ReceiptHandleIsInvalid',
    );

    const counts = await cli.ok<AttributesOutput>([
      'get-queue-attributes',
      '--queue-url',
      url,
      '--attribute-names',
      'ApproximateNumberOfMessages',
      'ApproximateNumberOfMessagesNotVisible',
      'ApproximateNumberOfMessagesDelayed',
    ]);
    assert.deepEqual(counts.Attributes, {
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
      ApproximateNumberOfMessagesDelayed: '1',
    });

    await cli.ok(['purge-queue', '--queue-url', url]);
    for (const queueUrl of leftovers.splice(0)) await cli.ok(['delete-queue', '--queue-url', queueUrl]);
  } finally {
    // Queues are left here only when a check above failed.
    for (const queueUrl of leftovers) await cli.call(['delete-queue', '--queue-url', queueUrl]);
  }
  await cli.fails(['get-queue-url', '--queue-name', sourceName], NON_EXISTENT_QUEUE);
}

interface FifoSendOutput extends SendOutput {
  SequenceNumber: string;
}
interface BatchSendOutput {
  Successful: Array<{ Id: string; MessageId: string; SequenceNumber: string }>;
  Failed?: Array<{ Id: string; Code: string }>;
}

/**
 * A FIFO queue from the CLI: content-based deduplication, sequence numbers on single and batch sends,
 * group order on receive, and the group blocked while its messages are in flight.
 */
export async function fifoWalkthrough(cli: AwsCli): Promise<void> {
  const name = `lesson-orders-${runId()}.fifo`;
  const { QueueUrl: url } = await cli.ok<QueueUrlOutput>([
    'create-queue',
    '--queue-name',
    name,
    '--attributes',
    'FifoQueue=true,ContentBasedDeduplication=true',
  ]);
  try {
    await cli.fails(['send-message', '--queue-url', url, '--message-body', 'no group'], 'MissingParameter');
    const send = (body: string) =>
      cli.ok<FifoSendOutput>([
        'send-message',
        '--queue-url',
        url,
        '--message-body',
        body,
        '--message-group-id',
        'customer-1',
      ]);
    const first = await send('order placed');
    assert.match(first.SequenceNumber, /^\d{20}$/);
    const duplicate = await send('order placed');
    assert.equal(duplicate.MessageId, first.MessageId, 'a duplicate within 5 minutes keeps its MessageId');
    assert.equal(duplicate.SequenceNumber, first.SequenceNumber);
    const batch = await cli.ok<BatchSendOutput>([
      'send-message-batch',
      '--queue-url',
      url,
      '--entries',
      JSON.stringify([
        { Id: 'paid', MessageBody: 'order paid', MessageGroupId: 'customer-1' },
        { Id: 'shipped', MessageBody: 'order shipped', MessageGroupId: 'customer-1' },
      ]),
    ]);
    const numbers = [first.SequenceNumber, ...batch.Successful.map((entry) => entry.SequenceNumber)];
    assert.deepEqual(
      numbers.map(BigInt),
      numbers.map(BigInt).sort((a, b) => (a < b ? -1 : 1)),
    );
    assert.equal(new Set(numbers).size, 3, 'sequence numbers are distinct');

    const received = await cli.ok<ReceiveOutput>([
      'receive-message',
      '--queue-url',
      url,
      '--max-number-of-messages',
      '10',
      '--attribute-names',
      'All',
    ]);
    const messages = received.Messages ?? [];
    assert.deepEqual(
      messages.map((message) => message.Body),
      ['order placed', 'order paid', 'order shipped'],
    );
    assert.equal(messages[0]?.Attributes?.MessageGroupId, 'customer-1');
    assert.equal(messages[0]?.Attributes?.SequenceNumber, first.SequenceNumber);
    assert.match(messages[0]?.Attributes?.MessageDeduplicationId ?? '', /^[0-9a-f]{64}$/);
    const blocked = await cli.ok<ReceiveOutput>(['receive-message', '--queue-url', url]);
    assert.equal(blocked.Messages, undefined, 'the group is in flight');
  } finally {
    await cli.call(['delete-queue', '--queue-url', url]);
  }
}
