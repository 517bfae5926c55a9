import type { ChangeVisibilityRequest, MessageReceipt, ReceiptCheck } from './contract.ts';
import type { MessageRow } from './rows.ts';

/** What a receipt is judged against: the stored message's token, receive count and visibility. */
export type ReceiptTarget = Pick<MessageRow, 'receipt_token' | 'receive_count' | 'visible_at'>;

/** The columns a store reads to judge a delete or a visibility change. */
export type MessageState = ReceiptTarget & Pick<MessageRow, 'delivery_started_at' | 'group_id'>;

/**
 * Why a receipt may not act on the message it names under `check.rule` (see ReceiptRule), or undefined
 * when it may. Both stores judge by this; their delete statements say the same in SQL, so the common case
 * takes one statement and only a refused receipt reads the row again to tell why.
 */
export function receiptRefusal(
  target: ReceiptTarget,
  receipt: MessageReceipt,
  check: ReceiptCheck,
): 'invalid' | 'stale' | 'expired' | undefined {
  if (target.receipt_token !== receipt.receiptToken || receipt.receiveCount > target.receive_count)
    return 'invalid';
  if (check.rule === 'anyIssued') return undefined;
  if (receipt.receiveCount < target.receive_count) return 'stale';
  if (check.rule === 'inFlight' && target.visible_at <= check.now) return 'expired';
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
