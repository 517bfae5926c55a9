import { readFileSync } from 'node:fs';
import type { ActionTable } from '../core/actions.ts';
import type { AlarmSettings } from '../core/dlq-alarms.ts';
import { SqsError } from '../core/errors.ts';
import type { MoveTaskSettings } from '../core/move-tasks.ts';
import { attributeCatalog, JSON_POLICY_ATTRIBUTES } from '../core/queue-attributes.ts';
import type { QueueDirectory } from '../core/queue-directory.ts';
import type { RequestContext } from '../core/request-context.ts';
import type { SnsService } from '../core/sns/sns-service.ts';
import type { QueueAttributes } from '../shared/sqs-values.ts';
import type { AccessKey } from './auth/access.ts';
import { isWebhookUrl } from './webhooks.ts';

/**
 * `--config FILE`: queues to create, or bring up to date, at start (like ElasticMQ's configuration), the
 * move-task defaults ("redrive"), the DLQ alarms ("alarms") and access keys ("credentials"). Every key is
 * described in docs/guide/config-file.md; a key not known here is an error, not ignored.
 */
export interface ConfigFile {
  queues?: ConfigQueue[];
  topics?: ConfigTopic[];
  redrive?: Partial<MoveTaskSettings>;
  /** `topics`: SNS topics (names or ARNs) each alarm is published to, as JSON. */
  alarms?: Partial<AlarmSettings> & { webhooks?: string[]; topics?: string[] };
  credentials?: AccessKey[];
  metricsToken?: string;
  /** Event source mappings: their Invoke endpoint and function time-out, and mappings made at start. */
  lambda?: ConfigLambda;
  /** SNS's HTTP/HTTPS subscribers: `httpAllow` as `--sns-http-allow`, `httpCa` as `--sns-http-ca`. */
  sns?: { httpAllow?: string[]; httpCa?: string };
}

export interface ConfigLambda {
  /** As `--lambda-endpoint`. */
  endpoint?: string;
  /** Invoke endpoints by function name, for functions served elsewhere than `endpoint`. */
  functions?: Record<string, string>;
  /** As `--lambda-timeout`. */
  functionTimeoutSeconds?: number;
  /**
   * Mappings made at start, each as CreateEventSourceMapping's request (`EventSourceArn`, `FunctionName`,
   * `BatchSize`...): created when the queue has none to that function yet, else updated to these settings.
   */
  eventSourceMappings?: Record<string, unknown>[];
}

const LAMBDA_KEYS: Record<keyof ConfigLambda, true> = {
  endpoint: true,
  functions: true,
  functionTimeoutSeconds: true,
  eventSourceMappings: true,
};

export const METRICS_TOKEN_RULE = 'must be 16 to 256 visible ASCII characters, without spaces';

/** Long enough not to be guessed, and what an Authorization header can carry as it is. */
export function isMetricsToken(value: unknown): value is string {
  return typeof value === 'string' && /^[\x21-\x7e]{16,256}$/.test(value);
}

export interface ConfigQueue {
  name: string;
  /** As SQS takes them, strings (the file may write numbers, booleans, and the JSON policies as objects). */
  attributes?: QueueAttributes;
  tags?: Record<string, string>;
  /**
   * Sluice's own setting, not an SQS attribute: true refuses stale receipt handles on this standard queue,
   * false keeps SQS's behaviour though `--strict-receipt-handles` is given. FIFO queues already refuse them.
   */
  strictReceiptHandles?: boolean;
}

/** An SNS topic, and its subscriptions to this server's queues (named as in "queues"). */
export interface ConfigTopic {
  name: string;
  /** As SNS takes them, strings (numbers, booleans and JSON policies may be written as they are). */
  attributes?: Record<string, string>;
  tags?: Record<string, string>;
  subscriptions?: ConfigSubscription[];
}

export interface ConfigSubscription {
  /** The queue's name on this server. */
  queue: string;
  /** FilterPolicy, FilterPolicyScope, RawMessageDelivery, RedrivePolicy (JSON ones as objects or text). */
  attributes?: Record<string, string>;
}

