import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ErrorCode, errors, SqsError } from '../../packages/server/src/core/errors.ts';
import { checkJsonInput } from '../../packages/server/src/protocol/json.ts';
import { OPERATIONS, type StructureShape } from '../../packages/server/src/protocol/model.ts';
import {
  decodeQueryRequest,
  decodeStructure,
  queryParams,
} from '../../packages/server/src/protocol/query.ts';
import { escapeXml, renderQueryError, renderQueryResponse } from '../../packages/server/src/protocol/xml.ts';

const NS = 'http://queue.amazonaws.com/doc/2012-11-05/';
const QURL = 'http://127.0.0.1:48711/000000000000/q';
const QURL_ENC = 'http%3A%2F%2F127.0.0.1%3A48711%2F000000000000%2Fq';

const decode = (body: string, path = '/') => decodeQueryRequest(new URLSearchParams(body), path);

/** Asserts that fn throws an SqsError with this code and a message containing every `parts`. */
const throwsSqs = (fn: () => unknown, code: ErrorCode, ...parts: string[]) =>
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof SqsError, `expected SqsError, got ${String(err)}`);
    assert.equal(err.code, code);
    for (const part of parts) assert.ok(err.message.includes(part), `"${err.message}" lacks "${part}"`);
    return true;
  });

const wrap = (action: string, result: string | null, requestId = 'req-1') =>
  `<?xml version="1.0"?><${action}Response xmlns="${NS}">` +
  `${result ?? ''}<ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></${action}Response>`;

/** Just enough XML unescaping to read back what escapeXml wrote. */
const unescapeXml = (text: string) =>
  text.replace(/&(amp|lt|gt|quot|#xD);/g, (_, name: string) => {
    const map: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', '#xD': '\r' };
    return map[name] ?? '';
  });

describe('model', () => {
  it('covers all 23 SQS operations', () => {
    assert.deepEqual(Object.keys(OPERATIONS).sort(), [
      'AddPermission',
      'CancelMessageMoveTask',
      'ChangeMessageVisibility',
      'ChangeMessageVisibilityBatch',
      'CreateQueue',
      'DeleteMessage',
      'DeleteMessageBatch',
      'DeleteQueue',
      'GetQueueAttributes',
      'GetQueueUrl',
      'ListDeadLetterSourceQueues',
      'ListMessageMoveTasks',
      'ListQueueTags',
      'ListQueues',
      'PurgeQueue',
      'ReceiveMessage',
      'RemovePermission',
      'SendMessage',
      'SendMessageBatch',
      'SetQueueAttributes',
      'StartMessageMoveTask',
      'TagQueue',
      'UntagQueue',
    ]);
    assert.equal(OPERATIONS.DeleteMessage.output, undefined);
    assert.equal(OPERATIONS.ReceiveMessage.input.members.MaxNumberOfMessages?.shape.type, 'integer');
  });
});

