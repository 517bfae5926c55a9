/**
 * Which records of a batch a function's answer leaves to come back, as Lambda decides it (AWS, "Handling
 * errors for an SQS event source in Lambda", Reporting batch item failures).
 */
import { isJsonObject } from '../../shared/json-object.ts';

/** 'all': the whole batch failed; else the message ids that failed (empty: all succeeded). */
export type BatchOutcome = 'all' | ReadonlySet<string>;

/**
 * With ReportBatchItemFailures: an empty or null answer, or an empty or null `batchItemFailures`, is a
 * success; an answer that is not JSON, or an item whose `itemIdentifier` is null, empty, not a string or not
 * one of the batch's message ids, fails the whole batch.
 */
export function reportedFailures(responseBody: string, messageIds: ReadonlySet<string>): BatchOutcome {
  const text = responseBody.trim();
  if (text === '') return new Set();
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    return 'all';
  }
  if (answer === null) return new Set();
  if (!isJsonObject(answer)) return 'all';
  const items = answer.batchItemFailures;
  if (items === undefined || items === null) return new Set();
  if (!Array.isArray(items)) return 'all';
  const failed = new Set<string>();
  for (const item of items) {
    const id = isJsonObject(item) ? item.itemIdentifier : undefined;
    if (typeof id !== 'string' || id === '' || !messageIds.has(id)) return 'all';
    failed.add(id);
  }
  return failed;
}

/**
 * FIFO: records of one group are processed in order, so once one of a group failed, the group's later
 * records in the batch are not processed either; they are left to come back with it, in order.
 */
export function withLaterGroupRecords(
  records: readonly { messageId: string; groupId: string | undefined }[],
  failed: ReadonlySet<string>,
): Set<string> {
  const stopped = new Set<string>();
  const left = new Set<string>();
  for (const { messageId, groupId } of records) {
    const group = groupId ?? '';
    if (stopped.has(group) || failed.has(messageId)) {
      stopped.add(group);
      left.add(messageId);
    }
  }
  return left;
}
