import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  DirectoryBlobStore,
  decodePointer,
  embedPointerInReceiptHandle,
  encodePointer,
  LargePayloadError,
  LargePayloads,
  originalReceiptHandle,
  payloadSize,
  pointerInReceiptHandle,
  pointerOf,
} from 'sluice-client';

describe('large payload pointer format (SQS Extended Client)', () => {
  test('a pointer body is exactly what Jackson writes for PayloadS3Pointer', () => {
    assert.equal(
      encodePointer({ bucket: 'my-bucket', key: 'a/b-1' }),
      '["software.amazon.payloadoffloading.PayloadS3Pointer",{"s3BucketName":"my-bucket","s3Key":"a/b-1"}]',
    );
  });

  test('reads the Python spacing and the legacy Java class name', () => {
    const python =
      '["software.amazon.payloadoffloading.PayloadS3Pointer", {"s3BucketName": "b", "s3Key": "k"}]';
    assert.deepEqual(decodePointer(python), { bucket: 'b', key: 'k' });
    const legacy = '["com.amazon.sqs.javamessaging.MessageS3Pointer",{"s3BucketName":"b2","s3Key":"k2"}]';
    assert.deepEqual(decodePointer(legacy), { bucket: 'b2', key: 'k2' });
  });

  test('refuses bodies that are not pointers, naming why', () => {
    for (const body of [
      'not json',
      '["other.Class",{"s3BucketName":"b","s3Key":"k"}]',
      '[1,2]',
      '{"s3Key":"k"}',
    ]) {
      assert.throws(() => decodePointer(body), LargePayloadError, body);
    }
    assert.throws(() =>
      decodePointer('["software.amazon.payloadoffloading.PayloadS3Pointer",{"s3Key":"k"}]'),
    );
  });

  test('the size attribute, in either name, decides whether a message is offloaded', () => {
    const body = encodePointer({ bucket: 'b', key: 'k' });
    assert.equal(
      pointerOf({ Body: body }),
      undefined,
      'no attribute: an ordinary body that looks like a pointer',
    );
    for (const name of ['ExtendedPayloadSize', 'SQSLargePayloadSize']) {
      const message = {
        Body: body,
        MessageAttributes: { [name]: { DataType: 'Number', StringValue: '300000' } },
      };
      assert.deepEqual(pointerOf(message), { bucket: 'b', key: 'k' });
      assert.equal(payloadSize(message), 300_000);
    }
  });

  test('receipt handles carry the pointer as the Java and Python clients write it', () => {
    const sqsHandle = 'AQEB-abc==';
    const embedded = embedPointerInReceiptHandle(sqsHandle, { bucket: 'bkt', key: 'k/1' });
    assert.equal(embedded, `-..s3BucketName..-bkt-..s3BucketName..--..s3Key..-k/1-..s3Key..-${sqsHandle}`);
    assert.deepEqual(pointerInReceiptHandle(embedded), { bucket: 'bkt', key: 'k/1' });
    assert.equal(originalReceiptHandle(embedded), sqsHandle);
    assert.equal(originalReceiptHandle(sqsHandle), sqsHandle);
    assert.equal(pointerInReceiptHandle(sqsHandle), undefined);
  });

  test('the directory store refuses keys and buckets that would leave its directory', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'sluice-blobs-'));
    try {
      const store = new DirectoryBlobStore({ directory, bucket: 'here' });
      for (const key of ['../escape', 'a/../../b', '/abs', 'a//b', 'spaces are odd', '']) {
        await assert.rejects(store.get({ bucket: 'here', key }), LargePayloadError, key);
      }
      await assert.rejects(store.get({ bucket: 'elsewhere', key: 'k' }), /bucket "elsewhere"/);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  test('offloads above the threshold counting body and attribute bytes, or always when asked', () => {
    const store = new DirectoryBlobStore({ directory: tmpdir() });
    const large = new LargePayloads({ store, thresholdBytes: 10 });
    assert.equal(large.needsOffload({ MessageBody: '0123456789' }), false);
    assert.equal(large.needsOffload({ MessageBody: '01234567890' }), true);
    assert.equal(large.needsOffload({ MessageBody: 'é'.repeat(6) }), true, 'UTF-8 bytes, not characters');
    const attributes = { a: { DataType: 'String', StringValue: 'x' } };
    assert.equal(large.needsOffload({ MessageBody: '01', MessageAttributes: attributes }), false);
    assert.equal(large.needsOffload({ MessageBody: '012', MessageAttributes: attributes }), true);
    assert.equal(new LargePayloads({ store, alwaysOffload: true }).needsOffload({ MessageBody: 'x' }), true);
    assert.throws(() => new LargePayloads({ store, maxPayloadBytes: 3 * 1024 ** 3 }), RangeError);
    assert.throws(() => new LargePayloads({ store, keyPrefix: 'bad prefix' }), RangeError);
  });
});