// The keys each section may hold. Typed by the settings they fill, so that a new setting does not compile
// until it is listed here, and a key the server would not read (a typo) is refused instead of ignored.
const FILE_KEYS: Record<keyof ConfigFile, true> = {
  queues: true,
  topics: true,
  redrive: true,
  alarms: true,
  credentials: true,
  metricsToken: true,
  lambda: true,
  sns: true,
};
const QUEUE_KEYS: Record<keyof ConfigQueue, true> = {
  name: true,
  attributes: true,
  tags: true,
  strictReceiptHandles: true,
};
const TOPIC_KEYS: Record<keyof ConfigTopic, true> = {
  name: true,
  attributes: true,
  tags: true,
  subscriptions: true,
};
const SUBSCRIPTION_KEYS: Record<keyof ConfigSubscription, true> = { queue: true, attributes: true };
const REDRIVE_KEYS: Record<keyof MoveTaskSettings, true> = { defaultRate: true, backlogLimit: true };
const ALARM_KEYS: Record<keyof NonNullable<ConfigFile['alarms']>, true> = {
  threshold: true,
  periodSeconds: true,
  queues: true,
  webhooks: true,
  topics: true,
};
const ALARM_QUEUE_KEYS: Record<keyof AlarmSettings['queues'][string], true> = {
  threshold: true,
  silenced: true,
};
const CREDENTIAL_KEYS: Record<keyof AccessKey, true> = {
  accessKeyId: true,
  secretAccessKey: true,
  queues: true,
  actions: true,
  accountId: true,
};
const ATTRIBUTE_KEYS: Record<string, true> = Object.fromEntries(
  attributeCatalog().settable.map(({ name }) => [name, true]),
);

/** AWS access key ids are letters and digits; `:` must stay free for `--credentials ID:SECRET`. */
export const ACCESS_KEY_ID = /^[A-Za-z0-9_]{1,128}$/;

/** Checks one file's sections, naming the file and the key in every complaint. */
class ConfigReader {
  constructor(private readonly path: string) {}

  fail(message: string): never {
    throw new Error(`config file ${this.path}: ${message}`);
  }

