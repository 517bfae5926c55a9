import type { ChangeVisibilityRequest, MessageReceipt, ReceiptCheck } from './contract.ts';
import type { MessageRow } from './rows.ts';

/** What a receipt is judged against: the stored message's token, receive count and visibility. */
export type ReceiptTarget = Pick<MessageRow, 'receipt_token' | 'receive_count' | 'visible_at'>;

/** The columns a store reads to judge a delete or a visibility change. */
export type MessageState = ReceiptTarget & Pick<MessageRow, 'delivery_started_at' | 'group_id'>;

/**
 * The stored states a receipt may act on under `check.rule` (see ReceiptRule): its token, a receive count in
 * [minReceiveCount, maxReceiveCount] and a visibility after `visibleAfter`. Bounds a statement can test, so a
 * delete that passes is one statement in either store, and the rule is written once, here.
 */
export interface ReceiptBounds {
  seq: number;
  token: string;
  minReceiveCount: number;
  maxReceiveCount: number;
  visibleAfter: number;
}

/** Above any receive count (PostgreSQL's INTEGER column holds no more). */
const ANY_RECEIVE_COUNT = 2_147_483_647;
/** Before any visibility. */
const ANY_TIME = Number.MIN_SAFE_INTEGER;

export function receiptBounds(receipt: MessageReceipt, check: ReceiptCheck): ReceiptBounds {
  return {
    seq: receipt.seq,
    token: receipt.receiptToken,
    // A receipt issued later than the message's last receive was never issued.
    minReceiveCount: receipt.receiveCount,
    // `latest` and `inFlight`: a receipt older than the last receive is stale.
    maxReceiveCount: check.rule === 'anyIssued' ? ANY_RECEIVE_COUNT : receipt.receiveCount,
    visibleAfter: check.rule === 'inFlight' ? check.now : ANY_TIME,
  };
}

/**
 * Why a receipt may not act on the message it names under `check.rule` (see ReceiptRule), or undefined
 * when it may: outside which of its bounds the message is.
 */
export function receiptRefusal(
  target: ReceiptTarget,
  receipt: MessageReceipt,
  check: ReceiptCheck,
): 'invalid' | 'stale' | 'expired' | undefined {
  const bounds = receiptBounds(receipt, check);
  if (target.receipt_token !== bounds.token || target.receive_count < bounds.minReceiveCount)
    return 'invalid';
  if (target.receive_count > bounds.maxReceiveCount) return 'stale';
  if (target.visible_at <= bounds.visibleAfter) return 'expired';
  return undefined;
}

/**
 * Why a visibility change may not be made, or undefined when it may. Under `anyIssued` a message whose
 * timeout lapsed takes the new timeout too (SQS standard queues); under the other rules it must be in flight.
 */
export function visibilityChangeRefusal(
  target: MessageState,
  request: ChangeVisibilityRequest,
): 'invalid' | 'stale' | 'notInFlight' | 'beyondLimit' | undefined {
  const refusal = receiptRefusal(target, request.receipt, request);
  if (refusal === 'invalid' || refusal === 'stale') return refusal;
  if (refusal === 'expired' || (request.rule !== 'anyIssued' && target.visible_at <= request.now))
    return 'notInFlight';
  if (request.visibleAt - (target.delivery_started_at ?? request.now) > request.maxDeliveryMs)
    return 'beyondLimit';
  return undefined;
}
