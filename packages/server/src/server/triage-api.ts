import type { IncomingMessage } from 'node:http';
import { errors, SqsError } from '../core/errors.ts';
import { bodyContains, type MessageFilter, parseFilters } from '../core/message-filter.ts';
import type { QueueDirectory } from '../core/queue-directory.ts';
import { BROWSE_MAX, type MessageTriage, type Selection } from '../core/triage.ts';
import { type JsonObject, readJsonObject } from '../shared/json-object.ts';
import type { MessageAttributes } from '../shared/sqs-values.ts';
import type { QueueRecord } from '../store/contract.ts';
import type { AuditVia } from '../store/triage.ts';
import { json } from './console-api.ts';
import { errorPage, type Page, type PageViewer } from './page.ts';

/** Messages one browse answers with unless `limit` says otherwise. */
const BROWSE_DEFAULT = 20;
/** Audit entries one answer holds at most. */
const AUDIT_MAX = 200;

/** Who an action is recorded as: the signed-in or signing key, or "anonymous" without credentials configured. */
export function actorOf(viewer: { accessKeyId?: string }): string {
  return viewer.accessKeyId ?? 'anonymous';
}

/** How the viewer was authenticated, never what its client says it is: its headers are its own to set. */
function viaOf(viewer: PageViewer): AuditVia {
  return viewer.authenticatedBy ?? 'unauthenticated';
}

/**
 * GET /api/messages?queue=NAME[&after=CURSOR][&limit=N][&text=TEXT][&filter=EXPR...]: a page of the queue's
 * messages, found without receiving them; it shows their bodies, so it needs ReceiveMessage on the queue.
 * GET /api/audit[?before=ID][&limit=N]: the audit trail, newest first, of the queues the viewer may read.
 */
/** What the triage API reads of the core: the queue directory, and the account for a replay's SenderId. */
export interface TriageApiParts {
  queues: QueueDirectory;
  accountId: string;
}

export function triagePages(
  service: TriageApiParts,
  triage: MessageTriage,
): Record<string, (url: URL, viewer: PageViewer) => Promise<Page>> {
  return {
    '/api/messages': (url, viewer) =>
      answer(async () => {
        const params = url.searchParams;
        const queue = await permittedQueue(service, viewer, params.get('queue'), 'ReceiveMessage');
        const limit = integerParam(params.get('limit'), 'limit', 1, BROWSE_MAX) ?? BROWSE_DEFAULT;
        const filters = filtersOf(params.getAll('filter'), params.get('text') ?? undefined);
        const page = await triage.browse(queue, { after: params.get('after') ?? undefined, limit, filters });
        return { queue: queue.name, ...page };
      }),
    '/api/audit': (url, viewer) =>
      answer(async () => {
        const limit = integerParam(url.searchParams.get('limit'), 'limit', 1, AUDIT_MAX) ?? 50;
        const beforeId = integerParam(url.searchParams.get('before'), 'before', 1, Number.MAX_SAFE_INTEGER);
        const entries = await triage.audit.list({ beforeId, limit });
        const readable = [];
        for (const entry of entries) if (await viewer.mayRead(entry.source)) readable.push(entry);
        return { entries: readable, next: entries.length === limit ? String(entries.at(-1)!.id) : undefined };
      }),
  };
}

/** A POST under /api/ that changes state. */
export type TriageChange = (body: string, viewer: PageViewer, request: IncomingMessage) => Promise<Page>;

/**
 * POST /api/messages/replay and /api/messages/delete, with a JSON body naming the queue and the selection:
 * `{"queue": NAME, "ids": [MESSAGE_ID...], "filters": [EXPR...], "text": TEXT}` (ids, filters or text), and
 * for a replay `"destination": NAME` (default: each message's origin), `"body"` (one message) and
 * `"messageAttributes"`. Both change the queue and read its messages to select them: SetQueueAttributes and
 * ReceiveMessage on it. A replay sends: SendMessage on every queue it sends to, each message's origin
 * included, as StartMessageMoveTask's destinations; the replayed messages' SenderId is the replaying key.
 */
