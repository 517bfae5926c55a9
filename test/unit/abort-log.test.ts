import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { it } from 'node:test';
import pino from 'pino';
import { FakeClock } from 'sluice-client/clock';
import { clientAbortLog } from '../../packages/server/src/server/abort-log.ts';

it('logs client aborts once per address per interval, at info, counting the ones it left out', async () => {
  const lines: Array<{ level: number; client: string; moreSinceLastLine: number }> = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()));
        done();
      },
    }),
  );
  const clock = new FakeClock();
  const noteAbort = clientAbortLog(logger, clock, 60_000);
  for (let i = 0; i < 500; i++) noteAbort('10.0.0.1');
  noteAbort('10.0.0.2');
  await clock.advance(59_999);
  noteAbort('10.0.0.1');
  await clock.advance(1);
  noteAbort('10.0.0.1');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    lines.map(({ level, client, moreSinceLastLine }) => ({ level, client, moreSinceLastLine })),
    [
      { level: 30, client: '10.0.0.1', moreSinceLastLine: 0 },
      { level: 30, client: '10.0.0.2', moreSinceLastLine: 0 },
      { level: 30, client: '10.0.0.1', moreSinceLastLine: 500 },
    ],
  );
});
