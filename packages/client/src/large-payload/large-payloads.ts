import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  type ReceiveMessageCommandInput,
  type ReceiveMessageCommandOutput,
  SendMessageBatchCommand,
  type SendMessageBatchCommandInput,
  type SendMessageBatchCommandOutput,
  SendMessageCommand,
  type SendMessageCommandInput,
  type SendMessageCommandOutput,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { PayloadHook } from '../consumer.ts';
import { type BlobBody, type BlobStore, readAll } from './blob-store.ts';
import {
  attributesBytes,
  type BlobPointer,
  embedPointerInReceiptHandle,
  encodePointer,
  LargePayloadError,
  LEGACY_SIZE_ATTRIBUTE,
  MAX_USER_ATTRIBUTES,
  originalReceiptHandle,
  payloadSize,
  pointerInReceiptHandle,
  pointerOf,
  SIZE_ATTRIBUTES,
  type SizeAttributeName,
  sizeAttributeOf,
} from './pointer.ts';

/** The Extended Client's threshold: SQS's message size limit before August 2025. */
export const DEFAULT_THRESHOLD_BYTES = 262_144;
/** The Extended Client's documented ceiling. */
export const MAX_PAYLOAD_BYTES = 2 * 1024 ** 3;
/** V8 strings stop near 512 MiB; bodies above this are streamed with `open()` instead. */
export const DEFAULT_MAX_BODY_IN_MEMORY_BYTES = 256 * 1024 ** 2;

/** Characters the Java client allows in its S3 key prefix; its keys are prefix + UUID, at most 1024. */
const KEY_PREFIX = /^[A-Za-z0-9./_-]{0,988}$/;

export interface LargePayloadOptions {
  /** Where offloaded bodies go: a DirectoryBlobStore or an S3BlobStore. */
  store: BlobStore;
  /** Offload when body plus attribute bytes exceed this. Default 262,144 (256 KiB), as the Extended Client. */
  thresholdBytes?: number;
  /** Offload every message, whatever its size (the Extended Client's `alwaysThroughS3`). Default false. */
  alwaysOffload?: boolean;
  /** Largest payload accepted. Default and ceiling 2 GiB. */
  maxPayloadBytes?: number;
  /**
   * The size attribute written. Default `SQSLargePayloadSize`, what the Java client writes by default
   * (readable by every Java and Python version); `ExtendedPayloadSize` is the Python client's default.
   * Both are always read.
   */
  sizeAttributeName?: SizeAttributeName;
  /** Remove the blob when its message is deleted (the Extended Client's `cleanupS3Payload`). Default true. */
  deleteBlobOnDelete?: boolean;
  /** Prepended to every new key (the Java client's `s3KeyPrefix`): `[A-Za-z0-9./_-]`. Default none. */
  keyPrefix?: string;
  /** `resolve()` refuses bodies above this; the consumer hook leaves them for `open()`. Default 256 MiB. */
  maxBodyInMemoryBytes?: number;
}

/** The fields of a SendMessage input or a SendMessageBatch entry that offloading reads and rewrites. */
export interface OffloadableEntry {
  MessageBody: string | undefined;
  MessageAttributes?: Record<string, MessageAttributeValue> | undefined;
}

/** A stream, or a file to stream from: big bodies never need to be in memory. */
export type PayloadSource = Readable | { path: string };

/**
 * Large payloads in the AWS SQS Extended Client format: bodies over the threshold go to a BlobStore and a
 * pointer is sent instead; received pointers are resolved back; deleting the message removes the blob.
 */
export class LargePayloads {
  readonly store: BlobStore;
  readonly thresholdBytes: number;
  private readonly maxPayloadBytes: number;
  private readonly maxBodyInMemoryBytes: number;
  private readonly sizeAttributeName: SizeAttributeName;
  private readonly deleteBlobOnDelete: boolean;
  private readonly keyPrefix: string;

