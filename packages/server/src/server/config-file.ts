import { readFileSync } from 'node:fs';
import type { AlarmSettings } from '../core/dlq-alarms.ts';
import { SqsError } from '../core/errors.ts';
import type { MoveTaskSettings } from '../core/move-tasks.ts';
import type { RequestContext, SqsService } from '../core/sqs-service.ts';
import type { AccessKey } from './auth/access.ts';
import { isWebhookUrl } from './webhooks.ts';

/**
 * `--config FILE`: queues to create, or bring up to date, at start (like ElasticMQ's configuration).
 *
 * {
 *   "queues": [
 *     { "name": "orders-dlq", "attributes": { "MessageRetentionPeriod": "1209600" } },
 *     { "name": "orders", "attributes": { "VisibilityTimeout": "60",
 *         "RedrivePolicy": "{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:orders-dlq\",\"maxReceiveCount\":3}" },
 *       "tags": { "team": "payments" } }
 *   ]
 * }
 *
 * Queues are applied in file order (a DLQ before the queues that name it). Attribute values may be
 * strings or numbers. An existing queue gets the listed attributes and tags set; nothing is removed.
 *
 * "redrive" sets how move tasks started without MaxNumberOfMessagesPerSecond run, "alarms" the DLQ alarms
 * (docs/guide/dead-letter-queues.md, docs/operations/alarms.md):
 *   "redrive": { "defaultRate": 100, "backlogLimit": 1000 },
 *   "alarms": { "threshold": 0, "periodSeconds": 10, "webhooks": ["http://127.0.0.1:8080/hook"],
 *               "queues": { "scratch-dlq": { "silenced": true }, "orders-dlq": { "threshold": 10 } } }
 *
 * "credentials" turns on SigV4 verification (docs/guide/authentication.md):
 *   "credentials": [{ "accessKeyId": "AKIDORDERS", "secretAccessKey": "…",
 *                     "queues": ["orders*"], "actions": ["SendMessage", "Receive*", "DeleteMessage*"] }]
 * A key with "accountId" (12 digits) belongs to another account: queue policies decide what it may do
 * (docs/guide/authentication.md).
 */
export interface ConfigFile {
  queues?: Array<{
    name: string;
    attributes?: Record<string, string | number>;
    tags?: Record<string, string>;
  }>;
  redrive?: Partial<MoveTaskSettings>;
  alarms?: Partial<AlarmSettings> & { webhooks?: string[] };
  credentials?: AccessKey[];
}

/** AWS access key ids are letters and digits; `:` must stay free for `--credentials ID:SECRET`. */
export const ACCESS_KEY_ID = /^[A-Za-z0-9_]{1,128}$/;

function checkCredentials(path: string, value: unknown): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) throw new Error(`config file ${path}: "credentials" must be a list`);
  const stringList = (list: unknown) =>
    list === undefined || (Array.isArray(list) && list.every((item) => typeof item === 'string'));
  for (const [index, key] of value.entries()) {
    const where = `config file ${path}: credentials[${index}]`;
    if (!key || typeof key !== 'object') throw new Error(`${where} must be an object`);
    const { accessKeyId, secretAccessKey, queues, actions, accountId } = key as Record<string, unknown>;
    if (typeof accessKeyId !== 'string' || !ACCESS_KEY_ID.test(accessKeyId))
      throw new Error(`${where}: "accessKeyId" must be 1-128 letters, digits or underscores`);
    if (typeof secretAccessKey !== 'string' || secretAccessKey === '')
      throw new Error(`${where}: "secretAccessKey" must be a non-empty string`);
    if (!stringList(queues) || !stringList(actions))
      throw new Error(`${where}: "queues" and "actions" must be lists of strings`);
    if (accountId !== undefined && (typeof accountId !== 'string' || !/^\d{12}$/.test(accountId)))
      throw new Error(`${where}: "accountId" must be 12 digits`);
  }
}

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
  const config = parsed as ConfigFile;
  if (config.queues !== undefined && !Array.isArray(config.queues)) {
    throw new Error(`config file ${path}: "queues" must be a list`);
  }
  for (const [index, queue] of (config.queues ?? []).entries()) {
    if (!queue || typeof queue.name !== 'string')
      throw new Error(`config file ${path}: queues[${index}] needs a "name"`);
  }
  const numbers = (section: string, value: unknown, keys: string[]) => {
    if (value === undefined) return;
    if (!value || typeof value !== 'object' || Array.isArray(value))
      throw new Error(`config file ${path}: "${section}" must be an object`);
    for (const key of keys) {
      const field = (value as Record<string, unknown>)[key];
      if (field !== undefined && (typeof field !== 'number' || !(field >= 0)))
        throw new Error(`config file ${path}: "${section}.${key}" must be a non-negative number`);
    }
  };
  checkCredentials(path, config.credentials);
  numbers('redrive', config.redrive, ['defaultRate', 'backlogLimit']);
  numbers('alarms', config.alarms, ['threshold', 'periodSeconds']);
  const webhooks = config.alarms?.webhooks;
  if (webhooks !== undefined && (!Array.isArray(webhooks) || !webhooks.every(isWebhookUrl)))
    throw new Error(`config file ${path}: "alarms.webhooks" must be a list of http(s) URLs`);
  return config;
}

/** Creates or updates the configured queues through the same actions a client would call. */
export async function applyConfig(
  service: SqsService,
  config: ConfigFile,
  context: RequestContext,
): Promise<void> {
  for (const queue of config.queues ?? []) {
    const attributes = Object.fromEntries(
      Object.entries(queue.attributes ?? {}).map(([key, value]) => [key, String(value)]),
    );
    const tags = queue.tags ?? {};
    try {
      const existing = await service.store.getQueue(queue.name);
      if (!existing) {
        await service.CreateQueue({ QueueName: queue.name, Attributes: attributes, tags }, context);
        continue;
      }
      const QueueUrl = service.queueUrl(context, queue.name);
      const { FifoQueue: _createOnly, ...settable } = attributes;
      if (Object.keys(settable).length > 0)
        await service.SetQueueAttributes({ QueueUrl, Attributes: settable });
      if (Object.keys(tags).length > 0) await service.TagQueue({ QueueUrl, Tags: tags });
    } catch (error) {
      if (error instanceof SqsError)
        throw new Error(`config: queue ${queue.name}: ${error.code}: ${error.message}`);
      throw error;
    }
  }
}
