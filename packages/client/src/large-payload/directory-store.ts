import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, open, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type BlobBody, type BlobStore, inMemoryBytes, limited, tooLarge } from './blob-store.ts';
import { type BlobPointer, LargePayloadError } from './pointer.ts';

export interface DirectoryBlobStoreOptions {
  /** Where blobs are kept, one file per key (keys with `/` make subdirectories). Created if missing. */
  directory: string;
  /** The bucket name written into pointers; pointers naming another bucket are refused. Default `sluice-large-payloads`. */
  bucket?: string;
}

/** Keys S3 would also accept that are safe as relative paths: the Extended Client's key-prefix characters. */
const SAFE_KEY = /^[A-Za-z0-9._/-]{1,1024}$/;

/**
 * A BlobStore on a local (or shared) directory: for one machine, tests, or a network filesystem. A blob is
 * written to a temporary name and renamed, so a reader never sees half of one.
 */
export class DirectoryBlobStore implements BlobStore {
  readonly bucket: string;
  private readonly directory: string;

  constructor(options: DirectoryBlobStoreOptions) {
    this.directory = resolve(options.directory);
    this.bucket = options.bucket ?? 'sluice-large-payloads';
  }

  async put(key: string, body: BlobBody, maxBytes: number): Promise<number> {
    const path = this.pathOf({ bucket: this.bucket, key });
    await mkdir(dirname(path), { recursive: true });
    const partial = `${path}.${randomUUID()}.partial`;
    try {
      let bytes: number;
      if (typeof body === 'string' || body instanceof Uint8Array) {
        const data = inMemoryBytes(body);
        if (data.byteLength > maxBytes) throw tooLarge(maxBytes);
        await writeFile(partial, data);
        bytes = data.byteLength;
      } else {
        const counted = limited(body, maxBytes);
        const file = createWriteStream(partial);
        try {
          await pipeline(counted, file);
        } catch (error) {
          // A source that fails at once may fail while the file is still being opened (on a busy thread pool):
          // once the stream has closed the file exists, and the rm below finds it instead of running first.
          if (!file.closed) await once(file, 'close');
          throw error;
        }
        bytes = counted.bytes;
      }
      await rename(partial, path);
      return bytes;
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
  }

  async get(pointer: BlobPointer): Promise<Readable> {
    // Opened here, not lazily, so a missing blob rejects this call instead of erroring the stream later.
    const file = await open(this.pathOf(pointer), 'r');
    return file.createReadStream();
  }

  async delete(pointer: BlobPointer): Promise<void> {
    await rm(this.pathOf(pointer), { force: true });
  }

  /** A pointer may come from any producer: refuse keys that would leave the directory. */
  private pathOf(pointer: BlobPointer): string {
    if (pointer.bucket !== this.bucket) {
      throw new LargePayloadError(
        `pointer names bucket "${pointer.bucket}"; this directory store holds "${this.bucket}"`,
      );
    }
    const segments = pointer.key.split('/');
    if (!SAFE_KEY.test(pointer.key) || segments.some((s) => s === '' || s === '.' || s === '..')) {
      throw new LargePayloadError(`key "${pointer.key}" cannot be stored in a directory`);
    }
    const path = join(this.directory, ...segments);
    if (!path.startsWith(this.directory + sep)) {
      throw new LargePayloadError(`key "${pointer.key}" leaves the directory`);
    }
    return path;
  }
}