  lambda(value: unknown): ConfigLambda {
    const { endpoint, functions, functionTimeoutSeconds, eventSourceMappings } = this.object(
      value,
      'lambda',
      LAMBDA_KEYS,
    );
    const lambda: ConfigLambda = {};
    if (endpoint !== undefined) {
      if (typeof endpoint !== 'string' || !/^https?:\/\//.test(endpoint))
        this.fail('"lambda.endpoint" must be an http:// or https:// URL');
      lambda.endpoint = endpoint;
    }
    if (functions !== undefined) {
      const named = this.anyObject(functions, 'lambda.functions');
      lambda.functions = {};
      for (const [name, url] of Object.entries(named)) {
        if (typeof url !== 'string' || !/^https?:\/\//.test(url))
          this.fail(`"lambda.functions.${name}" must be an http:// or https:// URL`);
        lambda.functions[name] = url;
      }
    }
    if (functionTimeoutSeconds !== undefined) {
      if (
        typeof functionTimeoutSeconds !== 'number' ||
        !(functionTimeoutSeconds >= 1 && functionTimeoutSeconds <= 900)
      )
        this.fail('"lambda.functionTimeoutSeconds" must be a number from 1 to 900');
      lambda.functionTimeoutSeconds = functionTimeoutSeconds;
    }
    if (eventSourceMappings !== undefined) {
      if (!Array.isArray(eventSourceMappings)) this.fail('"lambda.eventSourceMappings" must be a list');
      lambda.eventSourceMappings = eventSourceMappings.map((mapping, index) =>
        this.anyObject(mapping, `lambda.eventSourceMappings[${index}]`),
      );
    }
    return lambda;
  }

  /** `value` as an object none of whose keys is outside `known`. */
  object(value: unknown, where: string, known: Record<string, true>): Record<string, unknown> {
    const object = this.anyObject(value, where);
    for (const key of Object.keys(object)) {
      if (!Object.hasOwn(known, key))
        this.fail(`unknown key "${where}.${key}" (known: ${Object.keys(known).join(', ')})`);
    }
    return object;
  }

  anyObject(value: unknown, where: string): Record<string, unknown> {
    if (!value || typeof value !== 'object' || Array.isArray(value))
      this.fail(`"${where}" must be an object`);
    return value as Record<string, unknown>;
  }

  /** The non-negative numbers among `keys` of a section (absent ones stay absent). */
  numbers<K extends string>(section: Record<string, unknown>, where: string, keys: readonly K[]) {
    const result: Partial<Record<K, number>> = {};
    for (const key of keys) {
      const field = section[key];
      if (field === undefined) continue;
      if (typeof field !== 'number' || !(field >= 0))
        this.fail(`"${where}.${key}" must be a non-negative number`);
      result[key] = field;
    }
    return result;
  }

  topic(value: unknown, index: number): ConfigTopic {
    const where = `topics[${index}]`;
    if (!value || typeof value !== 'object' || typeof (value as { name?: unknown }).name !== 'string')
      this.fail(`${where} needs a "name"`);
    const { name, attributes, tags, subscriptions } = this.object(value, where, TOPIC_KEYS);
    const topic: ConfigTopic = { name: name as string };
    if (attributes !== undefined) topic.attributes = this.strings(attributes, `${where}.attributes`);
    if (tags !== undefined) topic.tags = this.strings(tags, `${where}.tags`, false);
    if (subscriptions !== undefined) {
      if (!Array.isArray(subscriptions)) this.fail(`"${where}.subscriptions" must be a list`);
      topic.subscriptions = subscriptions.map((subscription: unknown, n) => {
        const at = `${where}.subscriptions[${n}]`;
        const fields = this.object(subscription, at, SUBSCRIPTION_KEYS);
        if (typeof fields.queue !== 'string') this.fail(`${at} needs a "queue" (a queue's name)`);
        const entry: ConfigSubscription = { queue: fields.queue };
        if (fields.attributes !== undefined)
          entry.attributes = this.strings(fields.attributes, `${at}.attributes`);
        return entry;
      });
    }
    return topic;
  }

  /** A map of strings; with `convert`, numbers and booleans as text and objects (policies) as JSON. */
  strings(value: unknown, where: string, convert = true): Record<string, string> {
    const result: Record<string, string> = {};
    for (const [key, field] of Object.entries(this.anyObject(value, where))) {
      if (typeof field === 'string') result[key] = field;
      else if (convert && (typeof field === 'number' || typeof field === 'boolean'))
        result[key] = String(field);
      else if (convert && field !== null && typeof field === 'object') result[key] = JSON.stringify(field);
      else this.fail(`"${where}.${key}" must be a string`);
    }
    return result;
  }

  queue(value: unknown, index: number): ConfigQueue {
    const where = `queues[${index}]`;
    if (!value || typeof value !== 'object' || typeof (value as { name?: unknown }).name !== 'string')
      this.fail(`${where} needs a "name"`);
    const { name, attributes, tags, strictReceiptHandles } = this.object(value, where, QUEUE_KEYS);
    const queue: ConfigQueue = { name: name as string };
    if (attributes !== undefined) {
      const given = this.object(attributes, `${where}.attributes`, ATTRIBUTE_KEYS);
      queue.attributes = {};
      for (const [key, field] of Object.entries(given))
        queue.attributes[key] = this.attributeValue(`${where}.attributes.${key}`, key, field);
    }
    if (tags !== undefined) {
      queue.tags = {};
      for (const [key, field] of Object.entries(this.anyObject(tags, `${where}.tags`))) {
        if (typeof field !== 'string') this.fail(`"${where}.tags.${key}" must be a string`);
        queue.tags[key] = field;
      }
    }
    if (strictReceiptHandles !== undefined) {
      if (typeof strictReceiptHandles !== 'boolean')
        this.fail(`"${where}.strictReceiptHandles" must be true or false`);
      // A key the server would not act on is refused, not ignored: a FIFO queue cannot be made lenient.
      if (queue.name.endsWith('.fifo'))
        this.fail(
          `"${where}.strictReceiptHandles" is for standard queues: FIFO queues always refuse stale handles`,
        );
      queue.strictReceiptHandles = strictReceiptHandles;
    }
    return queue;
  }

  /** SQS's string for an attribute; a policy written as a JSON object is sent as its JSON text. */
  private attributeValue(where: string, name: string, value: unknown): string {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    const policy = (JSON_POLICY_ATTRIBUTES as readonly string[]).includes(name);
    if (policy && value && typeof value === 'object' && !Array.isArray(value)) return JSON.stringify(value);
    this.fail(`"${where}" must be a string or a number${policy ? ', or a JSON object' : ''}`);
  }

  alarms(value: unknown): NonNullable<ConfigFile['alarms']> {
    const section = this.object(value, 'alarms', ALARM_KEYS);
    const alarms: NonNullable<ConfigFile['alarms']> = this.numbers(section, 'alarms', [
      'threshold',
      'periodSeconds',
    ]);
    const { webhooks, queues, topics } = section;
    if (topics !== undefined) {
      if (!Array.isArray(topics) || !topics.every((topic) => typeof topic === 'string' && topic !== ''))
        this.fail('"alarms.topics" must be a list of SNS topic names or ARNs');
      alarms.topics = topics as string[];
    }
    if (webhooks !== undefined) {
      if (!Array.isArray(webhooks) || !webhooks.every(isWebhookUrl))
        this.fail('"alarms.webhooks" must be a list of http(s) URLs');
      alarms.webhooks = webhooks;
    }
    if (queues !== undefined) {
      alarms.queues = {};
      for (const [name, own] of Object.entries(this.anyObject(queues, 'alarms.queues'))) {
        const where = `alarms.queues.${name}`;
        const settings = this.object(own, where, ALARM_QUEUE_KEYS);
        if (settings.silenced !== undefined && typeof settings.silenced !== 'boolean')
          this.fail(`"${where}.silenced" must be true or false`);
        alarms.queues[name] = {
          ...this.numbers(settings, where, ['threshold']),
          ...(settings.silenced !== undefined && { silenced: settings.silenced as boolean }),
        };
      }
    }
    return alarms;
  }

  credentials(value: unknown): AccessKey[] {
    if (!Array.isArray(value)) this.fail('"credentials" must be a list');
    const stringList = (list: unknown) =>
      list === undefined || (Array.isArray(list) && list.every((item) => typeof item === 'string'));
    return value.map((key, index) => {
      const where = `credentials[${index}]`;
      const { accessKeyId, secretAccessKey, queues, actions, accountId } = this.object(
        key,
        where,
        CREDENTIAL_KEYS,
      );
      if (typeof accessKeyId !== 'string' || !ACCESS_KEY_ID.test(accessKeyId))
        this.fail(`${where}: "accessKeyId" must be 1-128 letters, digits or underscores`);
      if (typeof secretAccessKey !== 'string' || secretAccessKey === '')
        this.fail(`${where}: "secretAccessKey" must be a non-empty string`);
      if (!stringList(queues) || !stringList(actions))
        this.fail(`${where}: "queues" and "actions" must be lists of strings`);
      if (accountId !== undefined && (typeof accountId !== 'string' || !/^\d{12}$/.test(accountId)))
        this.fail(`${where}: "accountId" must be 12 digits`);
      return key as AccessKey;
    });
  }
}

/** Reads and checks a config file: any key it does not know is an error naming the key and the file. */
export function readConfigFile(path: string): ConfigFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read config file ${path}: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Error(`config file ${path} must hold a JSON object`);
  }
  const reader: ConfigReader = new ConfigReader(path);
  for (const key of Object.keys(parsed)) {
    if (!Object.hasOwn(FILE_KEYS, key))
      reader.fail(`unknown key "${key}" (known: ${Object.keys(FILE_KEYS).join(', ')})`);
  }
  const { queues, topics, redrive, alarms, credentials, metricsToken, lambda, sns } = parsed as Record<
    string,
    unknown
  >;
  const config: ConfigFile = {};
  if (queues !== undefined) {
    if (!Array.isArray(queues)) reader.fail('"queues" must be a list');
    config.queues = queues.map((queue, index) => reader.queue(queue, index));
  }
  if (topics !== undefined) {
    if (!Array.isArray(topics)) reader.fail('"topics" must be a list');
    config.topics = topics.map((topic, index) => reader.topic(topic, index));
  }
  if (redrive !== undefined)
    config.redrive = reader.numbers(reader.object(redrive, 'redrive', REDRIVE_KEYS), 'redrive', [
      'defaultRate',
      'backlogLimit',
    ]);
  if (alarms !== undefined) config.alarms = reader.alarms(alarms);
  if (credentials !== undefined) config.credentials = reader.credentials(credentials);
  if (metricsToken !== undefined) {
    if (!isMetricsToken(metricsToken)) reader.fail(`"metricsToken" ${METRICS_TOKEN_RULE}`);
    config.metricsToken = metricsToken;
  }
  if (lambda !== undefined) config.lambda = reader.lambda(lambda);
  if (sns !== undefined) {
    const { httpAllow, httpCa } = reader.object(sns, 'sns', { httpAllow: true, httpCa: true });
    config.sns = {};
    if (httpAllow !== undefined) {
      if (!Array.isArray(httpAllow) || httpAllow.some((entry) => typeof entry !== 'string'))
        reader.fail('"sns.httpAllow" must be a list of host names, *.domains and CIDR blocks');
      config.sns.httpAllow = httpAllow as string[];
    }
    if (httpCa !== undefined) {
      if (typeof httpCa !== 'string' || httpCa === '') reader.fail('"sns.httpCa" must be a PEM file\'s path');
      config.sns.httpCa = httpCa as string;
    }
  }
  return config;
}