describe('decodeQueryRequest: fixtures captured from Debian boto3 1.26', () => {
  it('SendMessage with message and system attributes', () => {
    const body =
      `Action=SendMessage&Version=2012-11-05&QueueUrl=${QURL_ENC}` +
      '&MessageBody=line1%0D%0Aline2+%26+%3Ctag%3E+%22quoted%22+%27apos%27+%09+tab+%C3%A9+%F0%9F%98%80' +
      '&DelaySeconds=5&MessageAttribute.1.Name=s&MessageAttribute.1.Value.DataType=String' +
      '&MessageAttribute.1.Value.StringValue=a%0D%0Ab%26%3C%3E&MessageAttribute.2.Name=b' +
      '&MessageAttribute.2.Value.DataType=Binary&MessageAttribute.2.Value.BinaryValue=AAEC%2Fw%3D%3D' +
      '&MessageAttribute.3.Name=n&MessageAttribute.3.Value.DataType=Number' +
      '&MessageAttribute.3.Value.StringValue=42&MessageSystemAttribute.1.Name=AWSTraceHeader' +
      '&MessageSystemAttribute.1.Value.DataType=String&MessageSystemAttribute.1.Value.StringValue=Root%3D1-abc' +
      '&MessageDeduplicationId=d1&MessageGroupId=g1';
    assert.deepEqual(decode(body), {
      action: 'SendMessage',
      input: {
        QueueUrl: QURL,
        MessageBody: 'line1\r\nline2 & <tag> "quoted" \'apos\' \t tab \u00e9 \u{1F600}',
        DelaySeconds: 5,
        MessageAttributes: {
          s: { StringValue: 'a\r\nb&<>', DataType: 'String' },
          b: { BinaryValue: 'AAEC/w==', DataType: 'Binary' },
          n: { StringValue: '42', DataType: 'Number' },
        },
        MessageSystemAttributes: { AWSTraceHeader: { StringValue: 'Root=1-abc', DataType: 'String' } },
        MessageDeduplicationId: 'd1',
        MessageGroupId: 'g1',
      },
    });
  });

  it('SendMessageBatch with nested message attributes', () => {
    const body =
      `Action=SendMessageBatch&Version=2012-11-05&QueueUrl=${QURL_ENC}` +
      '&SendMessageBatchRequestEntry.1.Id=e1&SendMessageBatchRequestEntry.1.MessageBody=one' +
      '&SendMessageBatchRequestEntry.2.Id=e2&SendMessageBatchRequestEntry.2.MessageBody=two' +
      '&SendMessageBatchRequestEntry.2.DelaySeconds=3&SendMessageBatchRequestEntry.2.MessageAttribute.1.Name=k' +
      '&SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.DataType=String' +
      '&SendMessageBatchRequestEntry.2.MessageAttribute.1.Value.StringValue=v';
    assert.deepEqual(decode(body).input, {
      QueueUrl: QURL,
      Entries: [
        { Id: 'e1', MessageBody: 'one' },
        {
          Id: 'e2',
          MessageBody: 'two',
          DelaySeconds: 3,
          MessageAttributes: { k: { StringValue: 'v', DataType: 'String' } },
        },
      ],
    });
  });

  it('ReceiveMessage with AttributeName.N and MessageAttributeName.N', () => {
    const body =
      `Action=ReceiveMessage&Version=2012-11-05&QueueUrl=${QURL_ENC}&AttributeName.1=All` +
      '&MessageAttributeName.1=All&MaxNumberOfMessages=10&VisibilityTimeout=7&WaitTimeSeconds=1' +
      '&ReceiveRequestAttemptId=att';
    assert.deepEqual(decode(body).input, {
      QueueUrl: QURL,
      AttributeNames: ['All'],
      MessageAttributeNames: ['All'],
      MaxNumberOfMessages: 10,
      VisibilityTimeout: 7,
      WaitTimeSeconds: 1,
      ReceiveRequestAttemptId: 'att',
    });
  });

  it('CreateQueue with Attribute.N and Tag.N (JSON member `tags`)', () => {
    const body =
      'Action=CreateQueue&Version=2012-11-05&QueueName=q&Attribute.1.Name=VisibilityTimeout' +
      '&Attribute.1.Value=60&Attribute.2.Name=FifoQueue&Attribute.2.Value=false&Tag.1.Key=team' +
      '&Tag.1.Value=a&Tag.2.Key=env&Tag.2.Value=dev';
    assert.deepEqual(decode(body).input, {
      QueueName: 'q',
      Attributes: { VisibilityTimeout: '60', FifoQueue: 'false' },
      tags: { team: 'a', env: 'dev' },
    });
  });

  it('an empty list, which botocore sends as the bare member name', () => {
    const body = `Action=GetQueueAttributes&Version=2012-11-05&QueueUrl=${QURL_ENC}&AttributeNames=`;
    assert.deepEqual(decode(body).input, { QueueUrl: QURL, AttributeNames: [] });
  });
});