export function triageChanges(service: TriageApiParts, triage: MessageTriage): Record<string, TriageChange> {
  const start = async (body: string, viewer: PageViewer) => {
    const input = parseBody(body);
    const queue = await permittedQueue(service, viewer, input.queue, 'SetQueueAttributes');
    if (!(await viewer.mayReceive(queue.name))) throw denied(service, viewer, 'ReceiveMessage', queue.name);
    const selection: Selection = {
      messageIds: optionalStrings(input.ids, 'ids'),
      filters: filtersOf(optionalStrings(input.filters, 'filters') ?? [], optionalText(input.text, 'text')),
    };
    if (selection.messageIds === undefined && selection.filters!.length === 0)
      throw errors.missingParameter('ids, filters or text');
    return { input, queue, selection, actor: { actor: actorOf(viewer), via: viaOf(viewer) } };
  };
  return {
    '/api/messages/replay': (body, viewer) =>
      answer(async () => {
        const { input, queue, selection, actor } = await start(body, viewer);
        const destinationName = optionalText(input.destination, 'destination');
        const destination =
          destinationName === undefined
            ? undefined
            : await permittedQueue(service, viewer, destinationName, 'SendMessage');
        return triage.replay(queue, selection, {
          ...actor,
          destination,
          authorizeDestination: async (target) => {
            if (!(await viewer.maySend(target.name)))
              throw denied(service, viewer, 'SendMessage', target.name);
          },
          senderId: viewer.accessKeyId ?? service.accountId,
          body: optionalText(input.body, 'body'),
          messageAttributes: optionalAttributes(input.messageAttributes),
        });
      }),
    '/api/messages/delete': (body, viewer) =>
      answer(async () => {
        const { queue, selection, actor } = await start(body, viewer);
        return triage.delete(queue, selection, actor);
      }),
  };
}

async function answer(work: () => Promise<unknown>): Promise<Page> {
  try {
    return json(await work());
  } catch (error) {
    if (error instanceof SqsError) return errorPage(error);
    throw error;
  }
}

/**
 * The queue a request names, once the viewer's right on it is checked, before whether it exists (a refused key
 * learns nothing of other queues). Replays and deletes change a queue's contents: they need the right to
 * change its settings (SetQueueAttributes; the console's viewer knows no finer one).
 */
async function permittedQueue(
  service: TriageApiParts,
  viewer: PageViewer,
  name: unknown,
  action: 'ReceiveMessage' | 'SetQueueAttributes' | 'SendMessage',
): Promise<QueueRecord> {
  if (typeof name !== 'string' || name === '') throw errors.missingParameter('queue');
  const right = (
    { ReceiveMessage: 'mayReceive', SetQueueAttributes: 'mayConfigure', SendMessage: 'maySend' } as const
  )[action];
  if (!(await viewer[right](name))) throw denied(service, viewer, action, name);
  return existing(service, name);
}

async function existing(service: TriageApiParts, name: string): Promise<QueueRecord> {
  const queue = await service.queues.queueByName(name);
  if (!queue) throw errors.queueDoesNotExist();
  return queue;
}

function denied(service: TriageApiParts, viewer: PageViewer, action: string, name: string): SqsError {
  return errors.accessDenied(
    `User: ${actorOf(viewer)} is not authorized to perform: sqs:${action} on resource: ${service.queues.queueArn(name)}`,
  );
}

function parseBody(body: string): JsonObject {
  const reading = readJsonObject(body);
  if ('object' in reading) return reading.object;
  throw errors.serialization(
    reading.problem === 'not JSON'
      ? 'The body must be a JSON object: {"queue": NAME, "ids": [...]} or with "filters".'
      : 'The body must be a JSON object.',
  );
}

function filtersOf(texts: readonly string[], text: string | undefined): MessageFilter[] {
  let filters: MessageFilter[];
  try {
    filters = parseFilters(texts);
  } catch (error) {
    throw errors.invalidParameterValue((error as Error).message);
  }
  return text === undefined || text === '' ? filters : [...filters, bodyContains(text)];
}

function integerParam(value: string | null, name: string, min: number, max: number): number | undefined {
  if (value === null) return undefined;
  const number = /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!(number >= min && number <= max))
    throw errors.invalidParameterValue(
      `Value ${value} for parameter ${name} is invalid. Must be between ${min} and ${max}.`,
    );
  return number;
}

function optionalText(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw errors.invalidParameterValue(`${name} must be a string.`);
  return value;
}

function optionalStrings(value: unknown, name: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.length === 0 || !value.every((item) => typeof item === 'string'))
    throw errors.invalidParameterValue(`${name} must be a non-empty list of strings.`);
  return value;
}

function optionalAttributes(value: unknown): MessageAttributes | undefined {
  if (value === undefined || value === null) return undefined;
  const valid =
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.values(value).every(
      (attribute) =>
        attribute !== null &&
        typeof attribute === 'object' &&
        typeof (attribute as { DataType?: unknown }).DataType === 'string',
    );
  if (!valid)
    throw errors.invalidParameterValue(
      'messageAttributes must map names to {"DataType": ..., "StringValue": ...} (or "BinaryValue", base64).',
    );
  return value as MessageAttributes;
}
