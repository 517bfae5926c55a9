import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/** SQS's limit on entries per batch request. */
export const MAX_BATCH_ENTRIES = 10;

/** SQS's limit on one delivery's total visibility: 12 hours from the receive. */
export const MAX_VISIBILITY_SECONDS = 43_200;

export interface VisibilityChange {
  receiptHandle: string;
  seconds: number;
}

export interface EntryFailure {
  receiptHandle: string;
  code: string;
  message: string;
}

/** Splits items into runs of at most `size` (SQS batch requests take 10 entries). */
export function chunks<T>(items: readonly T[], size = MAX_BATCH_ENTRIES): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * ChangeMessageVisibilityBatch for any number of entries: heartbeats, failure backoff and releasing
 * unstarted messages all go through here. Returns the entries SQS refused (a request that fails outright
 * refuses all of its entries).
 */
export async function changeVisibility(
  sqs: SQSClient,
  queueUrl: string,
  changes: readonly VisibilityChange[],
): Promise<EntryFailure[]> {
  const failures: EntryFailure[] = [];
  for (const batch of chunks(changes)) {
    try {
      const result = await sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((change, i) => ({
            Id: String(i),
            ReceiptHandle: change.receiptHandle,
            VisibilityTimeout: change.seconds,
          })),
        }),
      );
      for (const failed of result.Failed ?? []) {
        const change = batch[Number(failed.Id)];
        if (change) failures.push(entryFailure(change.receiptHandle, failed.Code, failed.Message));
      }
    } catch (error) {
      for (const change of batch) failures.push(requestFailure(change.receiptHandle, error));
    }
  }
  return failures;
}

/** DeleteMessageBatch for any number of receipt handles; returns the ones SQS refused. */
export async function deleteMessages(
  sqs: SQSClient,
  queueUrl: string,
  receiptHandles: readonly string[],
): Promise<EntryFailure[]> {
  const failures: EntryFailure[] = [];
  for (const batch of chunks(receiptHandles)) {
    try {
      const result = await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: batch.map((receiptHandle, i) => ({ Id: String(i), ReceiptHandle: receiptHandle })),
        }),
      );
      for (const failed of result.Failed ?? []) {
        const receiptHandle = batch[Number(failed.Id)];
        if (receiptHandle) failures.push(entryFailure(receiptHandle, failed.Code, failed.Message));
      }
    } catch (error) {
      for (const receiptHandle of batch) failures.push(requestFailure(receiptHandle, error));
    }
  }
  return failures;
}

function entryFailure(receiptHandle: string, code?: string, message?: string): EntryFailure {
  return { receiptHandle, code: code ?? 'Unknown', message: message ?? '' };
}

function requestFailure(receiptHandle: string, error: unknown): EntryFailure {
  const name = error instanceof Error ? error.name : 'Error';
  return entryFailure(receiptHandle, name, error instanceof Error ? error.message : String(error));
}
