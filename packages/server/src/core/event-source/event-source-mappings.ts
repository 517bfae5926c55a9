/**
 * Lambda's event-source-mapping actions for SQS queues (create, get, list, update, delete), and the pollers
 * of the enabled mappings, started and stopped as the kept mappings change. Only the node running the
 * cluster jobs polls (docs/decisions/event-source-mappings.md); every node answers the API.
 */
import { randomUUID } from 'node:crypto';
import { type Clock, type PeriodicJob, repeatEvery } from '#toolkit/clock';
import type { SqsActions } from '../actions.ts';
import { integerAttribute } from '../queue-attributes.ts';
import type { QueueDirectory } from '../queue-directory.ts';
import { LambdaError, lambdaErrors } from './lambda-errors.ts';
import {
  checkTagCount,
  type EventSourceMapping,
  MAPPING_LIMITS,
  type MappingConfiguration,
  type MappingInput,
  type MappingQueue,
  newMappingSettings,
  parseFunctionName,
  parseTags,
  QUEUE_DELETED_REASON,
  renderMapping,
  USER_INITIATED,
  updatedMapping,
} from './mapping-config.ts';
import type { MappingStore } from './mapping-store.ts';
import { type FunctionInvoker, type MappingObserver, MappingPollers } from './poller.ts';

export interface EventSourceMappingOptions {
  store: MappingStore;
  sqs: Pick<SqsActions, 'ReceiveMessage' | 'DeleteMessageBatch'>;
  queues: Pick<QueueDirectory, 'queueByArn' | 'queueUrl'>;
  clock: Clock;
  region: string;
  accountId: string;
  /** The Invoke API; without it mappings are kept but not polled. */
  invoker?: FunctionInvoker;
  /** The function time-out of mappings created without one (Lambda's default, 3 s). */
  functionTimeoutSeconds?: number;
  observer: MappingObserver;
  onError(error: unknown, message: string): void;
  onNews(details: Record<string, unknown>, message: string): void;
}

export interface ListMappingsRequest {
  eventSourceArn?: string;
  functionName?: string;
  marker?: string;
  maxItems?: number;
}

/** A mapping as `/api/event-source-mappings` lists it: the API's fields and the pollers at work on this node. */
export type MappingDescription = MappingConfiguration & { Pollers: number };

/** `GET /api/event-source-mappings`: the mappings of the queues the viewer may read. */
export interface EventSourceMappingsAnswer {
  mappings: MappingDescription[];
}

/** How often the polling node looks for mappings another node changed. */
const RELOAD_MS = 2_000;
/** ListEventSourceMappings' page without MaxItems. */
const DEFAULT_PAGE = 100;

interface Running {
  mapping: EventSourceMapping;
  pollers: MappingPollers;
}

export class EventSourceMappings {
  private readonly options: EventSourceMappingOptions;
  private readonly running = new Map<string, Running>();
  private polling = false;
  private baseUrl = '';
  private reloads: Promise<void> = Promise.resolve();
  private reloadJob: PeriodicJob | undefined;

  constructor(options: EventSourceMappingOptions) {
    this.options = options;
  }

  private get scope() {
    return { region: this.options.region, accountId: this.options.accountId };
  }

  // ---- The API ---------------------------------------------------------------------------------------

  async create(input: MappingInput): Promise<MappingConfiguration> {
    const arn = input.EventSourceArn;
    if (arn === undefined || arn === null)
      throw lambdaErrors.invalidParameter(
        'Unrecognized event source, must be kinesis, dynamodb stream, sqs, msk, mq, documentdb or kafka.',
      );
    if (typeof arn !== 'string' || !arn.startsWith('arn:'))
      throw lambdaErrors.constraint(
        'eventSourceArn',
        arn,
        'Member must satisfy regular expression pattern: arn:(aws[a-zA-Z0-9-]*):([a-zA-Z0-9\\-])+:([a-z]{2}(-gov)?-[a-z]+-\\d{1})?:(\\d{12})?:(.*)',
      );
    const queue = await this.queueOf(arn);
    const settings = newMappingSettings(
      input,
      queue,
      this.options.functionTimeoutSeconds ?? MAPPING_LIMITS.defaultFunctionTimeoutSeconds,
    );
    const mapping: EventSourceMapping = {
      uuid: randomUUID(),
      eventSourceArn: arn,
      ...settings,
      stateTransitionReason: USER_INITIATED,
      lastModified: this.options.clock.now(),
    };
    // The check and the add are one step of the store: two creates at once (on one node or two) make one.
    const existing = await this.options.store.addMapping(mapping);
    if (existing !== undefined)
      throw lambdaErrors.conflict(
        `The event source arn (" ${arn} ") and function (" ${settings.functionName} ") provided mapping already exists. Please update or delete the existing mapping with UUID ${existing}`,
      );
    void this.reload();
    return renderMapping(mapping, this.scope, 'Creating');
  }

