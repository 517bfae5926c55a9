import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { signRequest } from '../../packages/server/src/server/auth/sigv4.ts';
import { NEEDS_OWN_SERVER, type RunningServer, removeDataDir, startServer } from '../helpers/server.ts';

const DLQ_ARN = 'arn:aws:sqs:us-east-1:000000000000:orders-dlq';

interface Alarm {
  queue: string;
  silenced: boolean;
  silence?: { silenced: boolean; at: number; by?: string };
  history: Array<{ event: string; message: string }>;
}

/** A config file: orders dead-letters into orders-dlq, alarms checked every second, and `extra`. */
function configIn(dir: string, extra: object = {}): string {
  const file = join(dir, 'sluice.json');
  writeFileSync(
    file,
    JSON.stringify({
      alarms: { periodSeconds: 1 },
      queues: [
        { name: 'orders-dlq' },
        {
          name: 'orders',
          attributes: { RedrivePolicy: { deadLetterTargetArn: DLQ_ARN, maxReceiveCount: 1 } },
        },
      ],
      ...extra,
    }),
  );
  return file;
}

/** The orders-dlq alarm as /alarms shows it, once `ready` holds (each check is a second apart). */
async function alarmWhen(
  endpoint: string,
  ready: (alarm: Alarm | undefined) => boolean,
  headers: Record<string, string> = {},
): Promise<Alarm> {
  for (let tries = 0; ; tries++) {
    const { alarms } = (await (await fetch(`${endpoint}/alarms`, { headers })).json()) as { alarms: Alarm[] };
    const alarm = alarms.find((a) => a.queue === 'orders-dlq');
    if (ready(alarm)) return alarm!;
    assert.ok(tries < 300, `no such alarm state within 30 s: ${JSON.stringify(alarm)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const silence = (endpoint: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${endpoint}/api/alarms/silence`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });

const errorCode = async (response: Response) =>
  ((await response.json()) as { __type: string }).__type.split('#').pop();

/**
 * POST /api/alarms/silence on a `sluice serve` without credentials: refused from another origin's page,
 * checked like any input, in force at once on /alarms and /metrics, in the alarm's history after the next
 * check, and still there after a restart.
 */
describe('silencing a DLQ alarm at run time', { skip: NEEDS_OWN_SERVER }, () => {
  let dir: string;
  let server: RunningServer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-alarm-silence-'));
    server = await startServer({ dataDir: join(dir, 'data'), args: ['--config', configIn(dir)] });
  });
  after(async () => {
    await server?.stop();
    removeDataDir(dir);
  });

  it('refuses a request another origin’s page sent, as the SQS API does', async () => {
    await alarmWhen(server.endpoint, (alarm) => alarm !== undefined);
    const body = JSON.stringify({ queue: 'orders-dlq', silenced: true });
    const otherOrigins: Array<Record<string, string>> = [
      { origin: 'http://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of otherOrigins) {
      const refused = await silence(server.endpoint, body, headers);
      assert.equal(refused.status, 403, JSON.stringify(headers));
      assert.equal(await errorCode(refused), 'AccessDeniedException');
    }
    assert.equal((await alarmWhen(server.endpoint, () => true)).silenced, false);
  });

  it('answers bad input with SQS-shaped errors', async () => {
    const cases: Array<[string, string]> = [
      ['not json', 'SerializationException'],
      ['{"silenced": true}', 'MissingRequiredParameterException'],
      ['{"queue": "orders-dlq", "silenced": "yes"}', 'InvalidParameterValueException'],
      ['{"queue": "nowhere", "silenced": true}', 'QueueDoesNotExist'],
    ];
    for (const [body, code] of cases) {
      const response = await silence(server.endpoint, body);
      assert.equal(response.status, 400, body);
      assert.equal(await errorCode(response), code, body);
    }
  });

  it('silences at once, records it at the next check, and keeps it across a restart', async () => {
    const response = await silence(server.endpoint, JSON.stringify({ queue: 'orders-dlq', silenced: true }), {
      'sec-fetch-site': 'same-origin',
    });
    assert.equal(response.status, 200);
    const answer = (await response.json()) as { queue: string; silenced: boolean; at: number };
    assert.equal(answer.queue, 'orders-dlq');
    assert.equal(answer.silenced, true);
    // /alarms and /metrics show it before the lease holder's next check.
    const { alarms } = (await (await fetch(`${server.endpoint}/alarms`)).json()) as { alarms: Alarm[] };
    assert.deepEqual(alarms.find((a) => a.queue === 'orders-dlq')?.silence, {
      silenced: true,
      at: answer.at,
    });
    const metrics = await (await fetch(`${server.endpoint}/metrics`)).text();
    assert.match(metrics, /sluice_dlq_alarm\{queue="orders-dlq",silenced="true"\} 0/);
    const recorded = await alarmWhen(server.endpoint, (alarm) =>
      (alarm?.history ?? []).some((entry) => entry.event === 'silenced'),
    );
    assert.equal(recorded.history.at(-1)?.message, 'alarm of dead-letter queue orders-dlq silenced');

    await server.stop();
    server = await startServer({ dataDir: join(dir, 'data'), args: ['--config', configIn(dir)] });
    const restarted = await alarmWhen(server.endpoint, (alarm) => alarm !== undefined);
    assert.equal(restarted.silenced, true, 'the silence outlives the restart');
    assert.deepEqual(
      restarted.history.map((entry) => entry.event),
      ['silenced'],
    );

    const lifted = await silence(server.endpoint, JSON.stringify({ queue: 'orders-dlq', silenced: false }));
    assert.equal(lifted.status, 200);
    await alarmWhen(server.endpoint, (alarm) => alarm?.history.at(-1)?.event === 'unsilenced');
  });

  it('lets the run-time choice outrank the config file’s silenced', async () => {
    await server.stop();
    const config = configIn(dir, {
      alarms: { periodSeconds: 1, queues: { 'orders-dlq': { silenced: true } } },
    });
    server = await startServer({ dataDir: join(dir, 'data'), args: ['--config', config] });
    // Unsilenced at run time in the previous test: the config file's silenced does not bring it back.
    const alarm = await alarmWhen(server.endpoint, (state) => state !== undefined);
    assert.equal(alarm.silenced, false);
    assert.equal(alarm.silence?.silenced, false);
  });
});

