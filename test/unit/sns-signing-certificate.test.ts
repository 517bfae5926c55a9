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
  const signing = await snsSigning({
    clusterState: async () => pem,
    saveClusterState: async () => {},
  });
  const certificate = new X509Certificate(signing.certificatePem);
  const signature = await signing.sign('text', '2');
  assert.equal(
    verify('sha256', Buffer.from('text'), certificate.publicKey, Buffer.from(signature, 'base64')),
    true,
  );
});
