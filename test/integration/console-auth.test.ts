import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { rawRequest } from '../helpers/raw-requests.ts';
import {
  NEEDS_OWN_SERVER,
  type RunningServer,
  removeDataDir,
  SLUICE_CLI,
  startServer,
} from '../helpers/server.ts';
import { selfSignedCertificate } from '../helpers/tls.ts';

const run = promisify(execFile);

const ADMIN = { accessKeyId: 'AKIDADMIN', secretAccessKey: 'admin-secret-1' };
const ORDERS = { accessKeyId: 'AKIDORDERS', secretAccessKey: 'orders-secret-1', queues: ['orders*'] };
const METRICS_TOKEN = 'scrape-token-0123456789';
/** Every page served beside the SQS API. */
const PAGES = [
  '/console',
  '/console/',
  '/console/console.js',
  '/console/console.css',
  '/console/login',
  '/api/overview',
  '/api/history?queue=secret',
  '/api/sns/subscriptions?queue=secret',
  '/api/attributes',
  '/alarms',
  '/metrics',
];

/**
 * A server started with access keys (and a metrics token): its pages need a signed-in session, a SigV4
 * signature or (for /metrics) the token; the console signs in with a key's id and secret and its session
 * cookie carries the key's own limits to the SQS API, from the server's own origin only.
 */
