/**
 * The event Lambda sends a function for an SQS queue: `{"Records": [...]}`, one record per message, as
 * `@types/aws-lambda`'s `SQSEvent` and AWS's "Using Lambda with Amazon SQS" page show it. Field by field
 * evidence: docs/decisions/event-source-mappings.md.
 */
import type { Message, MessageAttributeValue } from '../api-types.ts';

export interface SqsRecordAttribute {
  stringValue?: string;
  binaryValue?: string;
  stringListValues: string[];
  binaryListValues: string[];
  dataType: string;
}

export interface SqsRecord {
  messageId: string;
  receiptHandle: string;
  body: string;
  attributes: Record<string, string>;
  messageAttributes: Record<string, SqsRecordAttribute>;
  /** null for a message without attributes, as a real Lambda event has it (decision record). */
  md5OfMessageAttributes: string | null;
  md5OfBody: string;
  eventSource: 'aws:sqs';
  eventSourceARN: string;
  awsRegion: string;
}

export interface SqsEvent {
  Records: SqsRecord[];
}

/** The system attributes a record carries: every one SQS returns for the message, as Lambda asks for All. */
function recordAttribute(value: MessageAttributeValue): SqsRecordAttribute {
  return {
    ...(value.StringValue !== undefined && { stringValue: value.StringValue }),
    ...(value.BinaryValue !== undefined && { binaryValue: value.BinaryValue }),
    // Lambda always sends both lists, empty: SQS reserves them and never fills them.
    stringListValues: value.StringListValues ?? [],
    binaryListValues: value.BinaryListValues ?? [],
    dataType: value.DataType ?? 'String',
  };
}

/** One received message (ReceiveMessage's answer with all attributes) as the record Lambda sends. */
export function sqsRecord(message: Message, eventSourceArn: string, region: string): SqsRecord {
  const messageAttributes: Record<string, SqsRecordAttribute> = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {}))
    messageAttributes[name] = recordAttribute(value);
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: { ...message.Attributes },
    messageAttributes,
    md5OfMessageAttributes: message.MD5OfMessageAttributes ?? null,
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: eventSourceArn,
    awsRegion: region,
  };
}
