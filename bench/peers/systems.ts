/** The systems `npm run bench -- --peers` compares, in run order, with what each promises on a crash. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnListening, startTarget } from '../targets.ts';
import { bullPeer } from './bullmq.ts';
import { natsPeer } from './nats.ts';
import type { PeerInfo } from './peer.ts';
import { pgBossPeer } from './pgboss.ts';
import { RABBIT_PREFETCH, rabbitPeer } from './rabbitmq.ts';
import { motoPeer, sluicePeer, sqsPeer } from './sqs.ts';

const FAUXQS_SERVER = new URL('./fauxqs-server.ts', import.meta.url).pathname;
const FLOOR_SERVER = new URL('../floor-server.ts', import.meta.url).pathname;

export const SLUICE = 'sluice';
export const SLUICE_MEMORY = 'sluice-memory';

const SLUICE_ON_CRASH =
  'a send is answered after its commit is fsynced (group commit); receives and deletes ride on the next fsync, so after a crash a just-deleted message can come back (at-least-once), never a lost send';

const MEMORY_ON_CRASH = 'in memory only: everything is lost when the process stops';

/**
 * sluiceNodeArgs: extra node flags for the Sluice server, e.g. `--cpu-prof`. compareBin: another
 * checkout's bin/sluice.js, run as one more system (before/after figures from the same run).
 */
export function peerSystems(sluiceNodeArgs: readonly string[] = [], compareBin?: string): PeerInfo[] {
  // Another checkout's server in both modes, so one run gives before/after figures for each.
  const compare: PeerInfo[] = compareBin
    ? [
        {
          name: 'sluice-compare',
          label: `Sluice (${compareBin})`,
          setup: 'the same, from another checkout',
          onCrash: SLUICE_ON_CRASH,
          make: () => sluicePeer('sluice-compare', compareBin),
        },
        {
          name: 'sluice-memory-compare',
          label: `Sluice --in-memory (${compareBin})`,
          setup: 'the same, from another checkout',
          onCrash: MEMORY_ON_CRASH,
          make: () => sluicePeer('sluice-memory-compare', compareBin, [], 'memory'),
        },
      ]
    : [];
  return [
    ...compare,
    {
      name: SLUICE,
      label: 'Sluice (SQLite, durable)',
      setup: '`--durability durable`, SQS JSON API, batches of 10',
      onCrash: SLUICE_ON_CRASH,
      make: () => sluicePeer(SLUICE, undefined, sluiceNodeArgs),
    },
    {
      name: SLUICE_MEMORY,
      label: 'Sluice (--in-memory)',
      setup: '`--in-memory`, where emulator users run it (tests, CI), same SQS client',
      onCrash: MEMORY_ON_CRASH,
      make: () => sluicePeer(SLUICE_MEMORY, undefined, sluiceNodeArgs, 'memory'),
    },
    {
      name: 'moto',
      label: 'moto_server 5',
      setup: 'Python, in memory, same SQS client',
      onCrash: MEMORY_ON_CRASH,
      make: motoPeer,
    },
    {
      name: 'fauxqs',
      label: 'fauxqs 1.9.2',
      setup: 'Node, in memory, same SQS client',
      onCrash: MEMORY_ON_CRASH,
      make: () =>
        sqsPeer(
          'fauxqs',
          () =>
            spawnListening(
              'fauxqs',
              process.execPath,
              ['--import', 'tsx', FAUXQS_SERVER],
              /listening on (http:\/\/[^\s]+)/,
            ),
          true,
        ),
    },
    {
      name: 'rabbitmq',
      label: 'RabbitMQ (quorum queue)',
      setup: `durable quorum queue, persistent messages, publisher confirms, manual acks, prefetch ${RABBIT_PREFETCH}`,
      onCrash:
        'a confirm is sent once the message is in the quorum (Raft) log and fsynced on a majority (here: the single node); acks are logged too',
      make: rabbitPeer,
    },
    {
      name: 'nats',
      label: 'NATS JetStream',
      setup: 'file storage, work-queue retention, durable pull consumer, explicit acks',
      onCrash:
        'a PubAck means written to the stream file (OS page cache); JetStream fsyncs every 2 min by default (sync_interval), so an OS crash or power loss can drop acknowledged messages; a process crash does not',
      make: natsPeer,
    },
    {
      name: 'pg-boss',
      label: 'pg-boss 10 (PostgreSQL 15)',
      setup: 'fresh database, insert() batches, fetch({ batchSize: 10 }) + complete(), 0.5 s polling',
      onCrash: 'PostgreSQL commits with synchronous_commit=on and fsync=on: an acknowledged insert survives',
      make: pgBossPeer,
    },
    {
      name: 'bullmq',
      label: 'BullMQ 5 (Redis)',
      setup: 'addBulk batches, manual Worker getNextJob + moveToCompleted',
      onCrash:
        'this Redis runs with appendonly=no and no save points: an acknowledged job lives only in memory and is lost on any Redis restart (appendfsync always would be needed for per-write durability)',
      make: bullPeer,
    },
    {
      name: 'null',
      label: 'null server (harness ceiling)',
      setup: 'bench/null-server.ts: a minimal in-memory SQS that does as little as possible, same SQS client',
      onCrash: 'not a queue: no visibility timeouts, no redelivery, nothing kept',
      make: () => sqsPeer('null', () => startTarget('null')),
    },
    {
      name: 'floor',
      label: 'floor server (null + durable SQLite)',
      setup:
        'bench/floor-server.ts: the null server with each message inserted, claimed and deleted by row id in SQLite as `durable` does (WAL, group commit, sends answered after fdatasync), same SQS client',
      onCrash: 'an answered send is fsynced, but in-flight messages never come back: not a queue, a floor',
      make: () =>
        sqsPeer('floor', () => {
          const dataDir = mkdtempSync(join(tmpdir(), 'sluice-floor-'));
          return spawnListening(
            'floor',
            process.execPath,
            ['--import', 'tsx', FLOOR_SERVER, '--data', dataDir, '--port', '0'],
            /listening on (http:\/\/[^\s]+)/,
            () => rmSync(dataDir, { recursive: true, force: true }),
          );
        }),
    },
  ];
}
