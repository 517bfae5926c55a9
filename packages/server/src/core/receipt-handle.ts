import { randomBytes } from 'node:crypto';
import { errors } from './errors.ts';

/**
 * A receipt handle names one receive of one message: the queue, the store's message seq, which receive it
 * was (the message's receive count then) and the message's receipt token. The store draws the token at the
 * first receive and keeps it, so every handle issued for a message carries it: a handle with another token
 * was never issued, and the receive count tells the latest handle from older ones.
 */
export interface ReceiptHandle {
  queueId: number;
  seq: number;
  receiveCount: number;
  token: string;
}

const PREFIX = 'sluice2';
const FORMAT = /^sluice2:(\d{1,15}):(\d{1,15}):(\d{1,9}):([0-9a-f]{16})$/;

// Tokens are cut from a pool of random bytes: one randomBytes call per 512 tokens instead of per token.
const POOL_TOKENS = 512;
let pool = Buffer.alloc(0);
let poolOffset = 0;

export function newReceiptToken(): string {
  if (poolOffset >= pool.length) {
    pool = randomBytes(8 * POOL_TOKENS);
    poolOffset = 0;
  }
  const token = pool.toString('hex', poolOffset, poolOffset + 8);
  poolOffset += 8;
  return token;
}

export function encodeReceiptHandle(handle: ReceiptHandle): string {
  return Buffer.from(
    `${PREFIX}:${handle.queueId}:${handle.seq}:${handle.receiveCount}:${handle.token}`,
  ).toString('base64url');
}

/** Parses a handle given by a client; anything not in the form Sluice issues is ReceiptHandleIsInvalid. */
export function decodeReceiptHandle(text: string): ReceiptHandle {
  const match = FORMAT.exec(Buffer.from(text, 'base64url').toString('latin1'));
  if (!match || text.length > 200) throw errors.receiptHandleIsInvalid(text);
  return {
    queueId: Number(match[1]),
    seq: Number(match[2]),
    receiveCount: Number(match[3]),
    token: match[4]!,
  };
}