/**
 * With credentials: a signature or a session of the server's own origin, of a key that may
 * SetQueueAttributes on the DLQ; the history names the key.
 */
describe('silencing a DLQ alarm with credentials', { skip: NEEDS_OWN_SERVER }, () => {
  const ADMIN = { accessKeyId: 'AKIDADMIN', secretAccessKey: 'admin-secret-1' };
  const READER = {
    accessKeyId: 'AKIDREADER',
    secretAccessKey: 'reader-secret-1',
    actions: ['GetQueueAttributes', 'ListQueues'],
  };
  const OTHERS = { accessKeyId: 'AKIDOTHERS', secretAccessKey: 'others-secret-1', queues: ['payments*'] };
  let dir: string;
  let server: RunningServer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-alarm-silence-keys-'));
    server = await startServer({
      dataDir: join(dir, 'data'),
      args: ['--config', configIn(dir, { credentials: [ADMIN, READER, OTHERS] })],
    });
  });
  after(async () => {
    await server?.stop();
    removeDataDir(dir);
  });

  async function signIn(key: { accessKeyId: string; secretAccessKey: string }): Promise<string> {
    const response = await fetch(`${server.endpoint}/console/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.endpoint },
      body: new URLSearchParams({
        accessKeyId: key.accessKeyId,
        secretAccessKey: key.secretAccessKey,
      }).toString(),
    });
    assert.equal(response.status, 303);
    return (response.headers.get('set-cookie') ?? '').split(';')[0]!;
  }

  it('needs a signature or a same-origin session of a key that may SetQueueAttributes on the DLQ', async () => {
    const body = JSON.stringify({ queue: 'orders-dlq', silenced: true });
    const anonymous = await silence(server.endpoint, body);
    assert.equal(anonymous.status, 401);

    const sameOrigin = { 'sec-fetch-site': 'same-origin' };
    for (const key of [READER, OTHERS]) {
      const refused = await silence(server.endpoint, body, { cookie: await signIn(key), ...sameOrigin });
      assert.equal(refused.status, 403, key.accessKeyId);
      assert.match(
        ((await refused.json()) as { message: string }).message,
        new RegExp(`${key.accessKeyId} is not authorized to perform: sqs:SetQueueAttributes`),
      );
    }
    const admin = await signIn(ADMIN);
    const otherSite = await silence(server.endpoint, body, { cookie: admin, 'sec-fetch-site': 'same-site' });
    assert.equal(otherSite.status, 403, 'the cookie only from the console’s own origin');

    const accepted = await silence(server.endpoint, body, { cookie: admin, ...sameOrigin });
    assert.equal(accepted.status, 200);
    const signature = signRequest(
      { method: 'GET', url: new URL(`${server.endpoint}/alarms`), body: '' },
      ADMIN,
      'us-east-1',
      Date.now(),
    );
    const { host: _host, ...signed } = signature;
    const recorded = await alarmWhen(
      server.endpoint,
      (alarm) => alarm?.history.at(-1)?.event === 'silenced',
      signed,
    );
    assert.equal(
      recorded.history.at(-1)?.message,
      'alarm of dead-letter queue orders-dlq silenced by AKIDADMIN',
    );
    assert.equal(recorded.silence?.by, 'AKIDADMIN');

    // A signed request works as well, without a cookie or an Origin (fetch adds no Content-Type to bytes).
    const liftBody = JSON.stringify({ queue: 'orders-dlq', silenced: false });
    const liftUrl = new URL(`${server.endpoint}/api/alarms/silence`);
    const { host: _liftHost, ...liftSigned } = signRequest(
      { method: 'POST', url: liftUrl, body: liftBody },
      ADMIN,
      'us-east-1',
      Date.now(),
    );
    const lifted = await fetch(liftUrl, { method: 'POST', headers: liftSigned, body: Buffer.from(liftBody) });
    assert.equal(lifted.status, 200, await lifted.clone().text());
    assert.equal(((await lifted.json()) as { silenced: boolean }).silenced, false);
  });
});
