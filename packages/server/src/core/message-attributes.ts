import { hash } from 'node:crypto';
import type { MessageAttributes, MessageAttributeValue } from '../shared/sqs-values.ts';
import { errors } from './errors.ts';
import { hasOnlyAllowedCharacters, LIMITS } from './limits.ts';

/** Letters of any script (SQS takes `attr.1øßä`), digits, `_`, `-` and `.`. */
const NAME_CHARACTERS = /^[\p{L}0-9_.-]+$/u;
const DATA_TYPE = /^(String|Number|Binary)(\..+)?$/;
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** A message attribute as a send gives it; the list values are reserved by SQS and ignored. */
export type GivenAttributeValue = Pick<MessageAttributeValue, 'StringValue' | 'BinaryValue'> & {
  DataType?: string;
};

/**
 * Checks message attributes as SQS does. Returns them as kept (data type and the one value its type uses)
 * and their size in bytes as SQS counts it (name + data type + value), which goes towards
 * MaximumMessageSize. `kind` names them in errors.
 */
export function checkMessageAttributes(
  given: Record<string, GivenAttributeValue> | undefined,
  kind: 'message' | 'system',
): { attributes: MessageAttributes | undefined; size: number } {
  if (!given) return { attributes: undefined, size: 0 };
  const entries = Object.entries(given);
  if (entries.length > LIMITS.maxMessageAttributes) {
    throw errors.invalidParameterValue(
      `Number of message attributes [${entries.length}] exceeds the allowed maximum [${LIMITS.maxMessageAttributes}].`,
    );
  }
  let size = 0;
  const attributes: MessageAttributes = {};
  for (const [name, value] of entries) {
    if (kind === 'message') validateAttributeName(name);
    const dataType = value.DataType;
    if (dataType === undefined || dataType === '') {
      throw errors.invalidParameterValue(
        `The message attribute '${name}' must contain non-empty message attribute type.`,
      );
    }
    const match = DATA_TYPE.exec(dataType);
    if (!match || dataType.length > LIMITS.maxAttributeTypeLength || !hasOnlyAllowedCharacters(dataType)) {
      throw errors.invalidParameterValue(
        `The type of message (user) attribute '${name}' is invalid. You must use only the following supported type prefixes: Binary, Number, String.`,
      );
    }
    const base = match[1]!;
    if (base === 'Binary') {
      if (value.BinaryValue === undefined || value.StringValue !== undefined) {
        throw errors.invalidParameterValue(
          `The message attribute '${name}' with type 'Binary' must use field 'Binary'.`,
        );
      }
      const bytes = decodeBase64Strict(value.BinaryValue, name);
      if (bytes.length === 0) throw emptyValue(name, base);
      attributes[name] = { DataType: dataType, BinaryValue: value.BinaryValue };
    } else {
      if (value.StringValue === undefined || value.BinaryValue !== undefined) {
        throw errors.invalidParameterValue(
          `The message attribute '${name}' with type '${base}' must use field 'String'.`,
        );
      }
      if (value.StringValue === '') throw emptyValue(name, base);
      // SQS answers InvalidParameterValue here, where the same characters in a body are InvalidMessageContents.
      if (!hasOnlyAllowedCharacters(value.StringValue)) throw errors.invalidAttributeContents(name);
      if (base === 'Number' && !NUMBER.test(value.StringValue.trim())) {
        throw errors.invalidParameterValue(
          `Can't cast the value of message (user) attribute '${name}' to a number.`,
        );
      }
      attributes[name] = { DataType: dataType, StringValue: value.StringValue };
    }
    size += attributeSize(name, value);
  }
  return { attributes, size };
}

/**
 * A message attribute's size as SQS counts it towards MaximumMessageSize and a batch's cap: the bytes of its
 * name, its data type and its value (a binary value's decoded bytes, counted without decoding). Applied to
 * checked attributes, and to a batch's entries before they are checked.
 */
export function attributeSize(name: string, value: GivenAttributeValue): number {
  let size = Buffer.byteLength(name) + Buffer.byteLength(value.DataType ?? '');
  if (value.StringValue !== undefined) size += Buffer.byteLength(value.StringValue);
  if (value.BinaryValue !== undefined) size += Buffer.byteLength(value.BinaryValue, 'base64');
  return size;
}

