import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { systemClock } from '#toolkit/clock';
import { AUDIT_RETENTION_DEFAULTS, AuditTrail } from '../core/audit-trail.ts';
import { ALARM_DEFAULTS, type AlarmNotification, DlqAlarms, readableStates } from '../core/dlq-alarms.ts';
import {
  EventSourceMappings,
  type EventSourceMappingsAnswer,
} from '../core/event-source/event-source-mappings.ts';
import { storedMappings } from '../core/event-source/mapping-store.ts';
import { MOVE_TASK_DEFAULTS } from '../core/move-tasks.ts';
import { ActivityFlusher, QueueSampler } from '../core/queue-history.ts';
import { startRetentionSweeper } from '../core/retention.ts';
import type { DeliveryKind } from '../core/sns/sns-activity.ts';
import { topicArnOf } from '../core/sns/sns-names.ts';
import { SnsService } from '../core/sns/sns-service.ts';
import { SqsService, serviceReads } from '../core/sqs-service.ts';
import { MessageTriage } from '../core/triage.ts';
import type { Store } from '../store/contract.ts';
import { DEFAULT_DISK_RESERVE_BYTES } from '../store/sqlite/options.ts';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import { isTriageStore } from '../store/triage.ts';
import { createAuthenticator } from './auth/access.ts';
import { createPageAccess } from './auth/page-access.ts';
import { queuePolicyAllowsTopic } from './auth/queue-policy.ts';
import { createBrowserGuard, isLoopback } from './browser-guard.ts';
import { ClusterLease } from './cluster-lease.ts';
import { applyConfig, applyTopicConfig, readConfigFile } from './config-file.ts';
import { type AlarmsAnswer, consoleApi, consoleChanges, consolePages, json } from './console-api.ts';
import { exposureWarning } from './exposure-warning.ts';
import { createHttpServer } from './http/http-server.ts';
import { lambdaEntry } from './lambda-entry.ts';
import { functionInvoker } from './lambda-invoker.ts';
import { createLogger } from './logger.ts';
import { createServerMetrics } from './metrics.ts';
import { operatorAudit } from './operator-audit.ts';
import { portTakenMessage } from './port-holder.ts';
import { SERVE_FLAGS } from './serve-flags.ts';
import type { SluiceOptions } from './sluice-options.ts';
import { snsConsoleApi, snsConsolePages } from './sns-console-api.ts';
import { serveSns } from './sns-entry.ts';
import { EndpointDeliveries, EndpointRules, endpointSender } from './sns-http-delivery.ts';
import { snsOperationsChanges, snsOperationsPages } from './sns-operations-api.ts';
import { SNS_CERTIFICATE_PREFIX, snsSigning } from './sns-signing.ts';

/** A subscriber that has not answered in this long failed the attempt (AWS's HTTP/S delivery time-out). */
const SNS_HTTP_TIMEOUT_MS = 15_000;
/** Requests in flight to one subscriber origin at once. */
const SNS_HTTP_CONCURRENCY = 10;

import { TestClock } from './test-clock.ts';
import { createTestMode, testEndpoints } from './test-mode.ts';
import { triageChanges, triagePages } from './triage-api.ts';
import { webhookNotifier } from './webhooks.ts';

export type { SluiceOptions };

/** How long a shutdown waits for requests under way before cutting their connections. */
const SHUTDOWN_DRAIN_MS = 10_000;

export interface RunningSluice {
  /** http://host:port */
  readonly endpoint: string;
  readonly service: SqsService;
  /** The store this server runs on, for tools embedding it; the service keeps it to itself. */
  readonly store: Store;
  readonly alarms: DlqAlarms;
  /** Takes the history samples; tests call sample() to take one now. */
  readonly sampler: QueueSampler;
  /** Whether this node runs the cluster jobs (retention, alarms, history, move tasks); always, on SQLite. */
  readonly lease: ClusterLease;
  /** Lambda event source mappings: the API's rules and the pollers (on the node that runs the cluster jobs). */
  readonly eventSourceMappings: EventSourceMappings;
  /** Stops accepting requests, ends long polls, lets requests under way finish, closes the store. */
  close(): Promise<void>;
}

/**
 * Test mode on a store no other server shares. Any host: with access keys its endpoints take a signature,
 * and an open server off loopback (--insecure, as in the container image) lets whoever reaches it delete
 * every queue anyway.
 */