describe('decodeQueryRequest: flattened forms', () => {
  it('DeleteMessageBatchRequestEntry.N and ChangeMessageVisibilityBatchRequestEntry.N', () => {
    assert.deepEqual(
      decode(
        'Action=DeleteMessageBatch&QueueUrl=q&DeleteMessageBatchRequestEntry.1.Id=a' +
          '&DeleteMessageBatchRequestEntry.1.ReceiptHandle=r1&DeleteMessageBatchRequestEntry.2.Id=b' +
          '&DeleteMessageBatchRequestEntry.2.ReceiptHandle=r%2B2',
      ).input,
      {
        QueueUrl: 'q',
        Entries: [
          { Id: 'a', ReceiptHandle: 'r1' },
          { Id: 'b', ReceiptHandle: 'r+2' },
        ],
      },
    );
    assert.deepEqual(
      decode(
        'Action=ChangeMessageVisibilityBatch&QueueUrl=q&ChangeMessageVisibilityBatchRequestEntry.1.Id=a' +
          '&ChangeMessageVisibilityBatchRequestEntry.1.ReceiptHandle=r1' +
          '&ChangeMessageVisibilityBatchRequestEntry.1.VisibilityTimeout=0',
      ).input,
      { QueueUrl: 'q', Entries: [{ Id: 'a', ReceiptHandle: 'r1', VisibilityTimeout: 0 }] },
    );
  });

  it('orders items by numeric index, not by param order or string order', () => {
    const entries = [10, 2, 1].map((n) => `TagKey.${n}=k${n}`).join('&');
    assert.deepEqual(decode(`Action=UntagQueue&QueueUrl=q&${entries}`).input, {
      QueueUrl: 'q',
      TagKeys: ['k1', 'k2', 'k10'],
    });
  });

  it('MessageSystemAttributeName.N next to AttributeName.N', () => {
    assert.deepEqual(
      decode('Action=ReceiveMessage&QueueUrl=q&AttributeName.1=All&MessageSystemAttributeName.1=SenderId')
        .input,
      { QueueUrl: 'q', AttributeNames: ['All'], MessageSystemAttributeNames: ['SenderId'] },
    );
  });

  it('Tag.N.Key/Value on TagQueue, AWSAccountId.N and ActionName.N on AddPermission', () => {
    assert.deepEqual(
      decode('Action=TagQueue&QueueUrl=q&Tag.1.Key=a&Tag.1.Value=1&Tag.2.Key=b&Tag.2.Value=').input,
      {
        QueueUrl: 'q',
        Tags: { a: '1', b: '' },
      },
    );
    assert.deepEqual(
      decode(
        'Action=AddPermission&QueueUrl=q&Label=l&AWSAccountId.1=111122223333&AWSAccountId.2=444455556666' +
          '&ActionName.1=SendMessage&ActionName.2=ReceiveMessage',
      ).input,
      {
        QueueUrl: 'q',
        Label: 'l',
        AWSAccountIds: ['111122223333', '444455556666'],
        Actions: ['SendMessage', 'ReceiveMessage'],
      },
    );
  });

  it('the newer operations', () => {
    assert.deepEqual(
      decode('Action=StartMessageMoveTask&SourceArn=arn%3Aa&MaxNumberOfMessagesPerSecond=10').input,
      { SourceArn: 'arn:a', MaxNumberOfMessagesPerSecond: 10 },
    );
    assert.deepEqual(decode('Action=ListMessageMoveTasks&SourceArn=arn%3Aa&MaxResults=2').input, {
      SourceArn: 'arn:a',
      MaxResults: 2,
    });
    assert.deepEqual(decode('Action=CancelMessageMoveTask&TaskHandle=t').input, { TaskHandle: 't' });
  });

  it('stays linear on a hostile number of entries', () => {
    // A per-member URLSearchParams.get made this quadratic: 50,000 entries took 80 s.
    const parts = ['Action=SendMessageBatch', 'QueueUrl=q'];
    for (let i = 1; i <= 20000; i++) parts.push(`SendMessageBatchRequestEntry.${i}.Id=a${i}`);
    const started = performance.now();
    const entries = decode(parts.join('&')).input.Entries;
    assert.ok(Array.isArray(entries) && entries.length === 20000);
    assert.ok(performance.now() - started < 3000, `took ${performance.now() - started} ms`);
  });

  it('ignores params the operation does not have (auth, Version, typos)', () => {
    assert.deepEqual(
      decode('Action=PurgeQueue&QueueUrl=q&Version=2012-11-05&AWSAccessKeyId=x&Foo.1=y').input,
      {
        QueueUrl: 'q',
      },
    );
  });

  it('keeps a map key named __proto__ as an ordinary entry', () => {
    const { input } = decode('Action=TagQueue&QueueUrl=q&Tag.1.Key=__proto__&Tag.1.Value=x');
    const tags = input.Tags as Record<string, unknown>;
    assert.ok(Object.hasOwn(tags, '__proto__'));
    assert.equal(Object.getPrototypeOf(tags), Object.prototype);
    const checked = checkJsonInput('TagQueue', JSON.parse('{"QueueUrl":"q","Tags":{"__proto__":"x"}}'));
    assert.ok(Object.hasOwn(checked.Tags as object, '__proto__'));
  });

  it('a map entry without its name is a MissingParameter naming it', () => {
    throwsSqs(
      () => decode('Action=SetQueueAttributes&QueueUrl=q&Attribute.1.Value=60'),
      'MissingParameter',
      'Attribute.1.Name',
    );
    throwsSqs(
      () => decode('Action=SendMessage&QueueUrl=q&MessageBody=b&MessageAttribute.1.Name=a'),
      'MissingParameter',
      'MessageAttribute.1.Value',
    );
  });
});

