import type { IncomingMessage, ServerResponse } from 'node:http';
import { dispatch, type SqsActions } from '../../core/actions.ts';
import { errors } from '../../core/errors.ts';
import type { AnswerRoom, RequestContext } from '../../core/request-context.ts';
import type { ProtocolAdapter } from '../../protocol/adapter.ts';
import type { AccessKey, Authenticator } from '../auth/access.ts';
import type { PageAccess } from '../auth/page-access.ts';
import { BudgetShare, type ByteBudget } from '../byte-budget.ts';
import type { Logger } from '../logger.ts';
import type { OperatorAudit } from '../operator-audit.ts';
import type { SnsEntry } from '../sns-entry.ts';
import { actorOf } from '../triage-api.ts';
import type { ApiCall, ServeApi } from './api.ts';
import type { Exchange, Reply, Transport } from './front.ts';

export interface SqsRouteParts {
  /** The SQS actions, by name, and the account a request without a key is made by. */
  sqs: { actions: SqsActions; accountId: string };
  transport: Transport;
  auth: Authenticator | undefined;
  pageAccess: PageAccess | undefined;
  operatorAudit: OperatorAudit | undefined;
  logger: Logger;
  /** SNS, served on the same root: a request it claims is decoded, run and answered by it. */
  sns: SnsEntry | undefined;
}

/**
 * The SQS API (and SNS's, which shares all but its model and actions): the caller (a signature, or the console's session), the action and its input as the protocol
 * decodes them, the action's permission, then the action itself (core/actions.ts) and its answer rendered in
 * the request's protocol; purges, deletions and move tasks are written to the audit trail.
 */
export function serveSqs(parts: SqsRouteParts): ServeApi {
  return (exchange, protocol, call) => sqsRequest(parts, exchange, protocol, call);
}

async function sqsRequest(
  parts: SqsRouteParts,
  exchange: Exchange,
  requestProtocol: ProtocolAdapter,
  call: ApiCall,
): Promise<Reply | undefined> {
  const { sqs, transport, auth, pageAccess, operatorAudit, logger } = parts;
  const { request, response, method, baseUrl, requestId } = exchange;
  const { body } = call;
  const sns = parts.sns?.claims(request, body) ? parts.sns : undefined;
  if (sns) call.protocol = sns.protocol;
  const protocol = call.protocol ?? requestProtocol;
  // SNS's links, GETs a subscriber makes unsigned: the SubscribeURL, whose token (128 random hex digits,
  // which no web page or other client can know) is the proof, as on AWS, where ConfirmSubscription needs no
  // signature; and a notification's UnsubscribeURL, whose subscription ARN (a random UUID) is, as on AWS. The
  // SNS service refuses the latter for a subscription that asked for AuthenticateOnUnsubscribe.
  const linkAction = method === 'GET' && sns !== undefined ? exchange.url().searchParams.get('Action') : null;
  const subscribeUrl =
    (linkAction === 'ConfirmSubscription' || linkAction === 'Unsubscribe') &&
    request.headers.authorization === undefined &&
    !exchange.url().searchParams.has('X-Amz-Signature');
  if (method === 'GET') {
    protocol.checkGet(exchange.url());
    // SQS takes a Query request by GET, signed; any web page can make a browser send a GET (an `<img>`, with
    // neither Origin nor, in older browsers, Sec-Fetch-Site). Without credentials Sluice checks no signature,
    // so there a GET must carry one in the Authorization header, which a page cannot add without a CORS
    // preflight; with credentials the signature itself, header or presigned URL, is the proof.
    if (auth === undefined && request.headers.authorization === undefined && !subscribeUrl)
      throw errors.unsignedGet();
  }
  const sessionKey = pageAccess?.sessionCaller(request, baseUrl);
  const caller: AccessKey | undefined =
    sessionKey ??
    (subscribeUrl
      ? undefined
      : auth?.authenticate({ method, target: request.url ?? '/', rawHeaders: request.rawHeaders, body }));
  // Only a Query request reads its URL here: a JSON one's action and input are all in its headers and body.
  const decoded = protocol.decode({
    method,
    get url() {
      return exchange.url();
    },
    headers: request.headers,
    body,
  });
  const action = decoded.action;
  call.action = action;
  // The action is checked now; each queue it touches is checked by the core as it resolves that queue.
  const access = caller && auth?.authorize(caller, action, policyContextOf(request));
  let signal: AbortSignal | undefined;
  let answerRoom: AnswerRoom | undefined;
  const context: RequestContext = {
    baseUrl,
    // Neither a signature (checked or, without credentials, merely present) nor the console's session.
    unauthenticated:
      sessionKey === undefined &&
      request.headers.authorization === undefined &&
      !(method === 'GET' && exchange.url().searchParams.has('X-Amz-Signature')),
    senderId: caller?.accessKeyId ?? senderIdOf(request) ?? sqs.accountId,
    // Only long polls read it, so most requests never pay for an AbortController and a close listener.
    get signal() {
      signal ??= abortedOnClose(response);
      return signal;
    },
    admitLongPoll: () => transport.admitLongPoll(request.socket),
    access,
    traceHeader: request.headers['x-amzn-trace-id'] as string | undefined,
    // Only receives read it, so other requests never pay for a share and a close listener.
    get answerRoom() {
      answerRoom ??= answerShare(transport.answers, response);
      return answerRoom;
    },
  };
  const audit = operatorAudit?.(action, decoded.input, () => ({
    actor: actorOf({ accessKeyId: caller?.accessKeyId }),
    via: sessionKey ? 'console-session' : caller ? 'signature' : 'unauthenticated',
  }));
  const finishAudit = audit && (await audit);
  const output = sns
    ? await sns.dispatch(action, decoded.input, context)
    : await dispatch(sqs.actions, action, decoded.input, context);
  // The action is done: a trail that cannot be written is logged, not answered as the action's failure.
  await finishAudit?.(output).catch((error: unknown) =>
    logger.error({ err: error, requestId, action }, 'audit entry not written'),
  );
  if (response.destroyed) return undefined;
  return { ...protocol.render(action, output, requestId), action };
}

/** A signal that aborts when the client goes away before its answer is written. */
function abortedOnClose(response: ServerResponse): AbortSignal {
  const abort = new AbortController();
  if (response.destroyed) abort.abort();
  else
    response.once('close', () => {
      if (!response.writableFinished) abort.abort();
    });
  return abort.signal;
}

/** Room for one answer's messages, held until the answer is sent or its client has gone. */
function answerShare(answers: ByteBudget, response: ServerResponse): BudgetShare {
  const share = new BudgetShare(answers);
  if (response.destroyed) share.releaseAll();
  else response.once('close', () => share.releaseAll());
  return share;
}

/** The condition keys a caller states about the request's origin (caller-asserted; see docs/guide/authentication.md). */
function policyContextOf(request: IncomingMessage): Record<string, string | undefined> {
  const header = (name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' ? value : undefined;
  };
  return { 'aws:SourceArn': header('x-amz-source-arn'), 'aws:SourceAccount': header('x-amz-source-account') };
}

/** SigV4 `Credential=<access key id>/...`; SQS reports the caller in SenderId. */
function senderIdOf(request: IncomingMessage): string | undefined {
  const authorization = request.headers.authorization;
  const match = authorization ? /Credential=([A-Za-z0-9]+)\//.exec(authorization) : null;
  return match?.[1];
}