/**
 * Creates or updates the configured queues through the same actions a client would call: every queue first,
 * then the redrive policies, so that a policy may name a dead-letter queue listed after its source.
 */
export async function applyConfig(
  service: { actions: ActionTable; queues: QueueDirectory },
  config: ConfigFile,
  context: RequestContext,
): Promise<void> {
  const queues = config.queues ?? [];
  for (const queue of queues) {
    const { RedrivePolicy: _later, ...attributes } = queue.attributes ?? {};
    const tags = queue.tags ?? {};
    await configuring(queue.name, async () => {
      const existing = await service.queues.queueByName(queue.name);
      if (!existing) {
        await service.actions.CreateQueue({ QueueName: queue.name, Attributes: attributes, tags }, context);
        return;
      }
      const QueueUrl = service.queues.queueUrl(context.baseUrl, queue.name);
      const { FifoQueue: _createOnly, ...settable } = attributes;
      if (Object.keys(settable).length > 0)
        await service.actions.SetQueueAttributes({ QueueUrl, Attributes: settable });
      if (Object.keys(tags).length > 0) await service.actions.TagQueue({ QueueUrl, Tags: tags });
    });
  }
  for (const { name, attributes } of queues) {
    const RedrivePolicy = attributes?.RedrivePolicy;
    if (RedrivePolicy === undefined) continue;
    await configuring(name, () =>
      service.actions.SetQueueAttributes({
        QueueUrl: service.queues.queueUrl(context.baseUrl, name),
        Attributes: { RedrivePolicy },
      }),
    );
  }
}

