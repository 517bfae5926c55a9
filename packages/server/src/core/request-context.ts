import type { CallerScope } from './queue-reference.ts';

/** What the transport knows about the request that the rules need. */
export interface RequestContext extends CallerScope {
  /** Scheme, host and port the client used, e.g. http://127.0.0.1:9324; queue URLs are built on it. */
  baseUrl: string;
  /**
   * The request carried no signature and no console session (an SNS UnsubscribeURL followed, an unsigned
   * POST without credentials): SNS refuses it to unsubscribe what requires authentication.
   */
  unauthenticated?: boolean;
  /** The caller's identity as SQS reports it in SenderId (the access key id when signed). */
  senderId: string;
  /** Aborted when the client goes away, so a long poll frees its waiter. */
  signal?: AbortSignal;
  /**
   * The transport's cap on concurrent long polls: takes a slot (returning its release) or throws the
   * error to answer with. Absent: no cap.
   */
  admitLongPoll?: () => () => void;
  /**
   * The request's `X-Amzn-Trace-Id` header: a send stores it as each message's AWSTraceHeader, unless the
   * message names its own (SQS).
   */
  traceHeader?: string;
  /** The transport's bound on message bytes its answers hold at once. Absent: no bound. */
  answerRoom?: AnswerRoom;
}

/** Room in the server's answers for the messages of one receive, held until its answer is sent. */
export interface AnswerRoom {
  /** How many of `count` messages of up to `messageBytes` each there is room for now; at least 1. */
  fits(count: number, messageBytes: number): number;
  /** Takes room for a message of `bytes` now, or returns false. */
  tryTake(bytes: number): boolean;
  /**
   * Resolves true once room for `bytes` is set aside for this answer's next takes (oldest waiter first),
   * false at `waitMs` or on `signal`.
   */
  waitFor(bytes: number, waitMs: number, signal?: AbortSignal): Promise<boolean>;
  /** Gives back what waitFor set aside and the takes since did not use. */
  releaseUnused(): void;
}
