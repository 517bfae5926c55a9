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

/** A batch's answer from its entries' results in request order: Successful and Failed each keep that order. */
export function batchOutput(results: readonly BatchEntryResult[]): {
  Successful: Array<{ Id: string }>;
  Failed: BatchFailure[];
} {
  const successful: Array<{ Id: string }> = [];
  const failed: BatchFailure[] = [];
  for (const result of results) {
    if ('Code' in result) failed.push(result);
    else successful.push(result);
  }
  return { Successful: successful, Failed: failed };
}
