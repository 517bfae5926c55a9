import type { Clock } from '#toolkit/clock';
import { readJsonObject as readJsonText } from '../shared/json-object.ts';
import type { QueueAttributes } from '../shared/sqs-values.ts';
import type { MessageStore, QueueRecord, QueueStore } from '../store/contract.ts';
import type {
  AddPermissionRequest,
  CreateQueueRequest,
  DeleteQueueRequest,
  GetQueueAttributesRequest,
  GetQueueUrlRequest,
  ListDeadLetterSourceQueuesRequest,
  ListQueuesRequest,
  ListQueueTagsRequest,
  PurgeQueueRequest,
  RemovePermissionRequest,
  SetQueueAttributesRequest,
  TagQueueRequest,
  UntagQueueRequest,
} from './api-types.ts';
import { errors } from './errors.ts';
import { checkFifoThroughputSettings, deduplicatesPerGroup } from './fifo.ts';
import { optionalInteger, requiredString } from './input.ts';
import { type CapacityLimits, LIMITS } from './limits.ts';
import type { LongPoll } from './long-poll.ts';
import { withoutPermission, withPermission } from './permissions.ts';
import type { QueueActivity } from './queue-activity.ts';
import {
  applyAttributeChanges,
  COMPUTED_ATTRIBUTE_NAMES,
  defaultAttributes,
  integerAttribute,
  isKnownAttributeName,
  isTrue,
  validateSettableAttributes,
} from './queue-attributes.ts';
import type { QueueDirectory } from './queue-directory.ts';
import { type CallerScope, isQueueName } from './queue-reference.ts';
import type { ReceiptRules } from './receipt-rules.ts';
import {
  allowsRedriveFrom,
  invalidRedrivePolicy,
  parseRedriveAllowPolicy,
  parseRedrivePolicy,
} from './redrive-policy.ts';
import type { RequestContext } from './request-context.ts';

/** What the queue actions need of the service. */
export interface QueueActionDependencies {
  readonly store: QueueStore & Pick<MessageStore, 'countMessages' | 'purgeQueue'>;
  readonly clock: Clock;
  readonly queues: QueueDirectory;
  readonly limits: CapacityLimits;
  readonly accountId: string;
  readonly activity: QueueActivity;
  readonly receiptRules: ReceiptRules;
  readonly longPoll: LongPoll;
  readonly warn: (details: Record<string, unknown>, message: string) => void;
}

/**
 * The SQS actions on queues themselves (create, look up, list, attributes, tags, permissions, dead-letter
 * sources, delete, purge). Each public method is one action: its input and its output as the model types them
 * (the action table in actions.ts, which names each, is checked against SqsActions).
 */
export class QueueActions {
  private readonly store: QueueActionDependencies['store'];
  private readonly clock: Clock;
  private readonly queues: QueueDirectory;
  private readonly limits: CapacityLimits;
  private readonly accountId: string;
  private readonly activity: QueueActivity;
  private readonly receiptRules: ReceiptRules;
  private readonly longPoll: LongPoll;
  private readonly warn: QueueActionDependencies['warn'];

  constructor(deps: QueueActionDependencies) {
    ({
      store: this.store,
      clock: this.clock,
      queues: this.queues,
      limits: this.limits,
      accountId: this.accountId,
      activity: this.activity,
      receiptRules: this.receiptRules,
      longPoll: this.longPoll,
      warn: this.warn,
    } = deps);
  }

