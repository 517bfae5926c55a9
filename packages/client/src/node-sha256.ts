import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';

type Data = string | ArrayBuffer | ArrayBufferView;

/** node:crypto's SHA-256 (an HMAC when given a secret) in the shape @smithy/signature-v4, the SDK's signer, takes. */
export class NodeSha256 {
  private readonly hash: Hash | Hmac;

  constructor(secret?: Data) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytesOf(secret));
  }

  update(data: Data): void {
    this.hash.update(bytesOf(data));
  }

  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }

  reset(): void {}
}

function bytesOf(data: Data): string | Buffer {
  if (typeof data === 'string') return data;
  return ArrayBuffer.isView(data)
    ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
    : Buffer.from(data);
}
