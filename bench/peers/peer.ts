/**
 * One small interface every peer system implements, so the peer workload (bench/peers/workload.ts) is
 * the same code for Sluice, moto, fauxqs, RabbitMQ, NATS JetStream, pg-boss and BullMQ.
 */

/** Messages handed to one consumer, acknowledged together. */
export interface Delivery {
  readonly bodies: readonly string[];
  /** Acknowledges (deletes / acks / completes) every message of this delivery. */
  ack(): Promise<void>;
}

export interface PeerConsumer {
  /** Up to `max` messages; waits up to `waitMs` for the first one (an empty delivery after that). */
  next(max: number, waitMs: number): Promise<Delivery>;
  close(): Promise<void>;
}

/** Where producers send: a queue, or a topic fanning out to queues. */
export interface Sender {
  /** Sends the bodies (one batch where the system has batches); resolves once all are acknowledged. */
  send(bodies: readonly string[]): Promise<void>;
}

export interface PeerQueue extends Sender {
  /** A new independent consumer (its own channel / pull subscription / worker). */
  consumer(): Promise<PeerConsumer>;
  /** Removes the queue and what is left in it. */
  remove(): Promise<void>;
}

export interface Peer {
  readonly name: string;
  /** The biggest batch one send may carry (1 where the system has no batch send). */
  readonly maxBatch: number;
  /** Connects (or spawns the server); throws with a reason when the system cannot start. */
  start(): Promise<void>;
  /** PIDs whose summed VmRSS is the server's memory (several for PostgreSQL's process model). */
  serverPids(): number[];
  queue(name: string): Promise<PeerQueue>;
  /** Only for systems that also speak SNS: a topic with `subscribers` fresh queues subscribed (raw delivery). */
  topic?(name: string, subscribers: number): Promise<PeerTopic>;
  stop(): Promise<void>;
}

/** A topic: `send` publishes one batch, which every subscribed queue receives. */
export interface PeerTopic extends Sender {
  readonly queues: readonly PeerQueue[];
}

/** What a peer is, how it is configured, and what it promises about acknowledged messages on a crash. */
export interface PeerInfo {
  readonly name: string;
  readonly label: string;
  readonly setup: string;
  readonly onCrash: string;
  make(): Peer;
}

/** Empty delivery for a wait that found nothing. */
export const NOTHING: Delivery = { bodies: [], ack: async () => {} };
