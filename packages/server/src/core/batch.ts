import { SqsError } from './errors.ts';

/** A batch entry that failed, as both protocols report it. */
export type BatchFailure = { Id: string; SenderFault: boolean; Code: string; Message: string };

/** The failure to report for an entry whose action threw `error`; anything but an SqsError is a bug and thrown on. */
export function batchFailure(id: string, error: unknown): BatchFailure {
  if (!(error instanceof SqsError)) throw error;
  return { Id: id, SenderFault: error.spec.sender, Code: error.spec.queryCode, Message: error.message };
}

/** One entry's result: its Id alone when it succeeded. */
export type BatchEntryResult = { Id: string } | BatchFailure;

/** A batch's answer: Successful and Failed, each left out when empty, as SQS leaves them out. */
export type BatchAnswer<Entry> = { Successful?: Entry[]; Failed?: BatchFailure[] };

export function batchAnswer<Entry>(successful: Entry[], failed: BatchFailure[]): BatchAnswer<Entry> {
  const answer: BatchAnswer<Entry> = {};
  if (successful.length > 0) answer.Successful = successful;
  if (failed.length > 0) answer.Failed = failed;
  return answer;
}

/** A batch's answer from its entries' results in request order: Successful and Failed each keep that order. */
export function batchOutput(results: readonly BatchEntryResult[]): BatchAnswer<{ Id: string }> {
  const successful: Array<{ Id: string }> = [];
  const failed: BatchFailure[] = [];
  for (const result of results) {
    if ('Code' in result) failed.push(result);
    else successful.push(result);
  }
  return batchAnswer(successful, failed);
}
