import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPair,
  type KeyObject,
  sign,
} from 'node:crypto';
import type { NotificationSigner } from '../core/sns/envelope.ts';
import type { ClusterStore } from '../store/contract.ts';

/** Where the certificate is served: AWS's file name pattern, `SimpleNotificationService-<hash>.pem`. */
export const SNS_CERTIFICATE_PREFIX = '/SimpleNotificationService-';

/** The cluster state document holding the signing key (PKCS#8 PEM), so it survives restarts. */
const KEY_DOCUMENT = 'sns-signing-key';

export interface SnsSigning extends NotificationSigner {
  /** The certificate's path on this server and its PEM text. */
  certificate(): Promise<{ path: string; pem: string }>;
}

/** The key and what is derived from it once. */
interface SigningKey {
  key: KeyObject;
  certificatePath: string;
  certificatePem: string;
}

/**
 * The server's SNS signing key, kept in the store (one key for every node, made by the first that needs it),
 * and a self-signed certificate for it, which the server serves at `SigningCertURL`. A client that checks
 * that the URL is an amazonaws.com host (as AWS's own validators do) will not accept it: Sluice is not AWS.
 *
 * Read or made when first needed, not at start: a 2048-bit RSA key takes 130-280 ms of CPU here, which every
 * start of an in-memory server (a test's, a CI job's) paid though most never publish.
 */
export function snsSigning(store: Pick<ClusterStore, 'clusterState' | 'saveClusterState'>): SnsSigning {
  let loading: Promise<SigningKey> | undefined;
  const signingKey = (): Promise<SigningKey> => {
    loading ??= loadOrMakeKey(store).catch((error: unknown) => {
      // A store that failed now may work on the next request.
      loading = undefined;
      throw error;
    });
    return loading;
  };
  return {
    certificate: async () => {
      const { certificatePath, certificatePem } = await signingKey();
      return { path: certificatePath, pem: certificatePem };
    },
    // With a callback, node:crypto signs in its thread pool: a publish signs one notification per message.
    sign: async (text, version) => {
      const { key } = await signingKey();
      return new Promise((resolve, reject) =>
        sign(version === '2' ? 'sha256' : 'sha1', Buffer.from(text, 'utf8'), key, (error, signature) =>
          error ? reject(error) : resolve(signature.toString('base64')),
        ),
      );
    },
    certificateUrl: async (baseUrl) => `${baseUrl}${(await signingKey()).certificatePath}`,
  };
}

async function loadOrMakeKey(
  store: Pick<ClusterStore, 'clusterState' | 'saveClusterState'>,
): Promise<SigningKey> {
  let pem = await store.clusterState(KEY_DOCUMENT);
  if (pem === undefined) {
    // Made in the thread pool: the event loop goes on serving meanwhile.
    const privateKey = await new Promise<KeyObject>((resolve, reject) =>
      generateKeyPair('rsa', { modulusLength: 2048 }, (error, _publicKey, key) =>
        error ? reject(error) : resolve(key),
      ),
    );
    await store.saveClusterState(
      KEY_DOCUMENT,
      privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    );
    // Two nodes starting at once: both use the key saved last.
    pem = (await store.clusterState(KEY_DOCUMENT))!;
  }
  const key = createPrivateKey(pem);
  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  const hash = createHash('sha256').update(spki).digest('hex').slice(0, 32);
  return {
    key,
    certificatePath: `${SNS_CERTIFICATE_PREFIX}${hash}.pem`,
    certificatePem: toPem(selfSignedCertificate(key, spki)),
  };
}

function toPem(der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}

// ---- A minimal DER writer: Node makes keys but not X.509 certificates ------------------------------------

const tlv = (tag: number, content: Buffer): Buffer => {
  const length = content.length;
  let header: Buffer;
  if (length < 0x80) header = Buffer.from([tag, length]);
  else {
    const bytes: number[] = [];
    for (let rest = length; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
    header = Buffer.from([tag, 0x80 | bytes.length, ...bytes]);
  }
  return Buffer.concat([header, content]);
};
const sequence = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]) => tlv(0x31, Buffer.concat(items));
const integer = (bytes: Buffer) =>
  tlv(0x02, (bytes[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
const NULL = Buffer.from([0x05, 0x00]);

function oid(text: string): Buffer {
  const [first, second, ...rest] = text.split('.').map(Number);
  const bytes = [first! * 40 + second!];
  for (const part of rest) {
    const chunk: number[] = [part & 0x7f];
    for (let value = part >>> 7; value > 0; value >>>= 7) chunk.unshift(0x80 | (value & 0x7f));
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

const utcTime = (text: string) => tlv(0x17, Buffer.from(text, 'ascii'));
const SHA256_WITH_RSA = sequence(oid('1.2.840.113549.1.1.11'), NULL);
const NAME = sequence(set(sequence(oid('2.5.4.3'), tlv(0x0c, Buffer.from('sluice.sns.local', 'utf8')))));

/** An X.509 v3 certificate for the key, issued by itself; the same bytes from the same key every time. */
function selfSignedCertificate(key: KeyObject, spki: Buffer): Buffer {
  const serial = createHash('sha256').update(spki).digest().subarray(0, 16);
  // Positive and minimal in DER: a first byte of 0x00 (a hash beginning 0x00 or 0x80, one key in 128) is
  // "illegal padding" to every X.509 parser, so the certificate would not load.
  serial[0] = (serial[0]! & 0x3f) | 0x40;
  const tbs = sequence(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(serial),
    SHA256_WITH_RSA,
    NAME,
    sequence(utcTime('200101000000Z'), utcTime('491231235959Z')),
    NAME,
    spki,
  );
  const signature = sign('sha256', tbs, key);
  return sequence(tbs, SHA256_WITH_RSA, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
}