describe('decodeQueryRequest: action and queue path', () => {
  it('takes QueueUrl from a queue URL path when the param is absent', () => {
    assert.deepEqual(decode('Action=ReceiveMessage', '/000000000000/myqueue').input, {
      QueueUrl: '/000000000000/myqueue',
    });
    assert.equal(
      decode(`Action=DeleteQueue&QueueUrl=${QURL_ENC}`, '/000000000000/other').input.QueueUrl,
      QURL,
    );
    assert.deepEqual(decode('Action=ReceiveMessage', '/').input, {});
  });

  it('does not add QueueUrl to operations that have none', () => {
    assert.deepEqual(decode('Action=ListQueues', '/000000000000/myqueue').input, {});
  });

  it('a missing or empty Action is a MissingParameter', () => {
    throwsSqs(() => decode('QueueUrl=q'), 'MissingParameter', 'Action');
    throwsSqs(() => decode('Action=&QueueUrl=q'), 'MissingParameter', 'Action');
  });

  it('returns an unknown action as is, for the core to answer', () => {
    assert.deepEqual(decode('Action=DescribeEverything&QueueUrl=q', '/000000000000/q'), {
      action: 'DescribeEverything',
      input: {},
    });
  });
});

describe('decodeQueryRequest: scalar syntax', () => {
  it('refuses a non-integer integer, naming the parameter', () => {
    for (const bad of ['abc', '1.5', '', ' ', '1e3', '0x10', '99999999999999999999']) {
      throwsSqs(
        () => decode(`Action=ReceiveMessage&QueueUrl=q&MaxNumberOfMessages=${encodeURIComponent(bad)}`),
        'InvalidParameterValue',
        'MaxNumberOfMessages',
      );
    }
    throwsSqs(
      () =>
        decode(
          'Action=SendMessageBatch&QueueUrl=q&SendMessageBatchRequestEntry.1.Id=a&SendMessageBatchRequestEntry.1.DelaySeconds=x',
        ),
      'InvalidParameterValue',
      'SendMessageBatchRequestEntry.1.DelaySeconds',
    );
  });

  it('accepts signed and padded integers, leaving ranges to the core', () => {
    assert.equal(decode('Action=ChangeMessageVisibility&VisibilityTimeout=-5').input.VisibilityTimeout, -5);
    assert.equal(decode('Action=ChangeMessageVisibility&VisibilityTimeout=+07').input.VisibilityTimeout, 7);
  });

  it('booleans are true/false, anything else names the parameter', () => {
    // No SQS input has a boolean member, so a synthetic shape exercises the path.
    const shape: StructureShape = {
      type: 'structure',
      name: 'T',
      members: { Flag: { shape: { type: 'boolean' }, queryName: 'Flag', required: false } },
    };
    assert.deepEqual(decodeStructure(shape, new URLSearchParams('Flag=true')), { Flag: true });
    assert.deepEqual(decodeStructure(shape, new URLSearchParams('Flag=FALSE')), { Flag: false });
    throwsSqs(() => decodeStructure(shape, new URLSearchParams('Flag=yes')), 'InvalidParameterValue', 'Flag');
  });
});