  async CreateQueue(input: CreateQueueRequest, context: RequestContext) {
    const name = requiredString(input, 'QueueName');
    const given = input.Attributes ?? {};
    // CreateQueue's member is lower-case `tags` in the SQS model (TagQueue's is `Tags`).
    const tags = input.tags ?? {};
    const fifo = isTrue(given.FifoQueue);
    if (!isQueueName(name, false) && !(fifo && isQueueName(name, true))) {
      throw errors.invalidParameterValue(
        'Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length',
      );
    }
    if (name.endsWith('.fifo') !== fifo) {
      throw errors.invalidParameterValue(
        'The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.',
      );
    }
    const existing = await this.queues.accessQueue(name, context);
    validateTags(tags);
    const requested = await this.checkPolicies(
      { name, fifo, attributes: defaultAttributes(fifo) },
      validateSettableAttributes(given, { fifo }),
      context,
    );
    const attributes = applyAttributeChanges(defaultAttributes(fifo), requested);
    if (fifo) checkFifoThroughputSettings(attributes);
    const now = this.clock.now();
    if (existing) {
      // The same name with the same given values is the same queue; SQS names the first value that differs.
      const differing = Object.keys(requested).find((key) => existing.attributes[key] !== requested[key]);
      if (differing !== undefined) throw errors.queueNameExists(differing);
      return { QueueUrl: this.queues.queueUrl(context.baseUrl, name) };
    }
    await this.checkQueueCount();
    const deletedAt = await this.store.queueDeletedAt(name);
    if (deletedAt !== undefined && now - deletedAt < LIMITS.deletedQueueNameReuseSeconds * 1000) {
      throw errors.queueDeletedRecently();
    }
    try {
      const perGroup = fifo && deduplicatesPerGroup(attributes);
      await this.store.createQueue({ name, fifo, deduplicatesPerGroup: perGroup, attributes, tags, now });
    } catch (error) {
      // Two creates of one name at once: the loser sees the winner's queue, as a sequential caller would.
      if (!(await this.store.getQueue(name))) throw error;
    }
    return { QueueUrl: this.queues.queueUrl(context.baseUrl, name) };
  }

  async GetQueueUrl(input: GetQueueUrlRequest, context: RequestContext) {
    const name = requiredString(input, 'QueueName');
    const owner = input.QueueOwnerAWSAccountId;
    if (owner !== undefined && owner !== this.accountId) throw errors.queueDoesNotExist();
    const queue = await this.queues.accessQueue(name, context);
    if (!queue) throw errors.queueDoesNotExist();
    return { QueueUrl: this.queues.queueUrl(context.baseUrl, queue.name) };
  }

  async ListQueues(input: ListQueuesRequest, context: RequestContext) {
    const prefix = input.QueueNamePrefix;
    const maxResults = optionalInteger(input, 'MaxResults', 1, LIMITS.maxListQueuesResults);
    const token = input.NextToken;
    const afterName = token === undefined ? undefined : decodeListToken(token);
    const limit = maxResults ?? LIMITS.maxListQueuesResults;
    // Only the queues the caller may use are listed, so a page may have to read past others.
    const page: QueueRecord[] = [];
    let more = false;
    for await (const queue of this.queues.allQueues({ prefix, afterName })) {
      if (!this.queues.allows(context, queue)) continue;
      if (page.length === limit) {
        more = true;
        break;
      }
      page.push(queue);
    }
    const output: { QueueUrls?: string[]; NextToken?: string } = {};
    if (page.length > 0)
      output.QueueUrls = page.map((queue) => this.queues.queueUrl(context.baseUrl, queue.name));
    // SQS pages only when MaxResults is given.
    if (maxResults !== undefined && more) output.NextToken = encodeListToken(page.at(-1)!.name);
    return output;
  }

