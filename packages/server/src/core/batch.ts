import { SqsError } from './errors.ts';

/** A batch entry that failed, as both protocols report it. */
export type BatchFailure = { Id: string; SenderFault: boolean; Code: string; Message: string };

/** The failure to report for an entry whose action threw `error`; anything but an SqsError is a bug and thrown on. */
export function batchFailure(id: string, error: unknown): BatchFailure {
  if (!(error instanceof SqsError)) throw error;
  return { Id: id, SenderFault: error.spec.sender, Code: error.spec.queryCode, Message: error.message };
}