describe('console sign-in and the pages, with credentials', { skip: NEEDS_OWN_SERVER }, () => {
  let server: RunningServer;
  let endpoint: string;

  before(async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-console-auth-'));
    const config = join(dataDir, 'config.json');
    writeFileSync(config, JSON.stringify({ credentials: [ORDERS], queues: [{ name: 'secret' }] }));
    server = await startServer({
      dataDir,
      args: [
        '--credentials',
        `${ADMIN.accessKeyId}:${ADMIN.secretAccessKey}`,
        '--config',
        config,
        '--metrics-token',
        METRICS_TOKEN,
      ],
    });
    endpoint = server.endpoint;
  });
  after(async () => {
    await server?.stop();
    if (server) removeDataDir(server.dataDir);
  });

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${endpoint}${path}`, { headers, redirect: 'manual' });
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${endpoint}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body,
    });
  const signInForm = (key: { accessKeyId: string; secretAccessKey: string }) =>
    new URLSearchParams({ accessKeyId: key.accessKeyId, secretAccessKey: key.secretAccessKey }).toString();
  /** Signs in as the console's page does; returns the cookie to send back. */
  async function signIn(key: { accessKeyId: string; secretAccessKey: string }): Promise<string> {
    const response = await post('/console/login', signInForm(key), { origin: endpoint });
    assert.equal(response.status, 303, await response.text());
    const setCookie = response.headers.get('set-cookie') ?? '';
    return setCookie.split(';')[0]!;
  }
  /** An SQS JSON request as the console's page makes it: the cookie, and the browser's Sec-Fetch-Site. */
  const sqs = (
    cookie: string,
    action: string,
    input: object,
    headers: Record<string, string> = { 'sec-fetch-site': 'same-origin' },
  ) =>
    fetch(`${endpoint}/`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `AmazonSQS.${action}`,
        cookie,
        ...headers,
      },
      body: JSON.stringify(input),
    });
  const errorCode = async (response: Response) =>
    ((await response.json()) as { __type: string }).__type.split('#').pop();

  it('answers every page but /health with 401 or 403 without a session, signature or token', async () => {
    for (const path of PAGES) {
      const response = await get(path);
      assert.equal(response.status, 401, path);
      const text = await response.text();
      assert.doesNotMatch(text, /secret"|AKIDORDERS|sluice_/, `${path} leaks nothing`);
      if (path.startsWith('/console')) assert.match(text, /<form method="post" action="\/console\/login">/);
    }
    assert.equal((await get('/metrics')).headers.get('www-authenticate'), 'Bearer realm="sluice metrics"');
    // A cookie nobody issued is no session.
    assert.equal((await get('/api/overview', { cookie: 'sluice_session=forged' })).status, 401);
    assert.equal((await get('/health')).status, 200);
  });

  it('refuses a wrong secret or an unknown key at sign-in, without a cookie', async () => {
    for (const key of [
      { ...ADMIN, secretAccessKey: 'wrong' },
      { accessKeyId: 'AKIDNOBODY', secretAccessKey: ADMIN.secretAccessKey },
    ]) {
      const response = await post('/console/login', signInForm(key), { origin: endpoint });
      assert.equal(response.status, 401);
      assert.equal(response.headers.get('set-cookie'), null);
      assert.match(await response.text(), /Wrong access key id or secret/);
    }
    // From another site's page: refused whatever the secret.
    const crossSite = await post('/console/login', signInForm(ADMIN), { 'sec-fetch-site': 'cross-site' });
    assert.equal(crossSite.status, 403);
    assert.equal(crossSite.headers.get('set-cookie'), null);
  });

  it('signs in with a right key: an HttpOnly, SameSite=Strict session cookie that opens the pages and the SQS API', async () => {
    const response = await post('/console/login', signInForm(ADMIN), { origin: endpoint });
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), '/console');
    const attributes = (response.headers.get('set-cookie') ?? '').split(/;\s*/);
    assert.match(attributes[0]!, /^sluice_session=[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(attributes.slice(1).sort(), ['HttpOnly', 'Max-Age=28800', 'Path=/', 'SameSite=Strict']);
    const cookie = attributes[0]!;

    for (const path of PAGES) assert.equal((await get(path, { cookie })).status, 200, path);
    const overview = (await (await get('/api/overview', { cookie })).json()) as {
      signedInAs: string;
      queues: Array<{ name: string }>;
    };
    assert.equal(overview.signedInAs, ADMIN.accessKeyId);
    assert.ok(overview.queues.some((q) => q.name === 'secret'));

    const created = await sqs(cookie, 'CreateQueue', { QueueName: 'orders-1' });
    assert.equal(created.status, 200, await created.clone().text());
    const { QueueUrl } = (await created.json()) as { QueueUrl: string };
    assert.equal(
      (await sqs(cookie, 'SendMessage', { QueueUrl, MessageBody: 'from the console' })).status,
      200,
    );
    // The Origin header alone (browsers without Sec-Fetch-Site) is accepted too.
    assert.equal((await sqs(cookie, 'ListQueues', {}, { origin: endpoint })).status, 200);

    // The same cookie from anywhere but the server's own page is refused.
    const elsewhere: Array<Record<string, string>> = [
      {},
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
      { origin: 'http://evil.example' },
    ];
    for (const headers of elsewhere) {
      const refused = await sqs(cookie, 'SendMessage', { QueueUrl, MessageBody: 'forged' }, headers);
      assert.equal(refused.status, 403, JSON.stringify(headers));
      assert.equal(await errorCode(refused), 'AccessDeniedException');
    }
  });

  it('gives a session its key’s limits: a key for orders* cannot touch secret', async () => {
    const cookie = await signIn(ORDERS);
    const created = await sqs(cookie, 'CreateQueue', { QueueName: 'orders-2' });
    assert.equal(created.status, 200);
    const secretUrl = `${endpoint}/000000000000/secret`;
    for (const [action, input] of [
      ['SendMessage', { QueueUrl: secretUrl, MessageBody: 'x' }],
      ['ReceiveMessage', { QueueUrl: secretUrl }],
      ['PurgeQueue', { QueueUrl: secretUrl }],
      ['CreateQueue', { QueueName: 'secret-2' }],
    ] as const) {
      const refused = await sqs(cookie, action, input);
      assert.equal(refused.status, 403, action);
      assert.match(
        ((await refused.json()) as { message: string }).message,
        new RegExp(`AKIDORDERS is not authorized to perform: sqs:${action}`),
      );
    }
    const overview = (await (await get('/api/overview', { cookie })).json()) as {
      queues: Array<{ name: string }>;
    };
    assert.ok(overview.queues.length > 0);
    assert.ok(
      overview.queues.every((q) => q.name.startsWith('orders')),
      JSON.stringify(overview.queues),
    );
    assert.equal((await get('/api/history?queue=secret', { cookie })).status, 403);
    assert.equal((await get('/api/history?queue=orders-2', { cookie })).status, 200);
    // /metrics names every queue: not for a limited key.
    assert.equal((await get('/metrics', { cookie })).status, 403);
  });

  it('signs out: the cookie is cleared and the session no longer works', async () => {
    const cookie = await signIn(ADMIN);
    assert.equal((await get('/api/overview', { cookie })).status, 200);
    const out = await post('/console/logout', '', { cookie, 'sec-fetch-site': 'same-origin' });
    assert.equal(out.status, 303);
    assert.match(out.headers.get('set-cookie') ?? '', /^sluice_session=; .*Max-Age=0/);
    assert.equal((await get('/api/overview', { cookie })).status, 401);
    assert.match(await (await get('/console', { cookie })).text(), /action="\/console\/login"/);
    const ended = await sqs(cookie, 'ListQueues', {});
    assert.equal(ended.status, 403);
    assert.equal(await errorCode(ended), 'MissingAuthenticationTokenException');
  });

  it('serves /metrics to the bearer token or a key without limits, and nothing to a wrong token', async () => {
    const scraped = await get('/metrics', { authorization: `Bearer ${METRICS_TOKEN}` });
    assert.equal(scraped.status, 200);
    assert.match(await scraped.text(), /sluice_requests_total/);
    const wrong = await get('/metrics', { authorization: 'Bearer not-the-token-at-all' });
    assert.equal(wrong.status, 403);
    assert.doesNotMatch(await wrong.text(), /sluice_/);
    // The token opens /metrics only.
    assert.equal((await get('/api/overview', { authorization: `Bearer ${METRICS_TOKEN}` })).status, 401);
    assert.equal((await get('/metrics', { cookie: await signIn(ADMIN) })).status, 200);
  });

  it('lets `sluice stats` read the history with a signed request (AWS_ACCESS_KEY_ID and secret)', async () => {
    const stats = (env: Record<string, string>) =>
      run(process.execPath, [...SLUICE_CLI, 'stats', 'orders-1', '--endpoint', endpoint, '--json'], {
        env: { ...process.env, ...env },
      });
    const { stdout } = await stats({
      AWS_ACCESS_KEY_ID: ADMIN.accessKeyId,
      AWS_SECRET_ACCESS_KEY: ADMIN.secretAccessKey,
    });
    assert.ok(Array.isArray(JSON.parse(stdout)));
    await assert.rejects(
      stats({ AWS_ACCESS_KEY_ID: ADMIN.accessKeyId, AWS_SECRET_ACCESS_KEY: 'wrong' }),
      (error: { code?: number; stderr?: string }) => error.code === 1 && /HTTP 403/.test(error.stderr ?? ''),
    );
  });

  it('stops an address guessing secrets: past 5 failures in a minute, even the right one waits', async () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const response = await post(
        '/console/login',
        signInForm({ ...ADMIN, secretAccessKey: `guess-${attempt}` }),
        {
          origin: endpoint,
        },
      );
      assert.equal(response.status, 401);
    }
    const throttled = await post('/console/login', signInForm(ADMIN), { origin: endpoint });
    assert.equal(throttled.status, 429);
    assert.equal(throttled.headers.get('set-cookie'), null);
    const retryAfter = Number(throttled.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 60, String(retryAfter));
    assert.match(await throttled.text(), /Too many failed sign-ins/);
  });

  it('lets a client guessing from 20 addresses hold up no one else, and slows guessing one key', async () => {
    /** A sign-in from `address`, one of the machine's loopback addresses. */
    const signInFrom = (address: string, key: { accessKeyId: string; secretAccessKey: string }) => {
      const agent = new Agent({ localAddress: address });
      const body = signInForm(key);
      return rawRequest(endpoint, {
        method: 'POST',
        path: '/console/login',
        agent,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': String(Buffer.byteLength(body)),
          origin: endpoint,
        },
        body,
      }).finally(() => agent.destroy());
    };
    // One client, 20 addresses, 5 failures from each, at key ids of its choosing.
    for (let address = 2; address <= 21; address++)
      for (let attempt = 0; attempt < 5; attempt++) {
        const guess = { accessKeyId: `AKIDGUESS${address}`, secretAccessKey: `guess-${attempt}` };
        assert.equal((await signInFrom(`127.0.0.${address}`, guess)).status, 401);
      }
    assert.equal((await signInFrom('127.0.0.2', ORDERS)).status, 429, 'a guessing address waits');
    const other = await signInFrom('127.0.0.22', ORDERS);
    assert.equal(other.status, 303, 'a right sign-in from another address goes through');
    assert.match(other.headers.get('set-cookie') ?? '', /^sluice_session=/);
    // Guessing one key's secret from several addresses: 20 failures within the minute and its sign-ins wait.
    for (let address = 23; address <= 26; address++)
      for (let attempt = 0; attempt < 5; attempt++) {
        const guess = { ...ADMIN, secretAccessKey: `guess-${address}-${attempt}` };
        assert.ok([401, 429].includes((await signInFrom(`127.0.0.${address}`, guess)).status));
      }
    const guessed = await signInFrom('127.0.0.27', ADMIN);
    assert.equal(guessed.status, 429);
    assert.ok(Number(guessed.headers.get('retry-after')) > 0);
  });
});

describe('console sign-in over HTTPS', { skip: NEEDS_OWN_SERVER }, () => {
  it('marks the session cookie Secure', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-console-tls-'));
    const { cert, key } = await selfSignedCertificate(dir);
    const server = await startServer({
      dataDir: dir,
      args: [
        '--tls-cert',
        cert,
        '--tls-key',
        key,
        '--credentials',
        `${ADMIN.accessKeyId}:${ADMIN.secretAccessKey}`,
      ],
    });
    try {
      const body = new URLSearchParams(ADMIN).toString();
      const setCookie = await new Promise<string | undefined>((resolve, reject) => {
        const request = httpsRequest(
          `${server.endpoint}/console/login`,
          {
            method: 'POST',
            ca: readFileSync(cert),
            headers: {
              'content-type': 'application/x-www-form-urlencoded',
              origin: server.endpoint,
              'content-length': Buffer.byteLength(body),
            },
          },
          (response) => {
            response.resume();
            assert.equal(response.statusCode, 303);
            resolve(response.headers['set-cookie']?.[0]);
          },
        );
        request.once('error', reject);
        request.end(body);
      });
      assert.match(setCookie ?? '', /; HttpOnly; SameSite=Strict; Max-Age=28800; Secure$/);
    } finally {
      await server.stop();
      removeDataDir(dir);
    }
  });
});

describe('the metrics token', () => {
  it('must be 16 to 256 visible characters, on the command line and in the config file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-metrics-token-'));
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ metricsToken: 'has a space in it, long enough' }));
    try {
      for (const args of [
        ['--metrics-token', 'short'],
        ['--config', config],
      ]) {
        await assert.rejects(
          run(process.execPath, [...SLUICE_CLI, 'serve', '--port', '0', '--data', dir, ...args]),
          (error: { code?: number; stderr?: string }) =>
            error.code === 2 && /must be 16 to 256 visible ASCII characters/.test(error.stderr ?? ''),
        );
      }
    } finally {
      removeDataDir(dir);
    }
  });
});