describe('non-flattened lists and maps (none in SQS, supported for completeness)', () => {
  const shape: StructureShape = {
    type: 'structure',
    name: 'T',
    members: {
      Names: {
        shape: { type: 'list', member: { type: 'string' }, memberName: undefined, flattened: false },
        queryName: 'Names',
        required: false,
      },
      Pairs: {
        shape: {
          type: 'map',
          key: { type: 'string' },
          value: { type: 'integer' },
          keyName: 'key',
          valueName: 'value',
          flattened: false,
        },
        queryName: 'Pairs',
        required: false,
      },
    },
  };

  it('decodes `.member.N` and `.entry.N.key/value`', () => {
    const params = new URLSearchParams(
      'Names.member.2=b&Names.member.1=a&Pairs.entry.1.key=x&Pairs.entry.1.value=1',
    );
    assert.deepEqual(decodeStructure(shape, params), { Names: ['a', 'b'], Pairs: { x: 1 } });
    throwsSqs(
      () => decodeStructure(shape, new URLSearchParams('Pairs.entry.1.key=x&Pairs.entry.1.value=z')),
      'InvalidParameterValue',
      'Pairs.entry.1.value',
    );
  });
});

describe('checkJsonInput', () => {
  it('passes well-typed input and drops unknown members and nulls', () => {
    const input = {
      QueueUrl: 'q',
      Entries: [{ Id: 'a', MessageBody: 'b', DelaySeconds: 1, Extra: 1 }],
      Unknown: 'x',
      NotSet: null,
    };
    assert.deepEqual(checkJsonInput('SendMessageBatch', input), {
      QueueUrl: 'q',
      Entries: [{ Id: 'a', MessageBody: 'b', DelaySeconds: 1 }],
    });
    assert.deepEqual(
      checkJsonInput('SendMessage', {
        QueueUrl: 'q',
        MessageBody: 'b',
        MessageAttributes: { bin: { DataType: 'Binary', BinaryValue: 'AAEC/w==' } },
      }).MessageAttributes,
      { bin: { DataType: 'Binary', BinaryValue: 'AAEC/w==' } },
    );
  });

  it('refuses a string integer as real SQS does, naming the member', () => {
    throwsSqs(
      () => checkJsonInput('ReceiveMessage', { QueueUrl: 'q', MaxNumberOfMessages: 'abc' }),
      'SerializationError',
      'STRING_VALUE can not be converted to an Integer',
      'MaxNumberOfMessages',
    );
    throwsSqs(
      () => checkJsonInput('ReceiveMessage', { QueueUrl: 'q', MaxNumberOfMessages: '10' }),
      'SerializationError',
    );
  });

  it('refuses fractional and out-of-range integers', () => {
    throwsSqs(
      () => checkJsonInput('ReceiveMessage', { WaitTimeSeconds: 1.5 }),
      'SerializationError',
      'WaitTimeSeconds',
    );
    throwsSqs(
      () => checkJsonInput('ReceiveMessage', { WaitTimeSeconds: 2 ** 31 }),
      'SerializationError',
      'range',
    );
  });

  it('names nested members', () => {
    throwsSqs(
      () =>
        checkJsonInput('SendMessageBatch', {
          QueueUrl: 'q',
          Entries: [{ Id: 'a' }, { Id: 'b', DelaySeconds: true }],
        }),
      'SerializationError',
      'BOOLEAN_VALUE',
      '(at Entries[1].DelaySeconds)',
    );
    throwsSqs(
      () => checkJsonInput('SendMessage', { MessageAttributes: { a: { DataType: 5 } } }),
      'SerializationError',
      '(at MessageAttributes.a.DataType)',
    );
    throwsSqs(
      () => checkJsonInput('SetQueueAttributes', { Attributes: { DelaySeconds: 5 } }),
      'SerializationError',
    );
    throwsSqs(
      () => checkJsonInput('ReceiveMessage', { AttributeNames: 'All' }),
      'SerializationError',
      'STRING_VALUE can not be converted to a List (at AttributeNames)',
    );
    throwsSqs(() => checkJsonInput('ReceiveMessage', { QueueUrl: {} }), 'SerializationError', 'START_OBJECT');
  });

  it('refuses malformed base64 in blobs', () => {
    throwsSqs(
      () =>
        checkJsonInput('SendMessage', {
          MessageAttributes: { b: { DataType: 'Binary', BinaryValue: 'a b!' } },
        }),
      'SerializationError',
      '(at MessageAttributes.b.BinaryValue)',
    );
  });

  it('refuses a body that is not an object, and passes unknown actions through', () => {
    throwsSqs(() => checkJsonInput('SendMessage', []), 'SerializationError');
    throwsSqs(() => checkJsonInput('SendMessage', 'x'), 'SerializationError');
    assert.deepEqual(checkJsonInput('SendMessage', undefined), {});
    assert.deepEqual(checkJsonInput('Nope', { A: 1 }), { A: 1 });
  });
});

