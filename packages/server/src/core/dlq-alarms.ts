import { type Clock, type PeriodicJob, repeatEvery } from '#toolkit/clock';
import type { QueueRecord, Store } from '../store/contract.ts';
import { countOf } from './plural.ts';
import type { QueueDirectory } from './queue-directory.ts';
import { ageSeconds } from './queue-history.ts';
import { parseRedrivePolicy } from './redrive-policy.ts';

/**
 * DLQ alarms. Every queue that some RedrivePolicy targets is watched, without anyone asking: a DLQ that fills
 * silently for days is the failure this exists to make impossible, so alarms are on by default and can only
 * be silenced per queue, by name.
 */
export interface AlarmSettings {
  /** The alarm is raised when a DLQ has more visible messages than this. */
  threshold: number;
  /** How often DLQs are checked. */
  periodSeconds: number;
  /** Per-queue overrides, by queue name. */
  queues: Record<string, { threshold?: number; silenced?: boolean }>;
}

export const ALARM_DEFAULTS: AlarmSettings = { threshold: 0, periodSeconds: 10, queues: {} };

/** Warn when the DLQ's next message to expire (by retention) does so within this long. */
export const EXPIRY_WARNING_MS = 24 * 60 * 60 * 1000;
const HISTORY_LENGTH = 50;
/** The store's cluster-state document holding the watches, so every node answers with the holder's states. */
export const ALARM_STATE_DOCUMENT = 'dlq-alarms';
/**
 * One cluster-state document per DLQ holds its run-time silence: any node writes it in one statement, the
 * lease holder reads it at its next check, and it outlives restarts as the store does.
 */
const silenceDocument = (queue: string) => `dlq-alarm-silence:${queue}`;

export type AlarmEvent = 'raised' | 'growing' | 'expiring' | 'resolved' | 'silenced' | 'unsilenced';

/** A silence set or lifted at run time (the console), which outranks the config file's `silenced`. */
export interface AlarmSilence {
  silenced: boolean;
  /** Epoch ms. */
  at: number;
  /** The access key that set it, when credentials are configured. */
  by: string | undefined;
}

export interface AlarmNotification {
  event: AlarmEvent;
  queue: string;
  queueArn: string;
  /** The queues whose RedrivePolicy names this DLQ. */
  sourceQueues: string[];
  visible: number;
  threshold: number;
  /** Seconds since the DLQ's oldest message was sent (how long the problem has been waiting); 0 when empty. */
  oldestAgeSeconds: number;
  /** Epoch ms at which the DLQ's next message expires by retention, if it has one. */
  nextExpiryAt: number | undefined;
  /** Epoch ms. */
  at: number;
  message: string;
}

export interface AlarmState {
  queue: string;
  state: 'OK' | 'ALARM';
  silenced: boolean;
  visible: number;
  threshold: number;
  /** When the current alarm was raised. */
  since: number | undefined;
  /** The run-time silence in force; undefined when the config file decides. */
  silence: AlarmSilence | undefined;
  /** What happened, oldest first: raised, growing, expiring, resolved, silenced, unsilenced (the last 50). */
  history: AlarmNotification[];
}

interface Watch extends AlarmState {
  /** The DLQ's store id: a silence set for an earlier queue of the same name does not apply. */
  queueId: number;
  /** The visible count last notified; the alarm speaks again at each doubling. */
  notifiedCount: number;
  expiryNotified: boolean;
}

/** What the alarms need: time, the queues, and the store's message counts and shared state. */
export interface AlarmDependencies {
  readonly clock: Clock;
  readonly queues: Pick<QueueDirectory, 'allQueues' | 'queueByArn'>;
  readonly store: Pick<Store, 'clusterState' | 'countMessages' | 'nextExpiryAt' | 'saveClusterState'>;
}

export class DlqAlarms {
  private readonly watches = new Map<string, Watch>();
  /** Whether the watches were read back from the store (where the previous holder left them). */
  private resumed = false;
  private job: PeriodicJob | undefined;

  constructor(
    private readonly deps: AlarmDependencies,
    private readonly settings: AlarmSettings,
    private readonly notify: (notification: AlarmNotification) => void,
    private readonly onError: (error: unknown) => void = () => {},
  ) {
    if (!(settings.periodSeconds > 0))
      throw new Error('the alarm period must be a positive number of seconds');
  }

