import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { admin, freshDatabase } from '../../tools/postgres.ts';
import { NEEDS_OWN_SERVER, type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';

/**
 * A node whose PostgreSQL database stops taking connections says so on /health (degraded, still 200: the
 * process is alive, and restarting it would not bring the database back), and says ok again once it returns.
 */
let database: Awaited<ReturnType<typeof freshDatabase>>;
let server: RunningServer;

before(async () => {
  database = await freshDatabase();
  server = await startServer({ args: ['--store', database.url, '--log-level', 'fatal'] });
});

after(async () => {
  await server?.stop();
  if (server) removeDataDir(server.dataDir);
  await admin(`ALTER DATABASE ${database.name} ALLOW_CONNECTIONS true`);
  await database?.drop();
});

async function health(): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${server.endpoint}/health`);
  return { status: response.status, body: await response.json() };
}

test('/health reports an unreachable PostgreSQL, and ok once it is back', {
  skip: NEEDS_OWN_SERVER,
}, async () => {
  assert.deepEqual(await health(), { status: 200, body: { status: 'ok' } });
  await admin(`ALTER DATABASE ${database.name} ALLOW_CONNECTIONS false`);
  await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${database.name}'`);
  assert.deepEqual(await health(), {
    status: 200,
    body: { status: 'degraded', reason: 'store unreachable' },
  });

  await admin(`ALTER DATABASE ${database.name} ALLOW_CONNECTIONS true`);
  let healthy: Awaited<ReturnType<typeof health>> | undefined;
  for (let i = 0; i < 50; i++) {
    healthy = await health();
    if ((healthy.body as { status: string }).status === 'ok') break;
    await sleep(100);
  }
  assert.deepEqual(healthy, { status: 200, body: { status: 'ok' } });
  assert.equal(server.process.exitCode, null, 'the node kept running');
});