describe('renderQueryResponse', () => {
  it('ReceiveMessage: repeated Message, Attribute and MessageAttribute elements', () => {
    const xml = renderQueryResponse(
      'ReceiveMessage',
      {
        Messages: [
          {
            MessageId: 'm1',
            ReceiptHandle: 'rh',
            MD5OfBody: 'md5',
            Body: 'a&b',
            Attributes: { SentTimestamp: '1', ApproximateReceiveCount: '2' },
            MD5OfMessageAttributes: 'md5a',
            MessageAttributes: {
              s: { DataType: 'String', StringValue: 'v' },
              b: { DataType: 'Binary', BinaryValue: 'AAE=' },
            },
          },
          { MessageId: 'm2', ReceiptHandle: 'rh2', MD5OfBody: 'x', Body: 'y' },
        ],
      },
      'req-1',
    );
    assert.equal(
      xml,
      wrap(
        'ReceiveMessage',
        '<ReceiveMessageResult><Message><MessageId>m1</MessageId><ReceiptHandle>rh</ReceiptHandle>' +
          '<MD5OfBody>md5</MD5OfBody><Body>a&amp;b</Body>' +
          '<Attribute><Name>SentTimestamp</Name><Value>1</Value></Attribute>' +
          '<Attribute><Name>ApproximateReceiveCount</Name><Value>2</Value></Attribute>' +
          '<MD5OfMessageAttributes>md5a</MD5OfMessageAttributes>' +
          '<MessageAttribute><Name>s</Name><Value><StringValue>v</StringValue><DataType>String</DataType></Value>' +
          '</MessageAttribute>' +
          '<MessageAttribute><Name>b</Name><Value><BinaryValue>AAE=</BinaryValue><DataType>Binary</DataType>' +
          '</Value></MessageAttribute></Message>' +
          '<Message><MessageId>m2</MessageId><ReceiptHandle>rh2</ReceiptHandle><MD5OfBody>x</MD5OfBody>' +
          '<Body>y</Body></Message></ReceiveMessageResult>',
      ),
    );
  });

  it('an empty receive renders an empty result element', () => {
    assert.equal(
      renderQueryResponse('ReceiveMessage', {}, 'r'),
      wrap('ReceiveMessage', '<ReceiveMessageResult/>', 'r'),
    );
    assert.equal(
      renderQueryResponse('ReceiveMessage', { Messages: [] }, 'r'),
      wrap('ReceiveMessage', '<ReceiveMessageResult/>', 'r'),
    );
  });

  it('GetQueueAttributes: repeated Attribute', () => {
    assert.equal(
      renderQueryResponse('GetQueueAttributes', { Attributes: { VisibilityTimeout: '30', Policy: '' } }, 'r'),
      wrap(
        'GetQueueAttributes',
        '<GetQueueAttributesResult><Attribute><Name>VisibilityTimeout</Name><Value>30</Value></Attribute>' +
          '<Attribute><Name>Policy</Name><Value></Value></Attribute></GetQueueAttributesResult>',
        'r',
      ),
    );
  });

  it('SendMessageBatch: SendMessageBatchResultEntry and BatchResultErrorEntry', () => {
    const xml = renderQueryResponse(
      'SendMessageBatch',
      {
        Successful: [{ Id: 'a', MessageId: 'm', MD5OfMessageBody: 'x', SequenceNumber: '1' }],
        Failed: [{ Id: 'b', SenderFault: true, Code: 'InvalidParameterValue', Message: 'bad <b>' }],
      },
      'r',
    );
    assert.equal(
      xml,
      wrap(
        'SendMessageBatch',
        '<SendMessageBatchResult><SendMessageBatchResultEntry><Id>a</Id><MessageId>m</MessageId>' +
          '<MD5OfMessageBody>x</MD5OfMessageBody><SequenceNumber>1</SequenceNumber>' +
          '</SendMessageBatchResultEntry><BatchResultErrorEntry><Id>b</Id><SenderFault>true</SenderFault>' +
          '<Code>InvalidParameterValue</Code><Message>bad &lt;b&gt;</Message></BatchResultErrorEntry>' +
          '</SendMessageBatchResult>',
        'r',
      ),
    );
  });

  it('DeleteMessageBatch and ChangeMessageVisibilityBatch entries', () => {
    assert.equal(
      renderQueryResponse('DeleteMessageBatch', { Successful: [{ Id: 'a' }], Failed: [] }, 'r'),
      wrap(
        'DeleteMessageBatch',
        '<DeleteMessageBatchResult><DeleteMessageBatchResultEntry><Id>a</Id></DeleteMessageBatchResultEntry>' +
          '</DeleteMessageBatchResult>',
        'r',
      ),
    );
    assert.ok(
      renderQueryResponse('ChangeMessageVisibilityBatch', { Successful: [{ Id: 'a' }] }, 'r').includes(
        '<ChangeMessageVisibilityBatchResultEntry><Id>a</Id></ChangeMessageVisibilityBatchResultEntry>',
      ),
    );
  });

  it('lists and tags: QueueUrl, Tag, queueUrls, move tasks', () => {
    assert.equal(
      renderQueryResponse('ListQueues', { QueueUrls: ['u1', 'u2'], NextToken: 't' }, 'r'),
      wrap(
        'ListQueues',
        '<ListQueuesResult><QueueUrl>u1</QueueUrl><QueueUrl>u2</QueueUrl><NextToken>t</NextToken></ListQueuesResult>',
        'r',
      ),
    );
    assert.equal(
      renderQueryResponse('ListQueueTags', { Tags: { team: 'a&b' } }, 'r'),
      wrap(
        'ListQueueTags',
        '<ListQueueTagsResult><Tag><Key>team</Key><Value>a&amp;b</Value></Tag></ListQueueTagsResult>',
        'r',
      ),
    );
    assert.equal(
      renderQueryResponse('ListDeadLetterSourceQueues', { queueUrls: ['u1'] }, 'r'),
      wrap(
        'ListDeadLetterSourceQueues',
        '<ListDeadLetterSourceQueuesResult><QueueUrl>u1</QueueUrl></ListDeadLetterSourceQueuesResult>',
        'r',
      ),
    );
    assert.equal(
      renderQueryResponse(
        'ListMessageMoveTasks',
        {
          Results: [
            {
              TaskHandle: 'h',
              Status: 'COMPLETED',
              ApproximateNumberOfMessagesMoved: 1,
              StartedTimestamp: 5,
            },
          ],
        },
        'r',
      ),
      wrap(
        'ListMessageMoveTasks',
        '<ListMessageMoveTasksResult><ListMessageMoveTasksResultEntry><TaskHandle>h</TaskHandle>' +
          '<Status>COMPLETED</Status><ApproximateNumberOfMessagesMoved>1</ApproximateNumberOfMessagesMoved>' +
          '<StartedTimestamp>5</StartedTimestamp></ListMessageMoveTasksResultEntry></ListMessageMoveTasksResult>',
        'r',
      ),
    );
  });

  it('actions without output have no Result element; unknown output members are left out', () => {
    assert.equal(renderQueryResponse('DeleteMessage', {}, 'r'), wrap('DeleteMessage', null, 'r'));
    assert.equal(renderQueryResponse('PurgeQueue', { Ignored: 1 }, 'r'), wrap('PurgeQueue', null, 'r'));
    assert.equal(
      renderQueryResponse('CreateQueue', { QueueUrl: 'u', Internal: 'x' }, 'r'),
      wrap('CreateQueue', '<CreateQueueResult><QueueUrl>u</QueueUrl></CreateQueueResult>', 'r'),
    );
  });
});