  /** Goes on from the states in the store (where the previous holder, or this node, left them). */
  start(): void {
    this.watches.clear();
    this.resumed = false;
    this.job = repeatEvery(
      this.deps.clock,
      0,
      this.settings.periodSeconds * 1000,
      () => this.check(),
      this.onError,
    );
  }

  async stop(): Promise<void> {
    await this.job?.stop();
  }

  /** The watched DLQs, by name, as this node's checks left them (only the lease holder checks). */
  states(): AlarmState[] {
    return publicStates([...this.watches.values()]);
  }

  /** The watched DLQs, by name, as the cluster's lease holder last checked them: what any node answers. */
  async clusterStates(): Promise<AlarmState[]> {
    const watches = await this.storedWatches();
    // A silence set since the holder's last check is in force already: it is what the next check finds.
    for (const watch of watches) {
      const silence = await this.silenceOf(watch.queue, watch.queueId);
      if (silence) Object.assign(watch, { silenced: silence.silenced, silence });
    }
    return publicStates(watches);
  }

  /** Silences the queue's alarm, or lifts its silence, from now on: kept in the store, for every node. */
  async setSilence(queue: QueueRecord, silenced: boolean, by: string | undefined): Promise<AlarmSilence> {
    const silence: AlarmSilence = { silenced, at: this.deps.clock.now(), by };
    await this.deps.store.saveClusterState(
      silenceDocument(queue.name),
      JSON.stringify({ ...silence, queueId: queue.id }),
    );
    return silence;
  }

  private async silenceOf(queue: string, queueId: number | undefined): Promise<AlarmSilence | undefined> {
    const stored = await this.deps.store.clusterState(silenceDocument(queue));
    if (stored === undefined) return undefined;
    const { queueId: silencedId, ...silence } = JSON.parse(stored) as AlarmSilence & { queueId: number };
    // A queue deleted and created again under the same name starts over from the config file.
    return silencedId === queueId ? silence : undefined;
  }

  private async storedWatches(): Promise<Watch[]> {
    const stored = await this.deps.store.clusterState(ALARM_STATE_DOCUMENT);
    // JSON leaves out a key whose value is undefined: a watch read back has `silence` as the checker wrote it.
    return stored === undefined
      ? []
      : (JSON.parse(stored) as Watch[]).map((watch) => ({ ...watch, silence: watch.silence ?? undefined }));
  }

