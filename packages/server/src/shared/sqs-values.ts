/**
 * The values SQS keeps as the API gives them, shared by the core that checks them and the stores that keep
 * them: a message's attributes and a queue's attributes.
 */
export interface MessageAttributeValue {
  DataType: string;
  StringValue?: string;
  BinaryValue?: string;
}

export type MessageAttributes = Record<string, MessageAttributeValue>;

/** A queue's attributes by name, every value a string as the API sends it. */
export type QueueAttributes = Record<string, string>;
