import type { NewMessage } from '../../packages/server/src/store/contract.ts';

/** A plain message for tests that call a store directly: visible at 1, expiring far later. */
export function newMessage(id: string, body: string): NewMessage {
  return {
    messageId: id,
    body,
    messageAttributes: undefined,
    systemAttributes: undefined,
    md5OfBody: 'md5',
    md5OfMessageAttributes: undefined,
    md5OfSystemAttributes: undefined,
    senderId: 'sender',
    sentAt: 1,
    visibleAt: 1,
    expiresAt: 1_000_000,
    groupId: undefined,
    deduplication: undefined,
  };
}