  async get(uuid: string): Promise<MappingConfiguration> {
    return renderMapping(await this.find(uuid), this.scope);
  }

  async list(
    request: ListMappingsRequest,
  ): Promise<{ EventSourceMappings: MappingConfiguration[]; NextMarker?: string }> {
    const name =
      request.functionName === undefined ? undefined : parseFunctionName(request.functionName).name;
    const all = (await this.options.store.loadMappings()).filter(
      (mapping) =>
        (request.eventSourceArn === undefined || mapping.eventSourceArn === request.eventSourceArn) &&
        (name === undefined || mapping.functionName === name),
    );
    const start = request.marker === undefined ? 0 : Number(request.marker);
    if (!Number.isInteger(start) || start < 0) throw lambdaErrors.invalidParameter('Invalid Marker.');
    const size = request.maxItems ?? DEFAULT_PAGE;
    const page = all.slice(start, start + size);
    return {
      EventSourceMappings: page.map((mapping) => renderMapping(mapping, this.scope)),
      ...(start + size < all.length && { NextMarker: String(start + size) }),
    };
  }

  async update(uuid: string, input: MappingInput): Promise<MappingConfiguration> {
    const mapping = await this.find(uuid);
    const queue = await this.queueOf(mapping.eventSourceArn);
    // Refused settings are refused before anything is written; the change applies to the mapping as kept then,
    // so a tagging at the same time is kept too.
    updatedMapping(mapping, input, queue);
    const now = this.options.clock.now();
    const next = await this.options.store.changeMapping(uuid, (current) => ({
      ...updatedMapping(current, input, queue),
      lastModified: now,
    }));
    if (!next) throw lambdaErrors.notFound();
    // Pollers of the old settings finish their invocations under way; the answer does not wait for them.
    void this.reload();
    return renderMapping(next, this.scope, 'Updating');
  }

  async delete(uuid: string): Promise<MappingConfiguration> {
    const mapping = await this.find(uuid);
    await this.options.store.deleteMapping(uuid);
    void this.reload();
    return renderMapping(mapping, this.scope, 'Deleting');
  }

  /**
   * A mapping of the config file: created when its queue has none to that function yet, else updated to
   * these settings (left as it is when they are the same).
   */
  async configure(input: MappingInput, again = false): Promise<void> {
    const name = parseFunctionName(input.FunctionName).name;
    const existing = (await this.options.store.loadMappings()).find(
      (mapping) => mapping.eventSourceArn === input.EventSourceArn && mapping.functionName === name,
    );
    if (!existing) {
      try {
        await this.create(input);
      } catch (error) {
        // Another node starting with the same config file made it since the read: update that one.
        if (again || !(error instanceof LambdaError && error.type === 'ResourceConflictException'))
          throw error;
        await this.configure(input, true);
      }
      return;
    }
    const { EventSourceArn: _same, ...settings } = input;
    const queue = await this.queueOf(existing.eventSourceArn);
    const next = updatedMapping(existing, settings, queue);
    if (JSON.stringify(next) !== JSON.stringify(existing)) await this.update(existing.uuid, settings);
  }

  /** The mappings with their pollers now at work (for `sluice stats` and the console). */
  async describe(): Promise<MappingDescription[]> {
    return (await this.options.store.loadMappings()).map((mapping) => ({
      ...renderMapping(mapping, this.scope),
      Pollers: this.running.get(mapping.uuid)?.pollers.pollers ?? 0,
    }));
  }

  // ---- Tags (ListTags, TagResource, UntagResource on a mapping's ARN) -------------------------------------

  async listTags(arn: string): Promise<{ Tags: Record<string, string> }> {
    return { Tags: { ...(await this.findByArn(arn)).tags } };
  }

  async tagResource(arn: string, input: MappingInput): Promise<void> {
    const mapping = await this.findByArn(arn);
    const added = parseTags(input.Tags);
    if (added === undefined) throw lambdaErrors.invalidParameter('Tags are required.');
    checkTagCount({ ...mapping.tags, ...added });
    // Tags do not change what the pollers do: LastModified stays, so they are not restarted.
    const changed = await this.options.store.changeMapping(mapping.uuid, (current) => {
      const tags = { ...current.tags, ...added };
      checkTagCount(tags);
      return { ...current, tags };
    });
    if (!changed) throw lambdaErrors.notFound();
  }

  async untagResource(arn: string, keys: readonly string[]): Promise<void> {
    const mapping = await this.findByArn(arn);
    const changed = await this.options.store.changeMapping(mapping.uuid, (current) => {
      const tags = { ...current.tags };
      for (const key of keys) delete tags[key];
      const { tags: _old, ...rest } = current;
      return Object.keys(tags).length > 0 ? { ...rest, tags } : rest;
    });
    if (!changed) throw lambdaErrors.notFound();
  }

