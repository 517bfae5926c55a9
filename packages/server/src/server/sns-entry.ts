import type { IncomingMessage } from 'node:http';
import type { RequestContext } from '../core/request-context.ts';
import { dispatchSns, isSnsAction } from '../core/sns/sns-dispatch.ts';
import { snsErrors } from '../core/sns/sns-errors.ts';
import type { SnsActions } from '../core/sns/sns-service.ts';
import type { ProtocolAdapter } from '../protocol/adapter.ts';
import { queryProtocolFor } from '../protocol/query.ts';
import { SNS_QUERY } from '../protocol/sns-model.ts';

/** The SNS API on Sluice's port: which requests are SNS's, how they are decoded, and who runs them. */
export interface SnsEntry {
  /** Whether the request is for SNS (see serveSns). */
  claims(request: IncomingMessage, body: string): boolean;
  readonly protocol: ProtocolAdapter;
  dispatch(
    action: string,
    input: Record<string, unknown>,
    context: RequestContext,
  ): Promise<Record<string, unknown>>;
}

const SNS_SCOPE = /Credential=[^/,\s]+\/\d{8}\/[^/]+\/sns\//;
/** Actions both services have: SNS's name a topic. */
const SHARED_ACTIONS = new Set(['AddPermission', 'RemovePermission']);

/**
 * A request is SNS's when its SigV4 credential scope names the service `sns` (in the Authorization header or
 * a presigned URL's X-Amz-Credential); unsigned, when its Action is an SNS action (AddPermission and
 * RemovePermission, which SQS has too, when they name a TopicArn). SNS speaks only the Query protocol, so a
 * JSON request (X-Amz-Target) is always SQS's.
 */
export function serveSns(service: SnsActions): SnsEntry {
  const query = queryProtocolFor(SNS_QUERY);
  // The transport's refusals (a key's action list) are SQS's AccessDenied; SNS words them AuthorizationError.
  const protocol: ProtocolAdapter = {
    ...query,
    renderError: (error, requestId) =>
      query.renderError(
        error.code === 'AccessDenied'
          ? snsErrors.authorization(error.message.replace(' perform: sqs:', ' perform: SNS:'))
          : error,
        requestId,
      ),
  };
  return {
    protocol,
    claims(request, body) {
      if (request.headers['x-amz-target'] !== undefined) return false;
      const authorization = request.headers.authorization;
      if (typeof authorization === 'string') return SNS_SCOPE.test(authorization);
      const url = request.url ?? '/';
      const query = url.indexOf('?');
      const params = new URLSearchParams(query < 0 ? '' : url.slice(query + 1));
      const credential = params.get('X-Amz-Credential');
      if (credential !== null) return credential.split('/')[3] === 'sns';
      if (request.method === 'POST')
        for (const [name, value] of new URLSearchParams(body)) params.append(name, value);
      const action = params.get('Action') ?? '';
      return isSnsAction(action) && (!SHARED_ACTIONS.has(action) || params.has('TopicArn'));
    },
    dispatch: (action, input, context) => dispatchSns(service, action, input, context),
  };
}
