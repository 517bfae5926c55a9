/** Large payloads kept on S3 or any S3-compatible store (needs @aws-sdk/client-s3 and @aws-sdk/lib-storage). */

export { S3BlobStore, type S3BlobStoreOptions } from './large-payload/s3-store.ts';
