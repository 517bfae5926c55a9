import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Clock, Timer } from '#toolkit/clock';
import type { Store } from '../store/contract.ts';

/** The lease under which one node runs the cluster's singletons. */
export const SINGLETONS_LEASE = 'singletons';

export interface LeaseSettings {
  /** How often the holder renews and the others try to take over. Default 2000 ms. */
  renewMs: number;
  /** How long a lease lasts without renewal: a dead holder is replaced within about this long. Default 6000 ms. */
  ttlMs: number;
}

export const LEASE_DEFAULTS: LeaseSettings = { renewMs: 2000, ttlMs: 6000 };

/** What runs only on the lease holder; `tick` runs at every renewal while held (picking up new work). */
export interface Singletons {
  start(): Promise<void>;
  /** `lost`: another node may hold the lease now; `released`: this node is shutting down. */
  stop(reason: 'lost' | 'released'): Promise<void>;
  tick?(): Promise<void>;
}

/**
 * Runs `singletons` on exactly one node of those sharing `store`: the one holding the lease. Each node tries
 * every `renewMs`; the holder renews, the others take over once it has not renewed for `ttlMs`. A holder that
 * fails to renew stops its singletons before the lease can have passed to another node (it stops at the
 * first failed renewal, which is at most renewMs after the last success, well inside ttlMs). A store without
 * leases (SQLite: one process) holds it for good.
 */
export class ClusterLease {
  /** hostname:pid:random, so that an operator can tell which node holds the lease. */
  readonly holder = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private held = false;
  private timer: Timer | undefined;
  private stopped = false;
  private turn: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Pick<Store, 'claimLease' | 'releaseLease'>,
    private readonly clock: Clock,
    private readonly singletons: Singletons,
    private readonly onError: (error: unknown) => void,
    private readonly settings: LeaseSettings = LEASE_DEFAULTS,
  ) {}

  /** Whether other nodes can share the store (and so the lease); a store of one process has no lease. */
  get shared(): boolean {
    return this.store.claimLease !== undefined;
  }

  /** Whether this node runs the singletons now. */
  get isHolder(): boolean {
    return this.held;
  }

  async start(): Promise<void> {
    await this.renew();
  }

  private renew(): Promise<void> {
    this.turn = this.turn.then(async () => {
      if (this.stopped) return;
      let holds: boolean;
      try {
        holds = this.store.claimLease
          ? await this.store.claimLease(SINGLETONS_LEASE, this.holder, this.settings.ttlMs)
          : true;
      } catch (error) {
        this.onError(error);
        holds = false;
      }
      try {
        if (holds && !this.held) {
          this.held = true;
          await this.singletons.start();
        } else if (!holds && this.held) {
          this.held = false;
          await this.singletons.stop('lost');
        } else if (holds) await this.singletons.tick?.();
      } catch (error) {
        this.onError(error);
      }
      if (this.store.claimLease && !this.stopped)
        this.timer = this.clock.setTimer(this.settings.renewMs, () => void this.renew());
    });
    return this.turn;
  }

  /** Stops the singletons here and gives the lease up, so another node takes over at its next try. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    await this.turn;
    if (this.held) {
      this.held = false;
      await this.singletons.stop('released');
      await this.store.releaseLease?.(SINGLETONS_LEASE, this.holder).catch(this.onError);
    }
  }
}