  async GetQueueAttributes(input: GetQueueAttributesRequest, caller: CallerScope = {}) {
    const queue = await this.queues.resolveQueue(input, caller);
    const requested = input.AttributeNames ?? [];
    for (const name of requested) {
      if (name !== 'All' && !isKnownAttributeName(name)) throw errors.invalidAttributeName(name);
    }
    const all = requested.includes('All');
    const wanted = (name: string) => all || requested.includes(name);
    const result: Record<string, string> = {};
    const computed: Record<(typeof COMPUTED_ATTRIBUTE_NAMES)[number], () => Promise<string> | string> = {
      ApproximateNumberOfMessages: async () => String((await this.counts(queue)).visible),
      ApproximateNumberOfMessagesNotVisible: async () => String((await this.counts(queue)).notVisible),
      ApproximateNumberOfMessagesDelayed: async () => String((await this.counts(queue)).delayed),
      CreatedTimestamp: () => String(Math.floor(queue.createdAt / 1000)),
      LastModifiedTimestamp: () => String(Math.floor(queue.lastModifiedAt / 1000)),
      QueueArn: () => this.queues.queueArn(queue.name),
    };
    for (const name of COMPUTED_ATTRIBUTE_NAMES) if (wanted(name)) result[name] = await computed[name]();
    for (const [name, value] of Object.entries(queue.attributes)) if (wanted(name)) result[name] = value;
    return Object.keys(result).length > 0 ? { Attributes: sortKeys(result) } : {};
  }

  async SetQueueAttributes(input: SetQueueAttributesRequest, caller: CallerScope = {}) {
    const queue = await this.queues.resolveQueue(input, caller);
    const given = input.Attributes;
    if (given === undefined) throw errors.missingParameter('Attributes');
    const changes = await this.checkPolicies(
      queue,
      validateSettableAttributes(given, { fifo: queue.fifo, current: queue.attributes }),
      caller,
    );
    const attributes = applyAttributeChanges(queue.attributes, changes);
    if (!queue.fifo) {
      await this.store.updateQueue(queue.id, { attributes, now: this.clock.now() });
      return {};
    }
    checkFifoThroughputSettings(attributes);
    // A FIFO queue's delay applies to the messages already waiting too (SQS): they never had one of their own.
    const redelay = attributes.DelaySeconds !== queue.attributes.DelaySeconds;
    await this.store.updateQueue(queue.id, {
      attributes,
      now: this.clock.now(),
      waitingDelayMs: redelay ? integerAttribute(attributes, 'DelaySeconds') * 1000 : undefined,
    });
    if (redelay) this.longPoll.notify(queue.id);
    return {};
  }

  async DeleteQueue(input: DeleteQueueRequest, caller: CallerScope = {}) {
    const queue = await this.queues.resolveQueue(input, caller);
    await this.store.deleteQueue(queue.id, this.clock.now());
    this.activity.forget(queue.name);
    this.receiptRules.forget(queue.name);
    return {};
  }

  async PurgeQueue(input: PurgeQueueRequest, caller: CallerScope = {}) {
    const queue = await this.queues.resolveQueue(input, caller);
    // SQS allows one purge per 60 s; the store checks and records it in one step.
    const purged = await this.store.purgeQueue(queue.id, this.clock.now(), LIMITS.purgeWindowSeconds * 1000);
    if (!purged) throw errors.purgeInProgress(queue.name);
    return {};
  }

  async TagQueue(input: TagQueueRequest, caller: CallerScope = {}) {
    const queue = await this.queues.resolveQueue(input, caller);
    const tags = input.Tags;
    // No tags at all is a missing parameter (the Query protocol cannot send an empty map anyway).
    if (tags === undefined || Object.keys(tags).length === 0) throw errors.missingParameter('Tags');
    const merged = { ...queue.tags, ...tags };
    validateTags(merged);
    await this.store.updateQueue(queue.id, { tags: merged, now: queue.lastModifiedAt });
    return {};
  }

  async UntagQueue(input: UntagQueueRequest, caller: CallerScope = {}) {
    const queue = await this.queues.resolveQueue(input, caller);
    const keys = input.TagKeys;
    if (keys === undefined) throw errors.missingParameter('TagKeys');
    if (keys.length === 0)
      throw errors.invalidParameterValue('Tag keys must be between 1 and 128 characters in length.');
    const tags = { ...queue.tags };
    for (const key of keys) delete tags[key];
    await this.store.updateQueue(queue.id, { tags, now: queue.lastModifiedAt });
    return {};
  }

  async ListQueueTags(input: ListQueueTagsRequest, caller: CallerScope = {}) {
    const queue = await this.queues.resolveQueue(input, caller);
    return Object.keys(queue.tags).length > 0 ? { Tags: queue.tags } : {};
  }

