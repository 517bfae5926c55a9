/**
 * The JSON document SNS puts on an SQS queue for each notification (unless the subscription asks for raw
 * delivery), written as AWS writes it: `"Name" : value` members, two-space indent, in AWS's order, Subject
 * only when given, MessageAttributes as `{"Type", "Value"}`, SequenceNumber on FIFO topics.
 * Signature version 1: RSA-SHA1 over AWS's canonical string for a Notification (the SNS developer guide,
 * "Verifying the signatures of Amazon SNS messages"): each of Message, MessageId, Subject (if any),
 * Timestamp, TopicArn and Type as its name, a newline, its value, a newline.
 */

/** A published message attribute, as SNS carries it. */
export interface PublishedAttribute {
  readonly DataType: string;
  readonly StringValue?: string;
  readonly BinaryValue?: string;
}

export interface Notification {
  readonly messageId: string;
  readonly topicArn: string;
  readonly subject: string | undefined;
  /** The text for SQS subscribers (MessageStructure=json: its `sqs` entry, else `default`). */
  readonly message: string;
  /** ISO 8601 with milliseconds, UTC. */
  readonly timestamp: string;
  readonly attributes: Readonly<Record<string, PublishedAttribute>>;
  /** FIFO topics: the topic's sequence number, 20 digits. */
  readonly sequenceNumber: string | undefined;
}

/** The server's signing key and where its certificate is served. */
export interface NotificationSigner {
  /**
   * Base64 RSA-SHA1 signature of `text` (SignatureVersion 1) or RSA-SHA256 (2); asynchronous, so the RSA work
   * (milliseconds each) runs off the event loop.
   */
  sign(text: string, version: '1' | '2'): Promise<string>;
  /** The certificate's URL on the server the client reached. */
  certificateUrl(baseUrl: string): Promise<string>;
}

/** AWS's canonical string for a Notification's signature. */
export function notificationStringToSign(notification: Notification): string {
  const parts: [string, string][] = [
    ['Message', notification.message],
    ['MessageId', notification.messageId],
  ];
  if (notification.subject !== undefined) parts.push(['Subject', notification.subject]);
  parts.push(
    ['Timestamp', notification.timestamp],
    ['TopicArn', notification.topicArn],
    ['Type', 'Notification'],
  );
  return parts.map(([name, value]) => `${name}\n${value}\n`).join('');
}

const member = (name: string, value: string) => `  ${JSON.stringify(name)} : ${value}`;

/** The envelope's JSON text. */
export function notificationEnvelope(
  notification: Notification,
  signing: { version: '1' | '2'; signature: string; certificateUrl: string },
  unsubscribeUrl: string,
): string {
  const text = (value: string) => JSON.stringify(value);
  const members = [member('Type', text('Notification')), member('MessageId', text(notification.messageId))];
  if (notification.sequenceNumber !== undefined)
    members.push(member('SequenceNumber', text(notification.sequenceNumber)));
  members.push(member('TopicArn', text(notification.topicArn)));
  if (notification.subject !== undefined) members.push(member('Subject', text(notification.subject)));
  members.push(
    member('Message', text(notification.message)),
    member('Timestamp', text(notification.timestamp)),
    member('SignatureVersion', text(signing.version)),
    member('Signature', text(signing.signature)),
    member('SigningCertURL', text(signing.certificateUrl)),
    member('UnsubscribeURL', text(unsubscribeUrl)),
  );
  const attributes = Object.entries(notification.attributes);
  if (attributes.length > 0) {
    const entries = attributes.map(
      ([name, attribute]) =>
        `    ${JSON.stringify(name)} : ${JSON.stringify({ Type: attribute.DataType, Value: attribute.BinaryValue ?? attribute.StringValue })}`,
    );
    members.push(`  "MessageAttributes" : {\n${entries.join(',\n')}\n  }`);
  }
  return `{\n${members.join(',\n')}\n}`;
}
