import assert from 'node:assert/strict';
import { createHash, createPublicKey, generateKeyPairSync, verify, X509Certificate } from 'node:crypto';
import { test } from 'node:test';
import { snsSigning } from '../../packages/server/src/server/sns-signing.ts';

/**
 * A stored key whose certificate serial (the SPKI's SHA-256, first 16 bytes, top bit cleared) would begin with
 * a zero byte the next byte does not need: one key in 256.
 */
function keyWithZeroLeadingSerial(): string {
  for (;;) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
    const hash = createHash('sha256').update(spki).digest();
    if ((hash[0]! & 0x7f) === 0 && hash[1]! < 0x80)
      return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  }
}

test('the signing certificate parses whatever the key (a serial starting 0x00 is illegal DER padding)', async () => {
  const pem = keyWithZeroLeadingSerial();
  const signing = snsSigning({
    clusterState: async () => pem,
    saveClusterState: async () => {},
  });
  const certificate = new X509Certificate((await signing.certificate()).pem);
  const signature = await signing.sign('text', '2');
  assert.equal(
    verify('sha256', Buffer.from('text'), certificate.publicKey, Buffer.from(signature, 'base64')),
    true,
  );
});

test('the key is read or made when first needed, once, not when the server starts', async () => {
  const reads: string[] = [];
  let saved: string | undefined;
  const signing = snsSigning({
    clusterState: async (name) => {
      reads.push(name);
      return saved;
    },
    saveClusterState: async (_name, value) => {
      saved = value;
    },
  });
  assert.deepEqual(reads, []);
  const [url, signature] = await Promise.all([
    signing.certificateUrl('http://127.0.0.1:1'),
    signing.sign('text', '1'),
  ]);
  // Read, found missing, made and saved, read again: once for both callers.
  assert.equal(reads.length, 2);
  const certificate = await signing.certificate();
  assert.equal(url, `http://127.0.0.1:1${certificate.path}`);
  assert.equal(
    verify(
      'sha1',
      Buffer.from('text'),
      new X509Certificate(certificate.pem).publicKey,
      Buffer.from(signature, 'base64'),
    ),
    true,
  );
  assert.equal(reads.length, 2);
});

test('a store that failed to give the key is asked again on the next use', async () => {
  let failures = 1;
  const pem = generateKeyPairSync('rsa', { modulusLength: 1024 })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  const signing = snsSigning({
    clusterState: async () => {
      if (failures-- > 0) throw new Error('store unreachable');
      return pem;
    },
    saveClusterState: async () => {},
  });
  await assert.rejects(signing.certificate(), /store unreachable/);
  assert.match((await signing.certificate()).path, /^\/SimpleNotificationService-[0-9a-f]{32}\.pem$/);
});