  /** Looks at every DLQ once, raising, repeating and resolving alarms. */
  async check(): Promise<void> {
    if (!this.resumed) {
      // A node taking the lease over goes on from the previous holder's states, so it does not raise again.
      for (const watch of await this.storedWatches()) this.watches.set(watch.queue, watch);
      this.resumed = true;
    }
    const now = this.deps.clock.now();
    const sources = new Map<string, string[]>();
    for await (const queue of this.deps.queues.allQueues()) {
      const policy = queue.attributes.RedrivePolicy;
      if (!policy) continue;
      const target = parseRedrivePolicy(policy).deadLetterTargetArn;
      sources.set(target, [...(sources.get(target) ?? []), queue.name]);
    }
    const watched = new Set<string>();
    for (const [arn, sourceQueues] of sources) {
      const queue = await this.deps.queues.queueByArn(arn);
      if (!queue) continue;
      watched.add(queue.name);
      const own = this.settings.queues[queue.name] ?? {};
      const threshold = own.threshold ?? this.settings.threshold;
      const { visible, oldestSentAt } = await this.deps.store.countMessages(queue.id, now);
      const nextExpiryAt = await this.deps.store.nextExpiryAt(queue.id, now);
      const silence = await this.silenceOf(queue.name, queue.id);
      const silenced = silence?.silenced ?? own.silenced === true;
      let watch = this.watches.get(queue.name);
      if (!watch) {
        watch = {
          queue: queue.name,
          queueId: queue.id,
          state: 'OK',
          silenced,
          visible,
          threshold,
          since: undefined,
          silence,
          history: [],
          notifiedCount: 0,
          expiryNotified: false,
        };
        this.watches.set(queue.name, watch);
      }
      const silenceChanged = watch.silenced !== silenced;
      Object.assign(watch, { queueId: queue.id, silenced, silence, visible, threshold });
      const say = (event: AlarmEvent, message: string, at = now) => {
        const notification: AlarmNotification = {
          event,
          queue: queue.name,
          queueArn: arn,
          sourceQueues,
          visible,
          threshold,
          oldestAgeSeconds: ageSeconds(oldestSentAt, now),
          nextExpiryAt,
          at,
          message,
        };
        watch.history = [...watch.history, notification].slice(-HISTORY_LENGTH);
        // Whoever the alarm notifies hears that it falls silent, and why.
        if (!watch.silenced || event === 'silenced') this.notify(notification);
      };
      if (silenceChanged) {
        const who =
          silence === undefined ? ' (config file)' : silence.by === undefined ? '' : ` by ${silence.by}`;
        say(
          silenced ? 'silenced' : 'unsilenced',
          `alarm of dead-letter queue ${queue.name} ${silenced ? 'silenced' : 'unsilenced'}${who}`,
          silence?.at,
        );
      }
      if (visible > threshold) {
        if (watch.state === 'OK') {
          Object.assign(watch, { state: 'ALARM', since: now, notifiedCount: visible, expiryNotified: false });
          say(
            'raised',
            `dead-letter queue ${queue.name} holds ${countOf(visible, 'message')} (threshold ${threshold})${fromSources(sourceQueues)}`,
          );
        } else if (visible >= 2 * watch.notifiedCount) {
          watch.notifiedCount = visible;
          say(
            'growing',
            `dead-letter queue ${queue.name} keeps growing: ${countOf(visible, 'message')}${fromSources(sourceQueues)}`,
          );
        }
        if (!watch.expiryNotified && nextExpiryAt !== undefined && nextExpiryAt - now <= EXPIRY_WARNING_MS) {
          watch.expiryNotified = true;
          const hours = Math.max(0, (nextExpiryAt - now) / 3_600_000).toFixed(1);
          say(
            'expiring',
            `dead-letter queue ${queue.name}: its oldest message expires by retention in ${hours} h and is then lost`,
          );
        }
      } else if (watch.state === 'ALARM') {
        Object.assign(watch, { state: 'OK', since: undefined, notifiedCount: 0, expiryNotified: false });
        say(
          'resolved',
          `dead-letter queue ${queue.name} is back to ${countOf(visible, 'message')} (threshold ${threshold})`,
        );
      }
    }
    // A queue that is no longer any queue's DLQ is no longer watched.
    for (const name of this.watches.keys()) if (!watched.has(name)) this.watches.delete(name);
    await this.deps.store.saveClusterState(ALARM_STATE_DOCUMENT, JSON.stringify([...this.watches.values()]));
  }
}

/** The end of a raised or growing alarm's message: where the messages came from. */
function fromSources(sourceQueues: readonly string[]): string {
  return sourceQueues.length === 0 ? '' : `, from ${sourceQueues.join(', ')}`;
}

/**
 * The alarms a reader who may see only some queues is shown: those of the DLQs it may read, and in their
 * history only the source queues it may read, in `sourceQueues` and in the messages that name them.
 */
export async function readableStates(
  states: readonly AlarmState[],
  mayRead: (queue: string) => Promise<boolean>,
): Promise<AlarmState[]> {
  const readable: AlarmState[] = [];
  for (const state of states) {
    if (!(await mayRead(state.queue))) continue;
    const history: AlarmNotification[] = [];
    for (const notification of state.history) {
      const shown: string[] = [];
      for (const source of notification.sourceQueues) if (await mayRead(source)) shown.push(source);
      const named = fromSources(notification.sourceQueues);
      history.push(
        shown.length === notification.sourceQueues.length
          ? notification
          : {
              ...notification,
              sourceQueues: shown,
              message: notification.message.endsWith(named)
                ? `${notification.message.slice(0, -named.length)}${fromSources(shown)}`
                : notification.message,
            },
      );
    }
    readable.push({ ...state, history });
  }
  return readable;
}

function publicStates(watches: readonly Watch[]): AlarmState[] {
  return watches
    .map(({ queueId: _q, notifiedCount: _n, expiryNotified: _e, ...state }) => ({
      ...state,
      history: [...state.history],
    }))
    .sort((a, b) => a.queue.localeCompare(b.queue));
}