  async AddPermission(input: AddPermissionRequest, caller: CallerScope = {}) {
    const queue = await this.queues.resolveQueue(input, caller);
    const label = requiredString(input, 'Label');
    const accounts = input.AWSAccountIds;
    const actions = input.Actions;
    if (!accounts || accounts.length === 0) throw errors.missingParameter('AWSAccountIds');
    if (!actions || actions.length === 0) throw errors.missingParameter('Actions');
    if (!/^[A-Za-z0-9_-]{1,80}$/.test(label)) {
      throw errors.invalidParameter(
        'Label',
        label,
        'Must be 1 to 80 alphanumeric characters, hyphens or underscores.',
      );
    }
    const Policy = withPermission(queue.attributes.Policy, {
      label,
      accountIds: accounts,
      actions,
      queueArn: this.queues.queueArn(queue.name),
    });
    await this.store.updateQueue(queue.id, {
      attributes: { ...queue.attributes, Policy },
      now: this.clock.now(),
    });
    return {};
  }

  async RemovePermission(input: RemovePermissionRequest, caller: CallerScope = {}) {
    const queue = await this.queues.resolveQueue(input, caller);
    const label = requiredString(input, 'Label');
    const Policy = withoutPermission(queue.attributes.Policy, label);
    const { Policy: _previous, ...attributes } = queue.attributes;
    if (Policy !== undefined) attributes.Policy = Policy;
    await this.store.updateQueue(queue.id, { attributes, now: this.clock.now() });
    return {};
  }

  async ListDeadLetterSourceQueues(input: ListDeadLetterSourceQueuesRequest, context: RequestContext) {
    const queue = await this.queues.resolveQueue(input, context);
    const maxResults = optionalInteger(input, 'MaxResults', 1, LIMITS.maxListQueuesResults);
    const token = input.NextToken;
    const after = token === undefined ? undefined : decodeListToken(token);
    const sources = (await this.queues.deadLetterSources(this.queues.queueArn(queue.name), after)).filter(
      (source) => this.queues.allows(context, source),
    );
    const page = sources.slice(0, maxResults ?? LIMITS.maxListQueuesResults);
    const output: { queueUrls: string[]; NextToken?: string } = {
      queueUrls: page.map((source) => this.queues.queueUrl(context.baseUrl, source.name)),
    };
    // SQS pages only when MaxResults is given.
    if (maxResults !== undefined && sources.length > page.length)
      output.NextToken = encodeListToken(page.at(-1)!.name);
    return output;
  }

  /** `maxQueues`: a new queue is refused once the server holds that many. */
  private async checkQueueCount(): Promise<void> {
    const max = this.limits.maxQueues;
    if (max === undefined) return;
    const existing = await this.store.listQueues({ limit: max });
    if (existing.length >= max) {
      throw errors.overLimit(`This server holds at most ${max} queues (--max-queues); delete one first.`);
    }
  }

  private async counts(queue: QueueRecord) {
    return this.store.countMessages(queue.id, this.clock.now());
  }

