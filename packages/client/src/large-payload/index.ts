/** Large payloads in the AWS SQS Extended Client format, on a directory or any S3-compatible store. */

export type { BlobBody, BlobStore } from './blob-store.ts';
export { DirectoryBlobStore, type DirectoryBlobStoreOptions } from './directory-store.ts';
export {
  DEFAULT_MAX_BODY_IN_MEMORY_BYTES,
  DEFAULT_THRESHOLD_BYTES,
  type LargePayloadOptions,
  LargePayloads,
  MAX_PAYLOAD_BYTES,
  type OffloadableEntry,
  type PayloadSource,
} from './large-payloads.ts';
export {
  type BlobPointer,
  decodePointer,
  embedPointerInReceiptHandle,
  encodePointer,
  LargePayloadError,
  LEGACY_POINTER_CLASS,
  LEGACY_SIZE_ATTRIBUTE,
  originalReceiptHandle,
  POINTER_CLASS,
  payloadSize,
  pointerInReceiptHandle,
  pointerOf,
  SIZE_ATTRIBUTE,
  type SizeAttributeName,
} from './pointer.ts';
