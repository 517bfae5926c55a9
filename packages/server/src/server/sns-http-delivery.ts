import { lookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';
import { rootCertificates } from 'node:tls';
import { type Clock, type PeriodicJob, repeatEvery } from '#toolkit/clock';
import {
  type EndpointGateway,
  type EndpointMessageType,
  effectiveDeliveryPolicy,
  endpointHeaders,
  retryDelaySeconds,
} from '../core/sns/http-endpoints.ts';
import { type SnsScope, topicArnOf } from '../core/sns/sns-names.ts';
import { deadLetterTargetOf, isPending } from '../core/sns/subscription-attributes.ts';
import type { EndpointDeliveryRecord, TopicStore } from '../store/contract.ts';

/**
 * HTTP/HTTPS subscribers: the address rules every request to one passes, and the worker that sends the
 * stored deliveries and retries them by the delivery policy (docs/decisions/sns-http-deliveries.md).
 */

/** Addresses never reached: link-local (cloud metadata services live there) and EC2's IPv6 metadata address. */
const DENIED = new BlockList();
DENIED.addSubnet('169.254.0.0', 16, 'ipv4');
DENIED.addSubnet('fe80::', 10, 'ipv6');
DENIED.addAddress('fd00:ec2::254', 'ipv6');

/** An IPv4 address written as IPv6 (::ffff:a.b.c.d) is checked as the IPv4 address it is. */
function normalized(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

/**
 * `--sns-http-allow`: when given, an endpoint must be one of these: a host name (`hooks.example.com`), a
 * domain's hosts (`*.example.com`), an address or a CIDR block (`10.0.0.0/8`, `::1/128`). The denied
 * addresses stay denied whatever it says.
 */
export class EndpointRules {
  private readonly hosts = new Set<string>();
  private readonly domains: string[] = [];
  private readonly blocks = new BlockList();
  readonly narrowed: boolean;

  constructor(allow: readonly string[] | undefined) {
    this.narrowed = allow !== undefined && allow.length > 0;
    for (const entry of allow ?? []) {
      const text = entry.trim().toLowerCase();
      if (text === '') continue;
      const [address, bits] = text.split('/');
      if (isIP(address!) !== 0) {
        const family = isIP(address!) === 6 ? 'ipv6' : 'ipv4';
        const prefix = bits === undefined ? (family === 'ipv6' ? 128 : 32) : Number(bits);
        if (!Number.isInteger(prefix) || prefix < 0 || prefix > (family === 'ipv6' ? 128 : 32))
          throw new Error(`--sns-http-allow: ${entry} is not a CIDR block`);
        this.blocks.addSubnet(address!, prefix, family);
      } else if (text.startsWith('*.')) this.domains.push(text.slice(1));
      else if (/^[a-z0-9.-]+$/.test(text)) this.hosts.add(text);
      else throw new Error(`--sns-http-allow: ${entry} is neither a host name, *.domain nor a CIDR block`);
    }
  }

  /**
   * The address to connect to for `url` (resolved once, and the connection pinned to it, so a name that
   * resolves elsewhere the second time reaches nothing else), or why it is refused.
   */
  async resolve(
    url: URL,
  ): Promise<{ address: string; family: 4 | 6 } | { refused: string; unresolved?: boolean }> {
    const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
    let addresses: Array<{ address: string; family: number }>;
    if (isIP(host) !== 0) addresses = [{ address: host, family: isIP(host) }];
    else {
      try {
        addresses = await lookup(host, { all: true, verbatim: true });
      } catch (error) {
        return {
          refused: `${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
          unresolved: true,
        };
      }
    }
    if (addresses.length === 0) return { refused: `${host} does not resolve`, unresolved: true };
    for (const { address } of addresses) {
      const checked = normalized(address);
      if (DENIED.check(checked.address, checked.family))
        return {
          refused: `${host} resolves to ${address}, a link-local or cloud metadata address, which Sluice does not reach`,
        };
    }
    if (this.narrowed) {
      const named = this.hosts.has(host) || this.domains.some((domain) => host.endsWith(domain));
      const inBlocks = addresses.every(({ address }) => {
        const checked = normalized(address);
        return this.blocks.check(checked.address, checked.family);
      });
      if (!named && !inBlocks)
        return { refused: `${host} is not among the endpoints --sns-http-allow names` };
    }
    const first = addresses[0]!;
    return { address: first.address, family: first.family === 6 ? 6 : 4 };
  }
}

export interface SendResult {
  ok: boolean;
  /** The status, or what went wrong (refused address, time-out, connection error); never the body. */
  outcome: string;
}

/** Runs at most `cap` sends at once per endpoint origin; the others wait their turn. */
class OriginLimiter {
  private readonly active = new Map<string, { count: number; waiting: Array<() => void> }>();
  constructor(private readonly cap: number) {}

  async run<T>(origin: string, work: () => Promise<T>): Promise<T> {
    let slot = this.active.get(origin);
    if (!slot) {
      slot = { count: 0, waiting: [] };
      this.active.set(origin, slot);
    }
    const waiting = slot.waiting;
    if (slot.count >= this.cap) await new Promise<void>((resolve) => waiting.push(resolve));
    slot.count++;
    try {
      return await work();
    } finally {
      slot.count--;
      const next = slot.waiting.shift();
      if (next) next();
      else if (slot.count === 0) this.active.delete(origin);
    }
  }
}

export interface EndpointSenderOptions {
  rules: EndpointRules;
  /** A request not answered in this long failed (AWS: 15 seconds). */
  timeoutMs: number;
  /** Requests in flight to one endpoint origin (scheme, host, port) at once. */
  concurrency: number;
  /**
   * `--sns-http-ca`: PEM certificates HTTPS endpoints may chain to besides Node's public roots (and
   * NODE_EXTRA_CA_CERTS). Without it, Node's default trust store; the certificate is verified either way.
   */
  extraCa?: string[];
}

/** Node's public roots, NODE_EXTRA_CA_CERTS's (which a `ca` option would otherwise drop) and `extra`. */
export function trustedCertificates(extra: string[]): string[] {
  const fromEnvironment = process.env.NODE_EXTRA_CA_CERTS;
  return [...rootCertificates, ...(fromEnvironment ? [readFileSync(fromEnvironment, 'utf8')] : []), ...extra];
}

/** A TLS handshake's refusal (an untrusted or mismatched certificate, ...), said as such for the operator. */
function describeError(error: NodeJS.ErrnoException): string {
  const code = error.code;
  if (code === undefined) return error.message;
  if (/CERT|^ERR_TLS|^ERR_SSL|^UNABLE_TO_|^HOSTNAME_MISMATCH/.test(code))
    return `TLS ${code}: ${error.message}`;
  return code;
}

/**
 * One POST: to the address the rules allow, redirects not followed (a 3xx is a failure), the answer's body
 * read and thrown away (never stored, logged or echoed), the time-out on the whole exchange.
 */
export function endpointSender(options: EndpointSenderOptions) {
  const limiter = new OriginLimiter(options.concurrency);
  const ca = options.extraCa?.length ? trustedCertificates(options.extraCa) : undefined;
  const send = async (
    endpoint: string,
    headers: Record<string, string>,
    body: string,
  ): Promise<SendResult> => {
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      return { ok: false, outcome: 'not a URL' };
    }
    const target = await options.rules.resolve(url);
    if ('refused' in target) return { ok: false, outcome: `refused: ${target.refused}` };
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const payload = Buffer.from(body, 'utf8');
    return new Promise<SendResult>((resolve) => {
      const req = request(url, {
        method: 'POST',
        headers: { ...headers, 'content-length': String(payload.length) },
        // The connection goes to the address checked above, whatever the name resolves to now.
        lookup: (_host, lookupOptions, callback) => {
          if ((lookupOptions as { all?: boolean }).all)
            (callback as (error: null, addresses: Array<{ address: string; family: number }>) => void)(null, [
              { address: target.address, family: target.family },
            ]);
          else callback(null, target.address, target.family);
        },
        timeout: options.timeoutMs,
        // The endpoint's certificate is verified (AWS does, against public CAs); `ca` adds --sns-http-ca's.
        ...(ca && url.protocol === 'https:' ? { ca } : {}),
      });
      const timer = setTimeout(() => req.destroy(new Error('timed out')), options.timeoutMs);
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (error) => {
        clearTimeout(timer);
        // The error's class (ECONNREFUSED, a TLS refusal, ...), which is what an operator acts on; our own
        // time-out has none.
        resolve({ ok: false, outcome: describeError(error as NodeJS.ErrnoException) });
      });
      req.on('response', (response: IncomingMessage) => {
        const status = response.statusCode ?? 0;
        response.resume();
        response.on('end', () => {
          clearTimeout(timer);
          resolve({ ok: status >= 200 && status < 300, outcome: `HTTP ${status}` });
        });
        response.on('error', () => {
          clearTimeout(timer);
          resolve({ ok: false, outcome: `HTTP ${status}, answer cut` });
        });
      });
      req.end(payload);
    });
  };
  return {
    send: (endpoint: string, headers: Record<string, string>, body: string) =>
      limiter.run(originOf(endpoint), () => send(endpoint, headers, body)),
  };
}

function originOf(endpoint: string): string {
  try {
    return new URL(endpoint).origin;
  } catch {
    return endpoint;
  }
}

/** What the worker did, counted since start (and for the metrics). */
export interface EndpointDeliveryCounts {
  delivered: number;
  failedAttempts: number;
  deadLettered: number;
  dropped: number;
}

export interface EndpointDeliveryOptions {
  store: Pick<
    TopicStore,
    | 'claimEndpointDeliveries'
    | 'finishEndpointDelivery'
    | 'retryEndpointDelivery'
    | 'getSubscription'
    | 'getTopic'
  >;
  clock: Clock;
  scope: SnsScope;
  sender: ReturnType<typeof endpointSender>;
  rules: EndpointRules;
  /** Puts a given-up delivery's body on the queue of this ARN; false when there is no such queue or it refused. */
  deadLetter(queueArn: string, body: string): Promise<boolean>;
  /** Counts an attempt's outcome for /metrics (sluice_sns_deliveries_total). */
  outcome(topicName: string, subscriptionArn: string, kind: 'delivered' | 'retried' | 'failed'): void;
  /** A 2xx, `seconds` after the publication (sluice_sns_http_delivery_seconds). */
  latency(subscriptionArn: string, seconds: number): void;
  /** Deletes the subscriptions left unconfirmed past AWS's three days. */
  expireUnconfirmed(): Promise<number>;
  log: {
    info(details: Record<string, unknown>, message: string): void;
    warn(details: Record<string, unknown>, message: string): void;
    error(details: Record<string, unknown>, message: string): void;
  };
}

/** Deliveries claimed per look. */
const BATCH = 100;
/** How often the worker looks for due deliveries (real time; on the test clock, once per advance too). */
const TICK_MS = 1000;
/** Unconfirmed subscriptions are looked for this often. */
const EXPIRY_SWEEP_MS = 60 * 60 * 1000;

/**
 * The worker: claims due deliveries (their due time moves past the attempt, so another node's worker, or this
 * one after a crash, takes them only once the claim has lapsed), POSTs each, removes it on a 2xx, else sets
 * its next attempt by the delivery policy, and after the last retry puts it on the subscription's
 * dead-letter queue, or drops and counts it.
 */
export class EndpointDeliveries implements EndpointGateway {
  readonly counts: EndpointDeliveryCounts = { delivered: 0, failedAttempts: 0, deadLettered: 0, dropped: 0 };
  private job: PeriodicJob | undefined;
  private expiry: PeriodicJob | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** Per subscription: the clock's second and the sends in it (throttlePolicy.maxReceivesPerSecond). */
  private readonly throttle = new Map<string, { second: number; count: number }>();

  constructor(
    private readonly options: EndpointDeliveryOptions,
    private readonly timeoutMs: number,
  ) {}

  start(): void {
    const { clock } = this.options;
    this.job = repeatEvery(
      clock,
      0,
      TICK_MS,
      () => this.pass(),
      (error) => this.failed(error),
    );
    this.expiry = repeatEvery(
      clock,
      EXPIRY_SWEEP_MS,
      EXPIRY_SWEEP_MS,
      async () => {
        const expired = await this.options.expireUnconfirmed();
        if (expired > 0)
          this.options.log.info({ expired }, 'SNS subscriptions left unconfirmed for three days deleted');
      },
      (error) => this.failed(error),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.job?.stop();
    await this.expiry?.stop();
    await this.running;
  }

  async refusal(endpoint: string): Promise<string | undefined> {
    // A name that does not resolve yet is no refusal (AWS takes it; its confirmation fails, as there).
    const target = await this.options.rules.resolve(new URL(endpoint));
    return 'refused' in target && target.unresolved !== true ? target.refused : undefined;
  }

  sendConfirmation(endpoint: string, headers: Record<string, string>, body: string): void {
    void this.options.sender.send(endpoint, headers, body).then((result) => {
      const type = headers['x-amz-sns-message-type'];
      if (result.ok) this.options.log.info({ endpoint, type }, 'SNS confirmation sent');
      else
        this.options.log.warn({ endpoint, type, outcome: result.outcome }, 'SNS confirmation not delivered');
    });
  }

  wake(): void {
    if (this.stopped) return;
    this.options.clock.setTimer(0, () => this.pass());
  }

  private failed(error: unknown): void {
    this.options.log.error({ err: error }, 'SNS endpoint delivery pass failed');
  }

  /** One look (a pass under way is followed by one more rather than run beside it). */
  private pass(): Promise<void> {
    // A wake-up timer that fires after stop() finds the store closing: nothing more is claimed.
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          const now = this.options.clock.now();
          const claimed = await this.options.store.claimEndpointDeliveries(
            now,
            now + 4 * this.timeoutMs,
            BATCH,
          );
          await Promise.all(claimed.map((delivery) => this.attempt(delivery)));
          if (claimed.length === BATCH) this.again = true;
        } while (this.again && !this.stopped);
      } catch (error) {
        this.failed(error);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  private async attempt(delivery: EndpointDeliveryRecord): Promise<void> {
    const { store, clock, scope, log } = this.options;
    const subscription = await store.getSubscription(delivery.subscriptionArn);
    if (subscription === undefined || isPending(subscription)) {
      // Unsubscribed (or the topic deleted) since: SNS delivers nothing more to it.
      await store.finishEndpointDelivery(delivery.id);
      return;
    }
    const topic = await store.getTopic(delivery.topicName);
    const policy = effectiveDeliveryPolicy(
      topic?.attributes.DeliveryPolicy,
      subscription.attributes.DeliveryPolicy,
    );
    const startedAt = clock.now();
    if (policy.maxReceivesPerSecond !== undefined) {
      const second = Math.floor(startedAt / 1000);
      const spent = this.throttle.get(subscription.arn);
      const used = spent?.second === second ? spent.count : 0;
      if (used >= policy.maxReceivesPerSecond) {
        await store.retryEndpointDelivery(delivery.id, delivery.attempts, (second + 1) * 1000);
        return;
      }
      if (this.throttle.size > 10_000) this.throttle.clear();
      this.throttle.set(subscription.arn, { second, count: used + 1 });
    }
    const headers = endpointHeaders({
      type: delivery.messageType as EndpointMessageType,
      messageId: delivery.messageId,
      topicArn: topicArnOf(scope, delivery.topicName),
      subscriptionArn: delivery.subscriptionArn,
      raw: delivery.raw,
    });
    const result = await this.options.sender.send(delivery.endpoint, headers, delivery.body);
    if (result.ok) {
      this.counts.delivered++;
      this.options.outcome(delivery.topicName, delivery.subscriptionArn, 'delivered');
      this.options.latency(delivery.subscriptionArn, Math.max(0, clock.now() - delivery.createdAt) / 1000);
      await store.finishEndpointDelivery(delivery.id);
      return;
    }
    this.counts.failedAttempts++;
    const retry = delivery.attempts + 1;
    const delay = retryDelaySeconds(policy.retry, retry);
    const details = {
      subscription: delivery.subscriptionArn,
      endpoint: delivery.endpoint,
      messageId: delivery.messageId,
      attempt: retry,
      outcome: result.outcome,
    };
    if (delay !== undefined) {
      this.options.outcome(delivery.topicName, delivery.subscriptionArn, 'retried');
      await store.retryEndpointDelivery(delivery.id, retry, startedAt + delay * 1000, result.outcome);
      log.info({ ...details, retryInSeconds: delay }, 'SNS endpoint delivery failed, retrying');
      return;
    }
    this.options.outcome(delivery.topicName, delivery.subscriptionArn, 'failed');
    const deadLetterArn = deadLetterTargetOf(subscription.attributes);
    if (deadLetterArn !== undefined && (await this.options.deadLetter(deadLetterArn, delivery.body))) {
      this.counts.deadLettered++;
      log.warn(
        { ...details, deadLetterQueue: deadLetterArn },
        'SNS endpoint delivery given up: sent to the dead-letter queue',
      );
    } else {
      this.counts.dropped++;
      log.warn(details, 'SNS endpoint delivery given up and dropped (no dead-letter queue took it)');
    }
    await store.finishEndpointDelivery(delivery.id);
  }
}
