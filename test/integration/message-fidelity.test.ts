import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type MessageAttributeValue,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  type ReceiveMessageCommandInput,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  SendMessageCommand,
  type SendMessageCommandInput,
  type SQSClient,
  SQSServiceException,
} from '@aws-sdk/client-sqs';
import { type TestServer, useServer } from '../helpers/server.ts';
import { sqsClient } from '../helpers/sqs-client.ts';
import { availability, hasBoto3, PYTHONS, run } from './clients/clients.ts';

/**
 * The message behaviours of issue 24 (AWS fidelity), each over both wire protocols with a real client:
 * @aws-sdk/client-sqs (AWS JSON 1.0) here, Debian's boto3 1.26 (Query) in clients/message_fidelity.py.
 * Each scenario answers in one shape on both sides, and one expectation per scenario is what AWS was
 * recorded answering. Time is never waited for: a handle lapses by a receive or change with timeout 0.
 */

const MESSAGE_FIDELITY_PY = new URL('./clients/message_fidelity.py', import.meta.url).pathname;
const TRACE = 'Root=1-3152b799-8954dae64eda91bc9a23a7e8;Parent=7fa8c0f79203be72;Sampled=1';
const INVALID_CHARACTERS =
  'Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF';

type Answer = 'ok' | { code: string | undefined; message: string };
type Observation = unknown;

const EXPECTED: Record<string, Observation> = {
  superseded_delete: { deleteAnswer: 'ok', messagesLeft: 0 },
  lapsed_or_superseded_change: {
    lapsedChange: 'ok',
    receivedAfterLapsedChange: 0,
    batch: { successful: ['old'], failed: [] },
    receivedAfterBatch: 1,
    afterDelete: {
      code: 'InvalidParameterValue',
      message:
        'Value <handle> for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.',
    },
  },
  fifo_expired_delete: {
    lapsedDelete: {
      code: 'InvalidParameterValue',
      message:
        'Value <handle> for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.',
    },
    inFlightDelete: 'ok',
  },
  fifo_batch_missing_group: {
    code: 'InvalidParameterValue',
    message: 'The request must contain the parameter MessageGroupId.',
  },
  fifo_batch_missing_deduplication: {
    code: 'InvalidParameterValue',
    message:
      'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly',
  },
  batch_sizes: {
    entry: {
      successful: ['small'],
      failed: [
        {
          Id: 'big',
          Code: 'InvalidParameterValue',
          SenderFault: true,
          Message:
            'One or more parameters cannot be validated. Reason: Message must be shorter than 1024 bytes.',
        },
      ],
    },
    tooLong: {
      code: 'AWS.SimpleQueueService.BatchRequestTooLong',
      message: 'Batch requests cannot be longer than 1048576 bytes. You have sent 1048577 bytes.',
    },
  },
  attribute_name_filters: { 'Hel.*': ['Hello', 'Help.Me'], '*': ['General', 'Hello', 'Help.Me'] },
  error_texts: {
    fifoDelay: {
      code: 'InvalidParameterValue',
      message:
        'Value 2 for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.',
    },
    standardDeduplicationId: {
      code: 'InvalidParameterValue',
      message:
        'Value d for parameter MessageDeduplicationId is invalid. Reason: The request include parameter that is not valid for this queue type.',
    },
    emptyString: {
      code: 'InvalidParameterValue',
      message: "Message (user) attribute 'ErrorDetails' must contain a non-empty value of type 'String'.",
    },
  },
  trace_header: { 'from header': TRACE, 'own attribute': 'Root=1-own' },
  attribute_characters: {
    internationalName: ['attr.1øßä'],
    controlCharacters: {
      code: 'InvalidParameterValue',
      message: `Message (user) attribute 'attr1': ${INVALID_CHARACTERS}`,
    },
  },
  fifo_first_in_flight: { first: ['a1', 'a2', 'a3'], afterFirstLapses: ['a1'] },
  fifo_zero_delay: { received: 0, delayed: '1' },
  purge_forgets_deduplication: { sameMessageIdAfterPurge: false },
  // A batch answer leaves out an empty list (recorded for SendMessageBatch's Failed; the rest follow it).
  batch_answers: {
    sent: { successful: 2, failed: null },
    refused: { successful: null, failed: 1 },
    changed: { successful: 2, failed: null },
    changeRefused: { successful: null, failed: 1 },
    deleted: { successful: 2, failed: null },
    deleteRefused: { successful: null, failed: 1 },
  },
};

/** A batch answer's lists by length, null for a list the answer left out. */
const listLengths = (output: { Successful?: unknown[]; Failed?: unknown[] }) => ({
  successful: output.Successful?.length ?? null,
  failed: output.Failed?.length ?? null,
});

