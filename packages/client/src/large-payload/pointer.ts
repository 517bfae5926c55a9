import type { Message, MessageAttributeValue } from '@aws-sdk/client-sqs';

/**
 * The wire format of the AWS SQS Extended Client Library (Java `amazon-sqs-java-extended-client-lib` 2.x
 * with `payload-offloading-java-common-lib-for-aws`, and Python `amazon-sqs-extended-client`), so that their
 * producers and consumers interoperate with ours. See docs/decisions/extended-client-format.md.
 */

/** The class name Jackson's default typing writes first in the pointer array (Java 2.x, Python default). */
export const POINTER_CLASS = 'software.amazon.payloadoffloading.PayloadS3Pointer';
/** The class name of Java 1.x and of Python with `use_legacy_attribute`; read, never written. */
export const LEGACY_POINTER_CLASS = 'com.amazon.sqs.javamessaging.MessageS3Pointer';

/** Message attribute (DataType Number) holding the original body's size in bytes. */
export const SIZE_ATTRIBUTE = 'ExtendedPayloadSize';
/** Its older name: what Java 2.x still writes by default (`useLegacyReservedAttributeName = true`). */
export const LEGACY_SIZE_ATTRIBUTE = 'SQSLargePayloadSize';
export type SizeAttributeName = typeof SIZE_ATTRIBUTE | typeof LEGACY_SIZE_ATTRIBUTE;
export const SIZE_ATTRIBUTES: readonly SizeAttributeName[] = [SIZE_ATTRIBUTE, LEGACY_SIZE_ATTRIBUTE];

/** Markers the Extended Client wraps around bucket and key in front of a receipt handle it gives out. */
export const BUCKET_MARKER = '-..s3BucketName..-';
export const KEY_MARKER = '-..s3Key..-';

/** SQS allows 10 message attributes; the Extended Client keeps one for the size. */
export const MAX_USER_ATTRIBUTES = 9;

/** Where an offloaded body lives: an S3 bucket and key (a directory store maps them onto files). */
export interface BlobPointer {
  bucket: string;
  key: string;
}

export class LargePayloadError extends Error {
  override name = 'LargePayloadError';
}

/** The message body that replaces an offloaded one, byte for byte what Jackson writes. */
export function encodePointer(pointer: BlobPointer): string {
  return JSON.stringify([POINTER_CLASS, { s3BucketName: pointer.bucket, s3Key: pointer.key }]);
}

/** Parses a pointer body in either class name (Python writes it with spaces; JSON does not care). */
export function decodePointer(body: string): BlobPointer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new LargePayloadError('message carries a payload size attribute but its body is not JSON');
  }
  if (
    Array.isArray(parsed) &&
    parsed.length === 2 &&
    (parsed[0] === POINTER_CLASS || parsed[0] === LEGACY_POINTER_CLASS) &&
    typeof parsed[1] === 'object' &&
    parsed[1] !== null
  ) {
    const { s3BucketName, s3Key } = parsed[1] as { s3BucketName?: unknown; s3Key?: unknown };
    if (typeof s3BucketName === 'string' && s3BucketName && typeof s3Key === 'string' && s3Key) {
      return { bucket: s3BucketName, key: s3Key };
    }
  }
  throw new LargePayloadError('message carries a payload size attribute but its body is not an S3 pointer');
}

/** The size attribute a received message carries, if it is an offloaded one (either name). */
export function sizeAttributeOf(message: Pick<Message, 'MessageAttributes'>): SizeAttributeName | undefined {
  return SIZE_ATTRIBUTES.find((name) => message.MessageAttributes?.[name] !== undefined);
}

/** The original payload size recorded on an offloaded message, or undefined for an ordinary one. */
export function payloadSize(message: Pick<Message, 'MessageAttributes'>): number | undefined {
  const name = sizeAttributeOf(message);
  return name === undefined ? undefined : Number(message.MessageAttributes![name]!.StringValue);
}

/**
 * The pointer of an offloaded message, or undefined for an ordinary one. As the Extended Client does, the
 * size attribute decides: a body that merely looks like a pointer is an ordinary body.
 */
export function pointerOf(message: Pick<Message, 'MessageAttributes' | 'Body'>): BlobPointer | undefined {
  if (sizeAttributeOf(message) === undefined) return undefined;
  return decodePointer(message.Body ?? '');
}

/** The receipt handle the Extended Client gives out for an offloaded message, so a delete finds the blob. */
export function embedPointerInReceiptHandle(receiptHandle: string, pointer: BlobPointer): string {
  return `${BUCKET_MARKER}${pointer.bucket}${BUCKET_MARKER}${KEY_MARKER}${pointer.key}${KEY_MARKER}${receiptHandle}`;
}

/** The pointer an Extended Client receipt handle carries, or undefined for a plain SQS handle. */
export function pointerInReceiptHandle(receiptHandle: string): BlobPointer | undefined {
  return splitReceiptHandle(receiptHandle)?.pointer;
}

/** The SQS receipt handle inside an Extended Client one (a plain handle is returned as it is). */
export function originalReceiptHandle(receiptHandle: string): string {
  return splitReceiptHandle(receiptHandle)?.receiptHandle ?? receiptHandle;
}

function splitReceiptHandle(handle: string): { pointer: BlobPointer; receiptHandle: string } | undefined {
  if (!handle.startsWith(BUCKET_MARKER)) return undefined;
  const bucketEnd = handle.indexOf(BUCKET_MARKER, BUCKET_MARKER.length);
  const keyStart = bucketEnd + BUCKET_MARKER.length + KEY_MARKER.length;
  if (bucketEnd < 0 || !handle.startsWith(KEY_MARKER, bucketEnd + BUCKET_MARKER.length)) return undefined;
  const keyEnd = handle.indexOf(KEY_MARKER, keyStart);
  if (keyEnd < 0) return undefined;
  return {
    pointer: { bucket: handle.slice(BUCKET_MARKER.length, bucketEnd), key: handle.slice(keyStart, keyEnd) },
    receiptHandle: handle.slice(keyEnd + KEY_MARKER.length),
  };
}

/** Bytes SQS counts for message attributes: name, DataType and value of each (the Extended Client's rule). */
export function attributesBytes(attributes: Record<string, MessageAttributeValue> | undefined): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(attributes ?? {})) {
    bytes += Buffer.byteLength(name);
    if (value.DataType) bytes += Buffer.byteLength(value.DataType);
    if (value.StringValue !== undefined) bytes += Buffer.byteLength(value.StringValue);
    if (value.BinaryValue !== undefined) bytes += value.BinaryValue.byteLength;
  }
  return bytes;
}