function refuseTestMode(options: SluiceOptions): void {
  if (options.storeUrl !== undefined)
    throw new Error(
      '--test-clock works with the embedded SQLite store only: the servers sharing a PostgreSQL database would not share the clock or see the reset',
    );
  if (options.clock) throw new Error('testClock and clock cannot both be given');
}

/** True when a --store value names a PostgreSQL database. */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

async function openStore(options: SluiceOptions, dataDir: string): Promise<Store> {
  if (options.storeUrl === undefined)
    return new SqliteStore({
      dataDir,
      durability: options.durability,
      diskReserveBytes: options.diskReserveBytes ?? DEFAULT_DISK_RESERVE_BYTES,
    });
  if (!isPostgresUrl(options.storeUrl))
    throw new Error(`--store must be a postgres:// URL, not ${JSON.stringify(options.storeUrl)}`);
  // Loaded only here, so a server on the embedded store never loads the PostgreSQL driver (about 20 MiB and
  // 75 ms of every start).
  const { PostgresStore } = await import('../store/postgres/postgres-store.ts');
  return PostgresStore.open({ connectionString: options.storeUrl, maxConnections: options.storeConnections });
}

export { isLoopback };

export async function startSluice(options: SluiceOptions = {}): Promise<RunningSluice> {
  const logger = options.logger ?? createLogger(options.logLevel, options.logFormat);
  const dataDir = options.dataDir ?? SERVE_FLAGS.data.default;
  const config = options.configFile ? readConfigFile(options.configFile) : {};
  const host = options.host ?? SERVE_FLAGS.host.default;
  if (options.testClock) refuseTestMode(options);
  const testClock = options.testClock ? new TestClock() : undefined;
  const clock = testClock ?? options.clock ?? systemClock;
  // Signatures, console sessions and the transport's waits: clients and connections live in real time, which
  // the test clock must not move; an injected clock drives them too, for the tests that need it to.
  const transportClock = testClock ? systemClock : clock;
  const store = options.store ?? (await openStore(options, dataDir));
  const service = new SqsService({
    store,
    clock,
    limits: options.limits,
    accountId: options.accountId,
    region: options.region,
    moveTasks: { ...MOVE_TASK_DEFAULTS, ...config.redrive, ...options.redrive },
    receiptHandles: {
      strict: options.strictReceiptHandles,
      strictQueues: new Map(
        (config.queues ?? []).flatMap(({ name, strictReceiptHandles: strict }) =>
          strict === undefined ? [] : [[name, strict]],
        ),
      ),
    },
    moveTaskEvents: {
      onChange: (task, event) =>
        logger.info(
          {
            task: task.handle,
            source: task.sourceArn,
            status: task.status,
            moved: task.moved,
            reason: task.failureReason,
          },
          `move task ${event}`,
        ),
      onError: (error) => logger.error({ err: error }, 'move task step failed'),
    },
    warn: (details, message) => logger.warn(details, message),
  });
  const signing = snsSigning(store);
  const snsHttpCaFile = options.snsHttpCa ?? config.sns?.httpCa;
  // Read at start: a missing or unreadable file stops the server rather than fail every HTTPS delivery.
  const snsHttpCa = snsHttpCaFile === undefined ? undefined : readFileSync(snsHttpCaFile, 'utf8');
  if (snsHttpCa !== undefined && !snsHttpCa.includes('-----BEGIN CERTIFICATE-----'))
    throw new Error(`--sns-http-ca: ${snsHttpCaFile} holds no PEM certificate`);
  const endpointRules = new EndpointRules(options.snsHttpAllow ?? config.sns?.httpAllow);
  const snsScope = { region: service.region, accountId: service.accountId };
  // The worker needs the service and the service the worker: it is made first and told the service after.
  let expireUnconfirmed: () => Promise<number> = async () => 0;
  const endpointDeliveries = new EndpointDeliveries(
    {
      store,
      clock,
      scope: snsScope,
      rules: endpointRules,
      sender: endpointSender({
        rules: endpointRules,
        timeoutMs: SNS_HTTP_TIMEOUT_MS,
        concurrency: SNS_HTTP_CONCURRENCY,
        extraCa: snsHttpCa ? [snsHttpCa] : undefined,
      }),
      deadLetter: async (queueArn, body) => {
        const queue = await service.queues.queueByArn(queueArn);
        if (queue === undefined) return false;
        try {
          await service.actions.SendMessage(
            { QueueUrl: service.queues.queueUrl(baseUrl, queue.name), MessageBody: body },
            { baseUrl, senderId: service.accountId },
          );
          return true;
        } catch {
          return false;
        }
      },
      expireUnconfirmed: () => expireUnconfirmed(),
      outcome: (topic, subscription, kind) => sns.activity.add(topic, subscription, kind, 1),
      latency: (subscription, seconds) => sns.activity.delivered(subscription, seconds),
      log: logger,
    },
    SNS_HTTP_TIMEOUT_MS,
  );
  const sns = new SnsService({
    endpoints: endpointDeliveries,
    store,
    clock,
    scope: snsScope,
    queues: service.queues,
    deliveries: service.deliveries,
    signer: signing,
    warn: (details, message) => logger.warn(details, message),
    queueAllows: (queue, topicArn) =>
      queuePolicyAllowsTopic(queue.attributes.Policy, service.queues.queueArn(queue.name), topicArn),
    strictPolicies: options.strictPolicies,
  });
  expireUnconfirmed = () => sns.expireUnconfirmed();
  const lambdaEndpoint = options.lambdaEndpoint ?? config.lambda?.endpoint;
  const eventSourceMappings = new EventSourceMappings({
    store: storedMappings(store),
    sqs: service.actions,
    queues: service.queues,
    clock,
    region: service.region,
    accountId: service.accountId,
    invoker: functionInvoker(lambdaEndpoint, config.lambda?.functions),
    functionTimeoutSeconds: options.lambdaTimeoutSeconds ?? config.lambda?.functionTimeoutSeconds,
    observer: {
      invoked(mapping, records, result, seconds) {
        metrics?.mappings.invoked(mapping, records, result, seconds);
        logger.debug(
          { mapping: mapping.uuid, records, result, seconds },
          'event source mapping invoked its function',
        );
      },
      filteredOut(mapping, records) {
        metrics?.mappings.filteredOut(mapping, records);
        logger.debug(
          { mapping: mapping.uuid, records },
          'event source mapping deleted records no filter matched',
        );
      },
    },
    onError: (error, message) => logger.warn({ err: error }, message),
    onNews: (details, message) => logger.info(details, message),
  });
  // The queues' URLs the pollers name, known once the server listens.
  let baseUrl = '';
  const alarmSettings = { ...ALARM_DEFAULTS, ...config.alarms, ...options.alarms };
  const webhooks = [...(config.alarms?.webhooks ?? []), ...(options.alarms?.webhooks ?? [])];
  const deliver = webhookNotifier({ urls: webhooks, clock, logger });
  const alarmTopics = [...(config.alarms?.topics ?? []), ...(options.alarms?.topics ?? [])];
  // Each alarm is a publication to the topics named: every subscriber (a queue, a webhook) gets it with SNS's
  // guarantees (stored with the publish, HTTP deliveries retried by the delivery policy).
  const publishAlarm = (notification: AlarmNotification) => {
    for (const topic of alarmTopics) {
      const TopicArn = topic.startsWith('arn:') ? topic : topicArnOf(snsScope, topic);
      const body = {
        source: 'sluice',
        type: 'dlq-alarm',
        ...notification,
        consoleUrl: `${baseUrl}/console/#/queue/${encodeURIComponent(notification.queue)}`,
      };
      sns
        .Publish(
          {
            TopicArn,
            Subject: `DLQ alarm ${notification.event}: ${notification.queue}`.slice(0, 99),
            Message: JSON.stringify(body),
            MessageAttributes: {
              event: { DataType: 'String', StringValue: notification.event },
              queue: { DataType: 'String', StringValue: notification.queue },
            },
          },
          { baseUrl, senderId: service.accountId },
        )
        .catch((error: unknown) =>
          logger.error(
            { err: error, topic: TopicArn, queue: notification.queue },
            'DLQ alarm not published to its topic',
          ),
        );
    }
  };
  const jobs = serviceReads(service, store);
  const triageStore = isTriageStore(store) ? store : undefined;
  const audit =
    triageStore &&
    new AuditTrail(clock, triageStore, { ...AUDIT_RETENTION_DEFAULTS, ...options.auditRetention });
  const triage = triageStore && audit && new MessageTriage(jobs, triageStore, audit);
  const snsOperations = {
    store,
    now: () => clock.now(),
    wake: () => endpointDeliveries.wake(),
    count: (topic: string, subscription: string, kind: DeliveryKind) =>
      sns.activity.add(topic, subscription, kind, 1),
    audit,
  };
  const alarms = new DlqAlarms(
    jobs,
    alarmSettings,
    (notification) => {
      logger.warn({ alarm: notification }, `DLQ alarm ${notification.event}: ${notification.message}`);
      deliver(notification);
      publishAlarm(notification);
    },
    (error) => logger.error({ err: error }, 'DLQ alarm check failed'),
  );
  const sampler = new QueueSampler(jobs, (error) => logger.error({ err: error }, 'history sample failed'));
  const metrics =
    options.metrics === false
      ? undefined
      : createServerMetrics(service, () => alarms.clusterStates(), sampler.counts, undefined, sns.activity);
  // Every node, holder or not, adds its activity to the store for the holder's history samples.
  const activityFlusher = new ActivityFlusher(jobs, (error) =>
    logger.error({ err: error }, 'activity flush failed'),
  );
  // Retention, DLQ alarms, history samples and move tasks run on one node of those sharing the store: the
  // lease holder (with SQLite, this server, always). Another node's move tasks wait for the holder's tick.
  let sweeper: { stop(): void } | undefined;
  let auditPruning: { stop(): void } | undefined;
  const clusterJobs = {
    running: false,
    async start() {
      clusterJobs.running = true;
      sweeper = startRetentionSweeper(jobs, (error) =>
        logger.error({ err: error }, 'retention sweep failed'),
      );
      auditPruning = audit?.startPruning((error) => logger.error({ err: error }, 'audit pruning failed'));
      await service.moveTasks.resume();
      alarms.start();
      sampler.start();
      await eventSourceMappings.startPolling(baseUrl);
    },
    async stop() {
      clusterJobs.running = false;
      await eventSourceMappings.stopPolling();
      sweeper?.stop();
      auditPruning?.stop();
      await sampler.stop();
      await alarms.stop();
      await service.moveTasks.stop();
    },
  };
  const testMode =
    testClock &&
    createTestMode({
      clock: testClock,
      store,
      service,
      sns,
      queueCounts: sampler.counts,
      clusterJobs,
      logger,
    });
  const keys = [...(config.credentials ?? []), ...(options.credentials ?? [])];
  if (keys.length === 0 && !isLoopback(host)) {
    if (!options.insecure) {
      throw new Error(
        `refusing to listen on ${host} without credentials: configure access keys (--credentials, or "credentials" in the config file), or pass --insecure to expose an open queue`,
      );
    }
  }
  const auth =
    keys.length > 0
      ? createAuthenticator({
          keys,
          region: service.region,
          accountId: service.accountId,
          clock: transportClock,
        })
      : undefined;
  const metricsToken = options.metricsToken ?? config.metricsToken;
  // A page cannot sign requests, so where every request is signed and the server is reached by names it
  // cannot know (a network host with credentials), the Host check adds nothing unless names are given.
  const browser = createBrowserGuard({
    corsOrigins: options.corsOrigins ?? [],
    allowedHosts: options.allowedHosts ?? [],
    boundHost: host,
    checkHost: isLoopback(host) || keys.length === 0 || (options.allowedHosts ?? []).length > 0,
  });
  const server = createHttpServer({
    sqs: service,
    storeCondition: async () => store.condition?.(),
    logger,
    browser,
    maxRequestBytes: options.maxRequestBytes,
    observeRequest: metrics?.observeRequest,
    tls: options.tls,
    longPolls: options.longPolls,
    maxBufferedBytes: options.maxBufferedBytes,
    maxResponseBytes: options.maxResponseBytes,
    connections: options.connections,
    clock: transportClock,
    auth,
    pageAccess:
      auth || metricsToken !== undefined
        ? createPageAccess({
            auth,
            metricsToken,
            accountId: service.accountId,
            clock: transportClock,
            tls: options.tls !== undefined,
            describeQueue: async (name) => ({
              name,
              arn: service.queues.queueArn(name),
              policy: (await store.getQueue(name))?.attributes.Policy,
            }),
          })
        : undefined,
    sns: serveSns(sns),
    pages: {
      [`${SNS_CERTIFICATE_PREFIX}*`]: async (url) => {
        const certificate = await signing.certificate();
        return url.pathname === certificate.path
          ? { contentType: 'application/x-x509-ca-cert', body: certificate.pem }
          : { status: 404, contentType: 'text/plain; charset=utf-8', body: 'No such certificate.\n' };
      },
      ...(metrics && {
        '/metrics': async () => ({ contentType: metrics.contentType, body: await metrics.render() }),
      }),
      // Any node answers with the cluster's states, as the lease holder last checked them.
      '/alarms': async (_url, viewer) => {
        const readable = await readableStates(await alarms.clusterStates(), (queue) => viewer.mayRead(queue));
        return {
          contentType: 'application/json',
          body: JSON.stringify({ alarms: readable } satisfies AlarmsAnswer),
        };
      },
      // The mappings of the queues the viewer may read, with their pollers on this node (`sluice stats`).
      '/api/event-source-mappings': async (_url, viewer) => {
        const mappings = [];
        for (const mapping of await eventSourceMappings.describe())
          if (await viewer.mayRead(mapping.EventSourceArn.replace(/^.*:/, ''))) mappings.push(mapping);
        return json({ mappings } satisfies EventSourceMappingsAnswer);
      },
      ...consoleApi(jobs, () => alarms.clusterStates()),
      ...snsConsolePages({
        listSubscriptions: (options) => store.listSubscriptions(options),
        queueArn: (name) => service.queues.queueArn(name),
        queuePolicy: async (name) => (await store.getQueue(name))?.attributes.Policy,
      }),
      ...snsOperationsPages(snsOperations),
      ...(triage && triagePages(service, triage)),
      ...consolePages(),
    },
    changes: {
      ...consoleChanges(service, alarms),
      ...(triage && triageChanges(service, triage)),
      ...snsConsoleApi(),
      ...snsOperationsChanges(snsOperations),
    },
    operatorAudit: audit && operatorAudit(service, audit),
    testEndpoints: testEndpoints(testMode),
    lambda: lambdaEntry(eventSourceMappings),
  });
  const wantedPort = options.port ?? SERVE_FLAGS.port.default;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(wantedPort, host, () => resolve());
    });
  } catch (error) {
    // The store this call opened is closed again, so that an embedding program may try another port.
    if (!options.store) await store.close();
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
      throw new Error(await portTakenMessage(host, wantedPort));
    throw error;
  }
  const { port } = server.address() as AddressInfo;
  for (const line of exposureWarning({ host, port, keys: keys.length })) logger.warn(line);
  const endpoint = `${options.tls ? 'https' : 'http'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
  baseUrl = endpoint;
  await applyConfig(service, config, { baseUrl: endpoint, senderId: service.accountId });
  await applyTopicConfig(sns, service, config);
  for (const [index, mapping] of (config.lambda?.eventSourceMappings ?? []).entries()) {
    await eventSourceMappings.configure(mapping).catch((error: unknown) => {
      throw new Error(`config: lambda.eventSourceMappings[${index}]: ${(error as Error).message}`);
    });
  }
  await service.moveTasks.stop();
  // Where several nodes share the store, who runs the cluster jobs is news; a server alone always does.
  const leaseNews = (message: string) =>
    lease.shared ? logger.info({ holder: lease.holder }, message) : logger.debug(message);
  const lease = new ClusterLease(
    store,
    clock,
    {
      async start() {
        leaseNews('running the cluster jobs (lease taken)');
        await clusterJobs.start();
      },
      async stop(reason) {
        leaseNews(
          reason === 'lost'
            ? 'no longer running the cluster jobs (lease lost)'
            : 'no longer running the cluster jobs (lease released: shutting down)',
        );
        await clusterJobs.stop();
      },
      tick: () => service.moveTasks.resume(),
    },
    (error) => logger.error({ err: error }, 'cluster lease renewal failed'),
  );
  activityFlusher.start();
  endpointDeliveries.start();
  await lease.start();
  if (testMode)
    logger.warn(
      'test mode (--test-clock): POST /_sluice/clock/advance moves the clock, POST /_sluice/reset forgets every queue',
    );
  let closing: Promise<void> | undefined;
  return {
    endpoint,
    service,
    store,
    alarms,
    sampler,
    lease,
    eventSourceMappings,
    close() {
      closing ??= (async () => {
        await lease.stop();
        await activityFlusher.stop();
        await endpointDeliveries.stop();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        service.longPoll.closeAll();
        // Keep-alive connections become idle as their last answers go out; close each as soon as it does,
        // and cut whatever is left after the drain deadline.
        const idleSweep = setInterval(() => server.closeIdleConnections(), 20);
        const deadline = setTimeout(() => server.closeAllConnections(), SHUTDOWN_DRAIN_MS);
        server.closeIdleConnections();
        await closed;
        clearInterval(idleSweep);
        clearTimeout(deadline);
        await store.close();
      })();
      return closing;
    },
  };
}