/** What a call that must fail answered, in the shape message_fidelity.py gives: the legacy code SDKs expose. */
async function answerOf(call: Promise<unknown>, handle?: string): Promise<Answer> {
  try {
    await call;
    return 'ok';
  } catch (error) {
    if (!(error instanceof SQSServiceException)) throw error;
    const code = (error as SQSServiceException & { Code?: string }).Code ?? error.name;
    return { code, message: handle ? error.message.replaceAll(handle, '<handle>') : error.message };
  }
}

/** The same scenarios as clients/message_fidelity.py, through the JS SDK. */
class JsonScenarios {
  private count = 0;
  private readonly prefix = `fid-json-${randomBytes(4).toString('hex')}`;

  constructor(
    private readonly sqs: SQSClient,
    private readonly traced: SQSClient,
  ) {}

  private async queue(attributes: Record<string, string> = {}, fifo = false): Promise<string> {
    const name = `${this.prefix}-${++this.count}${fifo ? '.fifo' : ''}`;
    const Attributes = fifo ? { ...attributes, FifoQueue: 'true' } : attributes;
    return (await this.sqs.send(new CreateQueueCommand({ QueueName: name, Attributes }))).QueueUrl!;
  }

  private async receive(QueueUrl: string, extra: Partial<ReceiveMessageCommandInput> = {}) {
    const output = await this.sqs.send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, ...extra }),
    );
    return output.Messages ?? [];
  }

  private async handle(QueueUrl: string, VisibilityTimeout: number): Promise<string> {
    return (await this.receive(QueueUrl, { VisibilityTimeout }))[0]!.ReceiptHandle!;
  }

  private change(QueueUrl: string, ReceiptHandle: string, VisibilityTimeout: number) {
    return this.sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl, ReceiptHandle, VisibilityTimeout }));
  }

  private send(input: SendMessageCommandInput) {
    return this.sqs.send(new SendMessageCommand(input));
  }

  private batch(QueueUrl: string, Entries: SendMessageBatchRequestEntry[]) {
    return this.sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries }));
  }

  private async attributes(QueueUrl: string) {
    return (await this.sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] })))
      .Attributes!;
  }

  async superseded_delete() {
    const url = await this.queue();
    await this.send({ QueueUrl: url, MessageBody: 'a' });
    const first = await this.handle(url, 0);
    await this.handle(url, 30);
    const deleteAnswer = await answerOf(
      this.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: first })),
      first,
    );
    const left = await this.attributes(url);
    return {
      deleteAnswer,
      messagesLeft:
        Number(left.ApproximateNumberOfMessages) + Number(left.ApproximateNumberOfMessagesNotVisible),
    };
  }

  async lapsed_or_superseded_change() {
    const url = await this.queue();
    await this.send({ QueueUrl: url, MessageBody: 'a' });
    const first = await this.handle(url, 0);
    const lapsedChange = await answerOf(this.change(url, first, 60), first);
    const receivedAfterLapsedChange = (await this.receive(url)).length;
    await answerOf(this.change(url, first, 0), first);
    await this.handle(url, 30);
    const batch = await this.sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: url,
        Entries: [{ Id: 'old', ReceiptHandle: first, VisibilityTimeout: 0 }],
      }),
    );
    const again = await this.receive(url, { VisibilityTimeout: 30 });
    for (const message of again)
      await this.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: message.ReceiptHandle }));
    return {
      lapsedChange,
      receivedAfterLapsedChange,
      batch: {
        successful: (batch.Successful ?? []).map((entry) => entry.Id),
        failed: (batch.Failed ?? []).map((entry) => entry.Id),
      },
      receivedAfterBatch: again.length,
      afterDelete: await answerOf(this.change(url, first, 10), first),
    };
  }

  async fifo_expired_delete() {
    const url = await this.queue({ ContentBasedDeduplication: 'true' }, true);
    await this.send({ QueueUrl: url, MessageBody: 'm', MessageGroupId: 'g' });
    const lapsed = await this.handle(url, 0);
    const lapsedDelete = await answerOf(
      this.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: lapsed })),
      lapsed,
    );
    const current = await this.handle(url, 30);
    return {
      lapsedDelete,
      inFlightDelete: await answerOf(
        this.sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: current })),
      ),
    };
  }

  async fifo_batch_missing_group() {
    const url = await this.queue({}, true);
    return answerOf(
      this.batch(url, [
        { Id: 'a', MessageBody: 'a', MessageGroupId: 'g', MessageDeduplicationId: 'd1' },
        { Id: 'b', MessageBody: 'b', MessageDeduplicationId: 'd2' },
      ]),
    );
  }

  async fifo_batch_missing_deduplication() {
    const url = await this.queue({}, true);
    return answerOf(
      this.batch(url, [
        { Id: 'a', MessageBody: 'a', MessageGroupId: 'g', MessageDeduplicationId: 'd1' },
        { Id: 'b', MessageBody: 'b', MessageGroupId: 'g' },
      ]),
    );
  }

  async batch_sizes() {
    const url = await this.queue({ MaximumMessageSize: '1024' });
    const result = await this.batch(url, [
      { Id: 'big', MessageBody: 'x'.repeat(1025) },
      { Id: 'small', MessageBody: 'y' },
    ]);
    return {
      entry: {
        successful: (result.Successful ?? []).map((entry) => entry.Id),
        failed: (result.Failed ?? []).map(({ Id, Code, SenderFault, Message }) => ({
          Id,
          Code,
          SenderFault,
          Message,
        })),
      },
      tooLong: await answerOf(
        this.batch(url, [
          { Id: 'a', MessageBody: 'x'.repeat(524_288) },
          { Id: 'b', MessageBody: 'x'.repeat(524_289) },
        ]),
      ),
    };
  }

  async attribute_name_filters() {
    const url = await this.queue();
    const string = (StringValue: string): MessageAttributeValue => ({ DataType: 'String', StringValue });
    await this.send({
      QueueUrl: url,
      MessageBody: 'msg',
      MessageAttributes: { 'Help.Me': string('Me'), Hello: string('There'), General: string('Kenobi') },
    });
    const selected: Record<string, string[]> = {};
    for (const pattern of ['Hel.*', '*']) {
      const [message] = await this.receive(url, { VisibilityTimeout: 0, MessageAttributeNames: [pattern] });
      selected[pattern] = Object.keys(message!.MessageAttributes ?? {}).sort();
    }
    return selected;
  }

  async error_texts() {
    const fifo = await this.queue({ ContentBasedDeduplication: 'true' }, true);
    const standard = await this.queue();
    return {
      fifoDelay: await answerOf(
        this.send({ QueueUrl: fifo, MessageBody: 'x', MessageGroupId: 'g', DelaySeconds: 2 }),
      ),
      standardDeduplicationId: await answerOf(
        this.send({ QueueUrl: standard, MessageBody: 'x', MessageDeduplicationId: 'd' }),
      ),
      emptyString: await answerOf(
        this.send({
          QueueUrl: standard,
          MessageBody: 'x',
          MessageAttributes: { ErrorDetails: { DataType: 'String', StringValue: '' } },
        }),
      ),
    };
  }

  async trace_header() {
    const url = await this.queue();
    await this.traced.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'from header' }));
    await this.traced.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: 'own attribute',
        MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: 'Root=1-own' } },
      }),
    );
    const messages = await this.receive(url, { MessageSystemAttributeNames: ['AWSTraceHeader'] });
    return Object.fromEntries(messages.map((m) => [m.Body, m.Attributes?.AWSTraceHeader]));
  }

  async attribute_characters() {
    const url = await this.queue();
    await this.send({
      QueueUrl: url,
      MessageBody: 'x',
      MessageAttributes: { 'attr.1øßä': { DataType: 'String', StringValue: 'Valida' } },
    });
    const [message] = await this.receive(url, { MessageAttributeNames: ['All'] });
    return {
      internationalName: Object.keys(message!.MessageAttributes ?? {}).sort(),
      controlCharacters: await answerOf(
        this.send({
          QueueUrl: url,
          MessageBody: 'x',
          MessageAttributes: { attr1: { DataType: 'String', StringValue: 'Invalid-\b,\v' } },
        }),
      ),
    };
  }

  async fifo_first_in_flight() {
    const url = await this.queue({ ContentBasedDeduplication: 'true', VisibilityTimeout: '30' }, true);
    for (const body of ['a1', 'a2', 'a3'])
      await this.send({ QueueUrl: url, MessageBody: body, MessageGroupId: 'a' });
    const first = await this.receive(url);
    // a2's timeout is extended; a1's own timeout lapses (ended at once).
    await this.change(url, first[1]!.ReceiptHandle!, 60);
    await this.change(url, first[0]!.ReceiptHandle!, 0);
    return {
      first: first.map((m) => m.Body),
      afterFirstLapses: (await this.receive(url)).map((m) => m.Body),
    };
  }

  async fifo_zero_delay() {
    const url = await this.queue({ ContentBasedDeduplication: 'true', DelaySeconds: '60' }, true);
    await this.send({ QueueUrl: url, MessageBody: 'zero', MessageGroupId: 'g', DelaySeconds: 0 });
    return {
      received: (await this.receive(url)).length,
      delayed: (await this.attributes(url)).ApproximateNumberOfMessagesDelayed,
    };
  }

  async purge_forgets_deduplication() {
    const url = await this.queue({}, true);
    const send = async (body: string) =>
      (
        await this.send({
          QueueUrl: url,
          MessageBody: body,
          MessageGroupId: 'g',
          MessageDeduplicationId: 'd',
        })
      ).MessageId;
    const first = await send('message-1');
    await this.sqs.send(new PurgeQueueCommand({ QueueUrl: url }));
    return { sameMessageIdAfterPurge: (await send('message-2')) === first };
  }

  async batch_answers() {
    const url = await this.queue({ MaximumMessageSize: '1024' });
    const sent = await this.batch(url, [
      { Id: 'a', MessageBody: 'a' },
      { Id: 'b', MessageBody: 'b' },
    ]);
    const refused = await this.batch(url, [{ Id: 'big', MessageBody: 'x'.repeat(1025) }]);
    const received = await this.receive(url, { VisibilityTimeout: 30 });
    const handles = received.map((message, index) => ({
      Id: `m${index}`,
      ReceiptHandle: message.ReceiptHandle!,
    }));
    const unknown = [{ Id: 'unknown', ReceiptHandle: 'not-a-receipt-handle' }];
    const change = (Entries: Array<{ Id: string; ReceiptHandle: string }>) =>
      this.sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: url,
          Entries: Entries.map((entry) => ({ ...entry, VisibilityTimeout: 30 })),
        }),
      );
    const remove = (Entries: Array<{ Id: string; ReceiptHandle: string }>) =>
      this.sqs.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries }));
    return {
      sent: listLengths(sent),
      refused: listLengths(refused),
      changed: listLengths(await change(handles)),
      changeRefused: listLengths(await change(unknown)),
      deleted: listLengths(await remove(handles)),
      deleteRefused: listLengths(await remove(unknown)),
    };
  }
}