  constructor(private readonly options: LargePayloadOptions) {
    this.store = options.store;
    this.thresholdBytes = options.thresholdBytes ?? DEFAULT_THRESHOLD_BYTES;
    this.maxPayloadBytes = options.maxPayloadBytes ?? MAX_PAYLOAD_BYTES;
    this.maxBodyInMemoryBytes = options.maxBodyInMemoryBytes ?? DEFAULT_MAX_BODY_IN_MEMORY_BYTES;
    this.sizeAttributeName = options.sizeAttributeName ?? LEGACY_SIZE_ATTRIBUTE;
    this.deleteBlobOnDelete = options.deleteBlobOnDelete ?? true;
    this.keyPrefix = options.keyPrefix ?? '';
    if (!Number.isInteger(this.thresholdBytes) || this.thresholdBytes < 0) {
      throw new RangeError('thresholdBytes must be a non-negative integer');
    }
    if (!(this.maxPayloadBytes > 0 && this.maxPayloadBytes <= MAX_PAYLOAD_BYTES)) {
      throw new RangeError(`maxPayloadBytes must be 1-${MAX_PAYLOAD_BYTES}`);
    }
    if (!SIZE_ATTRIBUTES.includes(this.sizeAttributeName)) {
      throw new RangeError(`sizeAttributeName must be one of ${SIZE_ATTRIBUTES.join(', ')}`);
    }
    if (!KEY_PREFIX.test(this.keyPrefix)) {
      throw new RangeError('keyPrefix may hold only A-Z a-z 0-9 . / _ - and at most 988 characters');
    }
  }

  /** Whether this entry's body would be offloaded. */
  needsOffload(entry: OffloadableEntry): boolean {
    if (this.options.alwaysOffload) return true;
    const bytes = Buffer.byteLength(entry.MessageBody ?? '') + attributesBytes(entry.MessageAttributes);
    return bytes > this.thresholdBytes;
  }

  /** The entry as it must be sent: unchanged, or with its body stored and replaced by a pointer. */
  async offload<T extends OffloadableEntry>(entry: T): Promise<T> {
    checkAttributes(entry.MessageAttributes);
    if (!this.needsOffload(entry)) return entry;
    return this.storeBody(entry, entry.MessageBody ?? '');
  }

  /** SendMessage, offloading the body when it is large. A blob whose send fails is removed again. */
  async send(sqs: SQSClient, input: SendMessageCommandInput): Promise<SendMessageCommandOutput> {
    const entry = await this.offload(input);
    return this.sendOrRemove(sqs, entry);
  }

  /** SendMessage of a body read from a stream or file: always offloaded, never held in memory. */
  async sendStream(
    sqs: SQSClient,
    input: Omit<SendMessageCommandInput, 'MessageBody'>,
    source: PayloadSource,
  ): Promise<SendMessageCommandOutput> {
    checkAttributes(input.MessageAttributes);
    const body = 'path' in source ? createReadStream(source.path) : source;
    const entry = await this.storeBody({ ...input, MessageBody: undefined }, body);
    return this.sendOrRemove(sqs, entry);
  }

  /** SendMessageBatch, offloading each large entry; the blobs of entries SQS refused are removed. */
  async sendBatch(
    sqs: SQSClient,
    input: SendMessageBatchCommandInput,
  ): Promise<SendMessageBatchCommandOutput> {
    const entries = await Promise.all((input.Entries ?? []).map((entry) => this.offload(entry)));
    let output: SendMessageBatchCommandOutput;
    try {
      output = await sqs.send(new SendMessageBatchCommand({ ...input, Entries: entries }));
    } catch (error) {
      await this.removeBlobs(entries);
      throw error;
    }
    const failed = new Set((output.Failed ?? []).map((f) => f.Id));
    await this.removeBlobs(entries.filter((e) => failed.has(e.Id)));
    return output;
  }

  /**
   * ReceiveMessage as the Extended Client does it: pointers resolved to their bodies, the size attribute
   * removed, and the pointer embedded in the receipt handle so `deleteMessage` can remove the blob.
   */
  async receive(sqs: SQSClient, input: ReceiveMessageCommandInput): Promise<ReceiveMessageCommandOutput> {
    const asked = input.MessageAttributeNames ?? [];
    const askedAll = asked.some((name) => name === 'All' || name === '.*');
    const output = await sqs.send(
      new ReceiveMessageCommand({
        ...input,
        MessageAttributeNames: askedAll ? asked : [...new Set([...asked, ...SIZE_ATTRIBUTES])],
      }),
    );
    const messages = await Promise.all(
      (output.Messages ?? []).map(async (message) => {
        const pointer = pointerOf(message);
        if (!pointer) return message;
        const resolved = await this.resolve(message);
        return { ...resolved, ReceiptHandle: embedPointerInReceiptHandle(message.ReceiptHandle!, pointer) };
      }),
    );
    return { ...output, Messages: output.Messages ? messages : undefined };
  }