describe('XML escaping', () => {
  it('escapes the five specials exactly, CR as a character reference', () => {
    assert.equal(escapeXml('a&b<c>d"e\'f\r\ng\th'), "a&amp;b&lt;c&gt;d&quot;e'f&#xD;\ng\th");
  });

  it('round-trips every SQS-allowed character class byte-identically', () => {
    const body =
      'crlf\r\n lone cr\r tab\t &amp; <x/> "q" \u00e9 \uD7FF \uE000 \uFFFD \u{10000} \u{10FFFF} \u{1F600}';
    const xml = renderQueryResponse('ReceiveMessage', { Messages: [{ Body: body }] }, 'r');
    const match = /<Body>([^<]*)<\/Body>/.exec(xml);
    assert.ok(match?.[1] !== undefined);
    assert.ok(!match[1].includes('\r'), 'no raw CR may reach the XML');
    assert.equal(
      Buffer.from(unescapeXml(match[1]), 'utf8').toString('hex'),
      Buffer.from(body, 'utf8').toString('hex'),
    );
  });

  it('replaces characters XML 1.0 cannot carry rather than emitting a broken document', () => {
    assert.equal(escapeXml('a\u0000b\u0008c\uFFFEd\uD800e'), 'a\uFFFDb\uFFFDc\uFFFDd\uFFFDe');
  });
});