type ScenarioName = Exclude<keyof JsonScenarios, 'constructor'>;

const client = (endpoint: string) => sqsClient(endpoint);

const debianBoto3 = PYTHONS.find((python) => python.protocol === 'query')!;
const query = availability(debianBoto3, debianBoto3.bin !== undefined && hasBoto3(debianBoto3.bin));

describe('message behaviours as on AWS (issue 24)', () => {
  let server: TestServer;
  let sqs: SQSClient;
  let traced: SQSClient;
  let json: JsonScenarios;
  let queryResults: Promise<Record<string, Observation>>;

  before(async () => {
    server = await useServer();
    sqs = client(server.endpoint);
    traced = client(server.endpoint);
    // What the X-Ray SDK does: the trace header on the request, not in the message.
    traced.middlewareStack.add(
      (next) => (args) => {
        (args.request as { headers: Record<string, string> }).headers['x-amzn-trace-id'] = TRACE;
        return next(args);
      },
      { step: 'build', name: 'traceHeader' },
    );
    json = new JsonScenarios(sqs, traced);
    queryResults = query.skip
      ? Promise.resolve({})
      : run(debianBoto3.bin!, [MESSAGE_FIDELITY_PY, server.endpoint], 120_000).then((result) => {
          const output = `${result.stdout}${result.stderr}`;
          assert.match(output, /^PROTOCOL=query$/m, `boto3 did not speak Query:\n${output}`);
          const line = result.stdout.split('\n').find((l) => l.startsWith('RESULT '));
          assert.ok(line && result.code === 0, `message_fidelity.py failed:\n${output}`);
          return JSON.parse(line.slice('RESULT '.length)) as Record<string, Observation>;
        });
    // Settled here so a failure is reported by each Query test, not as an unhandled rejection.
    queryResults.catch(() => {});
  });
  after(async () => {
    sqs?.destroy();
    traced?.destroy();
    await server?.close();
  });

  for (const [name, expected] of Object.entries(EXPECTED) as Array<[ScenarioName, Observation]>) {
    describe(name.replaceAll('_', ' '), () => {
      test('JSON: @aws-sdk/client-sqs', async () => {
        assert.deepEqual(await json[name](), expected);
      });
      test(`Query: ${debianBoto3.label}`, { skip: query.skip, timeout: 120_000 }, async () => {
        assert.ok(!query.missing, query.missing);
        assert.deepEqual((await queryResults)[name], expected);
      });
    });
  }
});