  /** The mapping an ARN names; Sluice keeps no functions, so a function's ARN names nothing either. */
  private async findByArn(arn: string): Promise<EventSourceMapping> {
    const match = /^arn:aws[a-zA-Z-]*:lambda:([^:]+):(\d{12}):event-source-mapping:([0-9a-fA-F-]{36})$/.exec(
      arn,
    );
    if (!match || match[1] !== this.options.region || match[2] !== this.options.accountId)
      throw lambdaErrors.notFound();
    return this.find(match[3]!);
  }

  private async find(uuid: string): Promise<EventSourceMapping> {
    const mapping = (await this.options.store.loadMappings()).find((candidate) => candidate.uuid === uuid);
    if (!mapping) throw lambdaErrors.notFound();
    return mapping;
  }

  private async queueOf(arn: string): Promise<MappingQueue> {
    const queue = await this.options.queues.queueByArn(arn);
    if (!queue)
      throw lambdaErrors.invalidParameter(
        'Error occurred while ReceiveMessage. SQS Error Code: AWS.SimpleQueueService.NonExistentQueue. SQS Error Message: The specified queue does not exist for this wsdl version.',
      );
    return {
      fifo: queue.fifo,
      visibilityTimeoutSeconds: integerAttribute(queue.attributes, 'VisibilityTimeout'),
    };
  }

  // ---- Polling --------------------------------------------------------------------------------------

  /** This node polls the enabled mappings from now on (it runs the cluster jobs); `baseUrl` names queues. */
  async startPolling(baseUrl: string): Promise<void> {
    this.baseUrl = baseUrl;
    this.polling = true;
    this.reloadJob = repeatEvery(
      this.options.clock,
      RELOAD_MS,
      RELOAD_MS,
      () => this.reload(),
      (error) => this.options.onError(error, 'event source mappings: reload failed'),
    );
    await this.reload();
  }

  /** Stops every poller; resolves once their invocations under way have ended. */
  async stopPolling(): Promise<void> {
    this.polling = false;
    await this.reloadJob?.stop();
    this.reloadJob = undefined;
    await this.reload();
  }

  /** Brings the pollers in line with the kept mappings; reloads run one after the other. */
  reload(): Promise<void> {
    this.reloads = this.reloads
      .then(() => this.reconcile())
      .catch((error: unknown) => this.options.onError(error, 'event source mappings: reload failed'));
    return this.reloads;
  }

  private async reconcile(): Promise<void> {
    const wanted = new Map<string, EventSourceMapping>();
    if (this.polling && this.options.invoker) {
      for (const mapping of await this.options.store.loadMappings())
        if (mapping.enabled) wanted.set(mapping.uuid, mapping);
    }
    const stops: Promise<void>[] = [];
    for (const [uuid, running] of this.running) {
      const mapping = wanted.get(uuid);
      if (mapping && mapping.lastModified === running.mapping.lastModified) continue;
      this.running.delete(uuid);
      stops.push(running.pollers.stop());
    }
    await Promise.all(stops);
    for (const mapping of wanted.values()) {
      if (!this.running.has(mapping.uuid)) await this.begin(mapping);
    }
  }

  private async begin(mapping: EventSourceMapping): Promise<void> {
    const { options } = this;
    const queue = await options.queues.queueByArn(mapping.eventSourceArn);
    if (!queue) {
      await this.queueGone(mapping);
      return;
    }
    const pollers = new MappingPollers(mapping, {
      sqs: options.sqs,
      clock: options.clock,
      invoker: options.invoker!,
      region: options.region,
      queueUrl: options.queues.queueUrl(this.baseUrl, queue.name),
      fifo: queue.fifo,
      context: { baseUrl: this.baseUrl, senderId: options.accountId },
      observer: options.observer,
      onQueueGone: () => {
        void this.queueGone(mapping).catch((error: unknown) =>
          options.onError(error, 'event source mappings: disabling failed'),
        );
      },
      onError: options.onError,
    });
    this.running.set(mapping.uuid, { mapping, pollers });
    pollers.start();
  }

  /** Lambda disables a mapping whose queue is gone, saying why. */
  private async queueGone(mapping: EventSourceMapping): Promise<void> {
    const now = this.options.clock.now();
    // Left as it is when it changed since these pollers began (a newer setting decides).
    const disabled = await this.options.store.changeMapping(mapping.uuid, (current) =>
      current.lastModified !== mapping.lastModified
        ? undefined
        : { ...current, enabled: false, stateTransitionReason: QUEUE_DELETED_REASON, lastModified: now },
    );
    if (!disabled) return;
    this.options.onNews(
      { mapping: mapping.uuid, queue: mapping.eventSourceArn },
      'event source mapping disabled: its queue is gone',
    );
    // Not awaited: this may run inside a reload, which the next one waits for.
    void this.reload();
  }
}