  /** The message with its body fetched from the store and the size attribute removed; others as they are. */
  async resolve(message: Message): Promise<Message> {
    const pointer = pointerOf(message);
    if (!pointer) return message;
    const size = payloadSize(message);
    if (size !== undefined && size > this.maxBodyInMemoryBytes) {
      throw new LargePayloadError(
        `payload of ${size} bytes is above maxBodyInMemoryBytes (${this.maxBodyInMemoryBytes}); read it with open()`,
      );
    }
    const body = await readAll(await this.store.get(pointer), this.maxBodyInMemoryBytes);
    const attributes = { ...message.MessageAttributes };
    delete attributes[sizeAttributeOf(message)!];
    return { ...message, Body: body.toString('utf8'), MessageAttributes: attributes };
  }

  /** The payload of a message as a stream: the stored blob for a pointer, else the body itself. */
  async open(message: Message): Promise<Readable> {
    const pointer = pointerOf(message);
    if (pointer) return this.store.get(pointer);
    return Readable.from([Buffer.from(message.Body ?? '', 'utf8')]);
  }

  /**
   * DeleteMessage accepting the receipt handles `receive` gives out (and those of the Java and Python
   * clients): deletes the message, then its blob unless `deleteBlobOnDelete` is false.
   */
  async deleteMessage(sqs: SQSClient, queueUrl: string, receiptHandle: string): Promise<void> {
    await sqs.send(
      new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: originalReceiptHandle(receiptHandle) }),
    );
    const pointer = pointerInReceiptHandle(receiptHandle);
    if (pointer && this.deleteBlobOnDelete) await this.store.delete(pointer);
  }

  /** ChangeMessageVisibility accepting the receipt handles `receive` gives out. */
  async changeMessageVisibility(
    sqs: SQSClient,
    queueUrl: string,
    receiptHandle: string,
    visibilityTimeout: number,
  ): Promise<void> {
    await sqs.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queueUrl,
        ReceiptHandle: originalReceiptHandle(receiptHandle),
        VisibilityTimeout: visibilityTimeout,
      }),
    );
  }

  /**
   * The Consumer's `largePayloads` option: handlers get resolved bodies (above `maxBodyInMemoryBytes` the
   * pointer is left for `open()`), and a processed message's blob is removed once it is deleted. A
   * dead-lettered message keeps its blob: its copy in the DLQ still points there.
   */
  consumerHook(): PayloadHook {
    return {
      prepare: async (message) => {
        const size = payloadSize(message);
        return size !== undefined && size > this.maxBodyInMemoryBytes ? message : this.resolve(message);
      },
      deleted: async (messages) => {
        if (!this.deleteBlobOnDelete) return;
        await Promise.all(
          messages.map((message) => {
            const pointer = pointerOf(message);
            return pointer ? this.store.delete(pointer) : undefined;
          }),
        );
      },
    };
  }

  /** Stores the body under a new key; the entry gets the pointer as its body and the size attribute. */
  private async storeBody<T extends OffloadableEntry>(entry: T, body: BlobBody): Promise<T> {
    const pointer: BlobPointer = { bucket: this.store.bucket, key: `${this.keyPrefix}${randomUUID()}` };
    const bytes = await this.store.put(pointer.key, body, this.maxPayloadBytes);
    return {
      ...entry,
      MessageBody: encodePointer(pointer),
      MessageAttributes: {
        ...entry.MessageAttributes,
        [this.sizeAttributeName]: { DataType: 'Number', StringValue: String(bytes) },
      },
    };
  }

  private async sendOrRemove(
    sqs: SQSClient,
    entry: SendMessageCommandInput,
  ): Promise<SendMessageCommandOutput> {
    try {
      return await sqs.send(new SendMessageCommand(entry));
    } catch (error) {
      await this.removeBlobs([entry]);
      throw error;
    }
  }

  /** Removes the blobs of entries that were never sent, so a failed send leaves nothing behind. */
  private async removeBlobs(entries: readonly OffloadableEntry[]): Promise<void> {
    await Promise.allSettled(
      entries.map((entry) => {
        const pointer = pointerOf({ Body: entry.MessageBody, MessageAttributes: entry.MessageAttributes });
        return pointer ? this.store.delete(pointer) : undefined;
      }),
    );
  }
}

/** The Extended Client's checks: one attribute slot is kept for the size, and its names are reserved. */
function checkAttributes(attributes: Record<string, MessageAttributeValue> | undefined): void {
  const names = Object.keys(attributes ?? {});
  if (names.length > MAX_USER_ATTRIBUTES) {
    throw new LargePayloadError(
      `${names.length} message attributes; a large-payload message may have at most ${MAX_USER_ATTRIBUTES}`,
    );
  }
  const reserved = names.find((name) => (SIZE_ATTRIBUTES as readonly string[]).includes(name));
  if (reserved) throw new LargePayloadError(`message attribute ${reserved} is reserved for large payloads`);
}