/** The size of all of a message's attributes (attributeSize of each), checked or not. */
export function attributesSize(attributes: Record<string, GivenAttributeValue> | undefined): number {
  let size = 0;
  for (const [name, value] of Object.entries(attributes ?? {})) size += attributeSize(name, value);
  return size;
}

const emptyValue = (name: string, base: string) =>
  errors.invalidParameterValue(
    `Message (user) attribute '${name}' must contain a non-empty value of type '${base}'.`,
  );

function validateAttributeName(name: string): void {
  const invalid = (reason: string) =>
    errors.invalidParameterValue(`Message (user) attribute name '${name}' is invalid. ${reason}`);
  if (name.length === 0 || name.length > LIMITS.maxAttributeNameLength) {
    throw invalid(`The name must be 1 to ${LIMITS.maxAttributeNameLength} characters long.`);
  }
  if (!NAME_CHARACTERS.test(name)) {
    throw invalid(
      'The attribute name can contain letters, digits, hyphens (-), underscores (_) and periods (.).',
    );
  }
  if (/^(aws\.|amazon\.)/i.test(name))
    throw invalid('The attribute name must not start with an AWS-reserved prefix (AWS. or Amazon.).');
  if (name.startsWith('.') || name.endsWith('.') || name.includes('..')) {
    throw invalid('The attribute name must not start or end with a period, nor contain successive periods.');
  }
}

function decodeBase64Strict(value: string, name: string): Buffer {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value) || value.length % 4 === 1) {
    throw errors.invalidParameterValue(`The message attribute '${name}' has an invalid base64 binary value.`);
  }
  return Buffer.from(value, 'base64');
}

/** One-shot `hash` (no Hash object per call): every send hashes its body. */
export function md5Hex(data: string | Buffer): string {
  return hash('md5', data, 'hex');
}

/** MD5OfMessageAttributes as SQS computes it (the SDKs recompute and compare), of `attributesEncoding`. */
export function md5OfAttributes(attributes: MessageAttributes | undefined): string | undefined {
  const encoding = attributesEncoding(attributes);
  return encoding && md5Hex(encoding);
}

/**
 * The bytes SQS digests message attributes from: attributes sorted by name, each encoded as length-prefixed
 * name, length-prefixed data type, a transport byte (1 string, 2 binary) and the length-prefixed value.
 * Undefined without attributes.
 */
export function attributesEncoding(attributes: MessageAttributes | undefined): Buffer | undefined {
  if (!attributes) return undefined;
  const names = Object.keys(attributes).sort();
  if (names.length === 0) return undefined;
  const parts: Buffer[] = [];
  const lengthPrefixed = (bytes: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    parts.push(length, bytes);
  };
  for (const name of names) {
    const value = attributes[name]!;
    lengthPrefixed(Buffer.from(name, 'utf8'));
    lengthPrefixed(Buffer.from(value.DataType, 'utf8'));
    if (value.BinaryValue !== undefined) {
      parts.push(Buffer.from([2]));
      lengthPrefixed(Buffer.from(value.BinaryValue, 'base64'));
    } else {
      parts.push(Buffer.from([1]));
      lengthPrefixed(Buffer.from(value.StringValue ?? '', 'utf8'));
    }
  }
  return Buffer.concat(parts);
}

/**
 * Applies ReceiveMessage's MessageAttributeNames filter: `All`, `*` or `.*` for everything, a name, or
 * `Prefix.*` for every name starting with `Prefix` (SQS: `Hel.*` selects `Hello` and `Help.Me`).
 */
export function selectMessageAttributes(
  attributes: MessageAttributes | undefined,
  requested: readonly string[] | undefined,
): MessageAttributes | undefined {
  if (!attributes || !requested || requested.length === 0) return undefined;
  const wantsAll = requested.some((name) => name === 'All' || name === '*' || name === '.*');
  const selected: MessageAttributes = {};
  for (const [name, value] of Object.entries(attributes)) {
    const wanted =
      wantsAll ||
      requested.some((pattern) =>
        pattern.endsWith('.*') ? name.startsWith(pattern.slice(0, -2)) : pattern === name,
      );
    if (wanted) selected[name] = value;
  }
  return Object.keys(selected).length > 0 ? selected : undefined;
}
