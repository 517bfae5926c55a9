/**
 * The JSON document SNS puts on an SQS queue for each notification (unless the subscription asks for raw
 * delivery), written as AWS writes it: `"Name" : value` members, two-space indent, in AWS's order, Subject
 * only when given, MessageAttributes as `{"Type", "Value"}`, SequenceNumber on FIFO topics.
 * Signature version 1: RSA-SHA1 over AWS's canonical string for a Notification (the SNS developer guide,
 * "Verifying the signatures of Amazon SNS messages"): each of Message, MessageId, Subject (if any),
 * Timestamp, TopicArn and Type as its name, a newline, its value, a newline.
 */
import { isXmlText } from '../../shared/xml-characters.ts';

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

/**
 * A notification's envelope for each subscription it goes to: they differ only in the UnsubscribeURL (which
 * the signature does not cover), so the rest, the message's JSON text among it, is written once.
 */
export class NotificationEnvelope {
  /** The members before the UnsubscribeURL, and those after it, each with its separator. */
  private readonly head: string;
  private readonly tail: string;
  private sharedIsXmlText: boolean | undefined;

  constructor(
    notification: Notification,
    signing: { version: '1' | '2'; signature: string; certificateUrl: string },
  ) {
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
    );
    this.head = `{\n${members.join(',\n')},\n`;
    const attributes = Object.entries(notification.attributes);
    const entries = attributes.map(
      ([name, attribute]) =>
        `    ${JSON.stringify(name)} : ${JSON.stringify({ Type: attribute.DataType, Value: attribute.BinaryValue ?? attribute.StringValue })}`,
    );
    this.tail =
      attributes.length === 0 ? '\n}' : `,\n  "MessageAttributes" : {\n${entries.join(',\n')}\n  }\n}`;
  }

  /** The envelope's JSON text for the subscription whose UnsubscribeURL this is. */
  text(unsubscribeUrl: string): string {
    return `${this.head}${unsubscribeMember(unsubscribeUrl)}${this.tail}`;
  }

  /**
   * Whether `text(unsubscribeUrl)` is all XML text (isXmlText: the characters SQS takes in a body). The parts
   * every subscription shares are checked once; they meet the URL at ASCII characters, so no surrogate pair
   * spans two parts.
   */
  isXmlText(unsubscribeUrl: string): boolean {
    this.sharedIsXmlText ??= isXmlText(this.head) && isXmlText(this.tail);
    return this.sharedIsXmlText && isXmlText(unsubscribeMember(unsubscribeUrl));
  }
}

const unsubscribeMember = (url: string) => member('UnsubscribeURL', JSON.stringify(url));

/** The envelope's JSON text. */
export function notificationEnvelope(
  notification: Notification,
  signing: { version: '1' | '2'; signature: string; certificateUrl: string },
  unsubscribeUrl: string,
): string {
  return new NotificationEnvelope(notification, signing).text(unsubscribeUrl);
}
