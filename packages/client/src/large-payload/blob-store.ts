import { pipeline, type Readable, Transform, type TransformCallback } from 'node:stream';
import { type BlobPointer, LargePayloadError } from './pointer.ts';

/** What a store is given to keep: a body already in memory, or a stream read once, never buffered whole. */
export type BlobBody = string | Uint8Array | Readable;

/** Where large bodies are kept. The pointer's bucket and key are the Extended Client's `s3BucketName`/`s3Key`. */
export interface BlobStore {
  /** The bucket name this store writes into pointers. */
  readonly bucket: string;
  /**
   * Stores `body` under `key` in `bucket` and resolves with the bytes stored. A stream longer than `maxBytes`
   * is refused with a LargePayloadError and nothing is left behind.
   */
  put(key: string, body: BlobBody, maxBytes: number): Promise<number>;
  /** The stored bytes, as a stream; rejects when there is no such blob. */
  get(pointer: BlobPointer): Promise<Readable>;
  /** Removes the blob; a missing one is not an error (S3's DeleteObject behaves so). */
  delete(pointer: BlobPointer): Promise<void>;
}

/** Passes bytes through, counting them, and fails the stream past `maxBytes`. */
export class ByteLimit extends Transform {
  bytes = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) done(tooLarge(this.maxBytes));
    else done(null, chunk);
  }
}

export function tooLarge(maxBytes: number): LargePayloadError {
  return new LargePayloadError(`payload is larger than ${maxBytes} bytes`);
}

/** Bytes of an in-memory body (a string is stored as UTF-8). */
export function inMemoryBytes(body: string | Uint8Array): Uint8Array {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}

/** A body as a stream through a ByteLimit, so both stores count and cap streams the same way. */
export function limited(body: Readable, maxBytes: number): ByteLimit {
  const limit = new ByteLimit(maxBytes);
  // pipeline, not pipe: an error on either side destroys both, so a refused file stream is closed too.
  pipeline(body, limit, () => {});
  return limit;
}

/** Reads a stream into one Buffer, failing past `maxBytes` (for bodies that must become a string). */
export async function readAll(stream: Readable, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > maxBytes) {
      stream.destroy();
      throw tooLarge(maxBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, bytes);
}