describe('renderQueryError', () => {
  it('renders the Query code, Type and status', () => {
    assert.deepEqual(renderQueryError(errors.queueDoesNotExist(), 'req-9'), {
      status: 400,
      body:
        `<?xml version="1.0"?><ErrorResponse xmlns="${NS}"><Error><Type>Sender</Type>` +
        '<Code>AWS.SimpleQueueService.NonExistentQueue</Code>' +
        '<Message>The specified queue does not exist for this wsdl version.</Message>' +
        '<Detail/></Error><RequestId>req-9</RequestId></ErrorResponse>',
    });
  });

  it('Receiver for server faults, the spec status, escaped messages', () => {
    const internal = renderQueryError(errors.internal(), 'r');
    assert.equal(internal.status, 500);
    assert.ok(internal.body.includes('<Type>Receiver</Type><Code>InternalError</Code>'));
    const purge = renderQueryError(errors.purgeInProgress('q<1>'), 'r');
    assert.equal(purge.status, 403);
    assert.ok(purge.body.includes('Only one PurgeQueue operation on q&lt;1&gt; is allowed'));
  });
});

describe('form bodies', () => {
  const post = (body: string) => queryParams('POST', new URL('http://127.0.0.1/'), body);

  it('refuses escapes that are not two hex digits, and bytes that are not UTF-8, as a strict decoding does', () => {
    for (const body of [
      'MessageBody=%zz',
      'MessageBody=100%',
      'MessageBody=%FF',
      'MessageBody=%E2%82',
      'A=1&B=%ED%A0%80',
    ])
      throwsSqs(() => post(body), 'MalformedInput', 'not valid form-encoded UTF-8');
  });

  it('keeps a U+FFFD the client sent, escaped or not, and every other character', () => {
    assert.equal(post('MessageBody=%EF%BF%BD').get('MessageBody'), '\uFFFD');
    assert.equal(post('MessageBody=\uFFFD%E2%82%AC+x').get('MessageBody'), '\uFFFD€ x');
  });
});
