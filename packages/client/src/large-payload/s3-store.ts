import type { Readable } from 'node:stream';
import type { S3Client } from '@aws-sdk/client-s3';
import { loadOptionalPeer } from '../optional-peer.ts';
import { type BlobBody, type BlobStore, inMemoryBytes, limited, tooLarge } from './blob-store.ts';
import type { BlobPointer } from './pointer.ts';

export interface S3BlobStoreOptions {
  /** Any S3-compatible endpoint's client (for most non-AWS endpoints set `forcePathStyle: true`). */
  s3: S3Client;
  /** The bucket new blobs go to; it must exist. Reads and deletes use the bucket the pointer names. */
  bucket: string;
  /** Part size of streamed (multipart) uploads. Default 8 MiB (S3's minimum is 5 MiB). */
  partSizeBytes?: number;
  /** Parts uploaded at once; memory held is about partSizeBytes × this. Default 2. */
  uploadConcurrency?: number;
}

const s3Commands = () =>
  loadOptionalPeer('@aws-sdk/client-s3', 'S3BlobStore', () => import('@aws-sdk/client-s3'));

/** A BlobStore on S3 or any S3-compatible endpoint, as the Extended Client uses. */
export class S3BlobStore implements BlobStore {
  readonly bucket: string;
  private readonly s3: S3Client;

  constructor(private readonly options: S3BlobStoreOptions) {
    this.s3 = options.s3;
    this.bucket = options.bucket;
  }

  async put(key: string, body: BlobBody, maxBytes: number): Promise<number> {
    if (typeof body === 'string' || body instanceof Uint8Array) {
      const data = inMemoryBytes(body);
      if (data.byteLength > maxBytes) throw tooLarge(maxBytes);
      const { PutObjectCommand } = await s3Commands();
      await this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: data }));
      return data.byteLength;
    }
    // A stream of unknown length: multipart, holding only a few parts in memory; a failed upload is aborted.
    const counted = limited(body, maxBytes);
    const { Upload } = await loadOptionalPeer(
      '@aws-sdk/lib-storage',
      'S3BlobStore',
      () => import('@aws-sdk/lib-storage'),
    );
    await new Upload({
      client: this.s3,
      params: { Bucket: this.bucket, Key: key, Body: counted },
      partSize: this.options.partSizeBytes ?? 8 * 1024 * 1024,
      queueSize: this.options.uploadConcurrency ?? 2,
    }).done();
    return counted.bytes;
  }

  async get(pointer: BlobPointer): Promise<Readable> {
    const { GetObjectCommand } = await s3Commands();
    const { Body } = await this.s3.send(new GetObjectCommand({ Bucket: pointer.bucket, Key: pointer.key }));
    return Body as Readable;
  }

  async delete(pointer: BlobPointer): Promise<void> {
    const { DeleteObjectCommand } = await s3Commands();
    await this.s3.send(new DeleteObjectCommand({ Bucket: pointer.bucket, Key: pointer.key }));
  }
}