  /**
   * RedrivePolicy must name an existing queue of ours, of the same type, whose RedriveAllowPolicy lets this
   * queue use it; the other policies must be JSON objects. Returns the changes with RedrivePolicy in SQS's
   * canonical form (maxReceiveCount a number, whatever was sent).
   */
  private async checkPolicies(
    queue: Pick<QueueRecord, 'name' | 'fifo' | 'attributes'>,
    changes: QueueAttributes,
    caller: CallerScope,
  ): Promise<QueueAttributes> {
    if (changes.Policy) readJsonObject('Policy', changes.Policy);
    if (changes.RedriveAllowPolicy) {
      const allowPolicy = parseRedriveAllowPolicy(changes.RedriveAllowPolicy);
      // Letting a queue use this one as its DLQ concerns that queue too: the caller must be allowed there.
      if (allowPolicy.redrivePermission === 'byQueue')
        for (const sourceArn of allowPolicy.sourceQueueArns)
          await this.queues.accessQueueByArn(sourceArn, caller);
    }
    const redrive = changes.RedrivePolicy;
    if (!redrive) return changes;
    const policy = parseRedrivePolicy(redrive);
    const arn = policy.deadLetterTargetArn;
    // Messages will move into the dead-letter queue: the caller must be allowed there.
    const target = await this.queues.accessQueueByArn(arn, caller);
    if (!target) throw invalidRedrivePolicy(redrive, 'Dead letter target does not exist.');
    if (target.fifo !== queue.fifo) {
      throw invalidRedrivePolicy(
        redrive,
        `Dead-letter queue must be of the same type as the source queue: ${queue.fifo ? 'FIFO' : 'standard'}.`,
      );
    }
    const sourceArn = this.queues.queueArn(queue.name);
    if (!allowsRedriveFrom(target.attributes.RedriveAllowPolicy, sourceArn)) {
      throw invalidRedrivePolicy(
        redrive,
        `The dead-letter queue's RedriveAllowPolicy does not allow ${sourceArn} to use it.`,
      );
    }
    // The retention trap: a standard message keeps its send time in the DLQ, so a DLQ that keeps messages no
    // longer than the source can drop one as soon as it arrives. SQS accepts this; Sluice says so, unless the
    // DLQ's retention was chosen (is not the default): whoever set it knows (docs/decisions/retention-warning.md).
    // A queue may name itself (SQS accepts that too), and then nothing is ever moved (see deadLetterTarget).
    const sourceRetention = integerAttribute({ ...queue.attributes, ...changes }, 'MessageRetentionPeriod');
    const targetRetention = integerAttribute(target.attributes, 'MessageRetentionPeriod');
    const defaultRetention = integerAttribute(defaultAttributes(target.fifo), 'MessageRetentionPeriod');
    if (
      !queue.fifo &&
      target.name !== queue.name &&
      targetRetention <= sourceRetention &&
      targetRetention === defaultRetention
    ) {
      this.warn(
        { queue: queue.name, deadLetterQueue: target.name, sourceRetention, targetRetention },
        `dead-letter queue ${target.name} keeps messages ${targetRetention} s, not longer than ${queue.name}'s ` +
          `${sourceRetention} s: a message keeps its original send time when moved, so it may expire in the ` +
          'DLQ as soon as it arrives; give the DLQ a longer MessageRetentionPeriod',
      );
    }
    return { ...changes, RedrivePolicy: JSON.stringify(policy) };
  }
}

function validateTags(tags: Record<string, string>): void {
  const keys = Object.keys(tags);
  if (keys.length > LIMITS.maxTagsPerQueue) {
    throw errors.invalidParameterValue(
      `Too many tags added for queue. A queue can have at most ${LIMITS.maxTagsPerQueue} tags.`,
    );
  }
  for (const [key, value] of Object.entries(tags)) {
    if (key.length === 0 || key.length > 128)
      throw errors.invalidParameter('TagKey', key, 'Tag keys must be 1 to 128 characters.');
    if (value.length > 256)
      throw errors.invalidParameter('TagValue', value, 'Tag values must be at most 256 characters.');
  }
}

function readJsonObject(name: string, text: string): Record<string, unknown> {
  const reading = readJsonText(text);
  if ('object' in reading) return reading.object;
  throw errors.invalidAttributeValue(
    name,
    reading.problem === 'not JSON' ? 'Invalid JSON.' : 'Must be a JSON object.',
  );
}

function sortKeys(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}

function encodeListToken(lastName: string): string {
  return Buffer.from(JSON.stringify({ after: lastName })).toString('base64url');
}

function decodeListToken(token: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as { after?: unknown };
    if (typeof parsed.after === 'string') return parsed.after;
  } catch {
    // fall through to the error below
  }
  throw errors.invalidParameter('NextToken', token, 'Invalid or expired next token.');
}