/**
 * Creates or updates the configured topics and their subscriptions through SNS's own actions, after the
 * queues: a topic's attributes and a subscription's are set one by one when it already exists.
 */
export async function applyTopicConfig(
  sns: SnsService,
  sqs: { queues: QueueDirectory },
  config: ConfigFile,
): Promise<void> {
  for (const topic of config.topics ?? []) {
    await configuring(
      topic.name,
      async () => {
        const { FifoTopic, ...settable } = topic.attributes ?? {};
        const { TopicArn } = await sns.CreateTopic({
          Name: topic.name,
          Attributes: FifoTopic === undefined ? {} : { FifoTopic },
        });
        for (const [AttributeName, AttributeValue] of Object.entries(settable))
          await sns.SetTopicAttributes({ TopicArn, AttributeName, AttributeValue });
        const Tags = Object.entries(topic.tags ?? {}).map(([Key, Value]) => ({ Key, Value }));
        if (Tags.length > 0) await sns.TagResource({ ResourceArn: TopicArn, Tags });
        for (const subscription of topic.subscriptions ?? []) {
          const { SubscriptionArn } = await sns.Subscribe({
            TopicArn,
            Protocol: 'sqs',
            Endpoint: sqs.queues.queueArn(subscription.queue),
          });
          for (const [AttributeName, AttributeValue] of Object.entries(subscription.attributes ?? {}))
            await sns.SetSubscriptionAttributes({ SubscriptionArn, AttributeName, AttributeValue });
        }
      },
      'topic',
    );
  }
}

/** Runs one queue's (or topic's) step, an API error becoming a start-up error that names it. */
async function configuring(name: string, step: () => Promise<unknown>, kind = 'queue'): Promise<void> {
  try {
    await step();
  } catch (error) {
    if (error instanceof SqsError)
      throw new Error(`config: ${kind} ${name}: ${error.code}: ${error.message}`);
    throw error;
  }
}
