import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListMessageMoveTasksCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { type RunningSluice, startSluice } from 'sluice';
import { sqsClient } from '../helpers/sqs-client.ts';

/** Debian's chromium (`.ci/run` installs it); playwright-core never downloads a browser of its own. */
const CHROMIUM = '/usr/bin/chromium';
/** A name the browser resolves to 127.0.0.1, as a rebound DNS name would. */
const REBOUND_NAME = 'rebound.test';

/**
 * A page of another origin (another port of 127.0.0.1: same-site for the browser) tries every request a
 * page can make a browser send to a Sluice on its default settings; a page on a rebound name tries it as
 * the server's own origin. A normal client then finds nothing changed. With --cors-origin, the allowed
 * origin's page really uses the JSON protocol through fetch, and no other origin can.
 */
describe('web pages of other origins in a real browser', { concurrency: false }, () => {
  let sluice: RunningSluice;
  let corsSluice: RunningSluice;
  let site: Server;
  let siteOrigin: string;
  let browser: Browser;
  const dataDirs: string[] = [];
  /** The attacker's site: each test puts the page it serves here, by path. */
  const sitePages = new Map<string, string>();

  const started = (options: { corsOrigins?: string[] } = {}) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-cross-origin-'));
    dataDirs.push(dataDir);
    return startSluice({ port: 0, dataDir, logLevel: 'silent', ...options });
  };
  const client = (endpoint: string) => sqsClient(endpoint);

  before(async () => {
    site = createServer((request, response) => {
      const page = sitePages.get(new URL(request.url ?? '/', 'http://site').pathname);
      response.writeHead(page === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(page ?? '');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    sluice = await started();
    corsSluice = await started({ corsOrigins: [siteOrigin] });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        `--host-resolver-rules=MAP ${REBOUND_NAME} 127.0.0.1`,
      ],
    });
  });

  after(async () => {
    await browser?.close();
    await sluice?.close();
    await corsSluice?.close();
    await new Promise((resolve) => site?.close(resolve));
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A fresh page that records the requests it makes to `endpoint` (`METHOD path?query type`) and the
   * answers the browser lets it see (`METHOD path?query status`; an `<img>` given XML is blocked unseen).
   */
  async function pageRecording(endpoint: string): Promise<{ page: Page; sent: string[]; answers: string[] }> {
    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    const sent: string[] = [];
    const answers: string[] = [];
    const described = (method: string, address: string) => {
      const url = new URL(address);
      return url.origin === endpoint ? `${method} ${url.pathname}${url.search}` : undefined;
    };
    page.on('request', (request) => {
      const made = described(request.method(), request.url());
      if (made) sent.push(`${made} ${request.resourceType()}`);
    });
    page.on('response', (response) => {
      const request = described(response.request().method(), response.url());
      if (request) answers.push(`${request} ${response.status()}`);
    });
    return { page, sent, answers };
  }

  test('form POSTs, a text/plain POST, <img> GETs and fetches from another port change and read nothing', {
    timeout: 60_000,
  }, async () => {
    const sqs = client(sluice.endpoint);
    const { QueueUrl: dlqUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'victim-dlq' }));
    const { QueueUrl: queueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: 'victim',
        Attributes: {
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:victim-dlq',
            maxReceiveCount: 3,
          }),
        },
      }),
    );
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'keep me' }));
    await sqs.send(new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: 'stay dead' }));

    const target = sluice.endpoint;
    const queuePath = '/000000000000/victim';
    const form = (id: string, fields: Record<string, string>) =>
      `<iframe name="${id}"></iframe><form id="${id}" method="POST" action="${target}/" target="${id}">${Object.entries(
        fields,
      )
        .map(([name, value]) => `<input type="hidden" name="${name}" value="${value}">`)
        .join('')}</form>`;
    sitePages.set(
      '/attack',
      `<!doctype html><body>
      ${form('purge', { Action: 'PurgeQueue', QueueUrl: queuePath })}
      ${form('delete', { Action: 'DeleteQueue', QueueUrl: queuePath })}
      ${form('move', { Action: 'StartMessageMoveTask', SourceArn: 'arn:aws:sqs:us-east-1:000000000000:victim-dlq' })}
      <script>
        const loaded = (element) => new Promise((resolve) => {
          element.addEventListener('load', () => resolve('loaded'));
          element.addEventListener('error', () => resolve('error'));
        });
        const settled = (promise) => promise.then((r) => 'answered ' + r.type, (e) => 'failed ' + e.name);
        const frames = [...document.querySelectorAll('iframe')].map(loaded);
        for (const f of document.querySelectorAll('form')) f.submit();
        const images = ['DeleteQueue', 'ReceiveMessage'].map((action) => {
          const img = new Image();
          const done = loaded(img);
          img.src = '${target}${queuePath}?Action=' + action;
          return done;
        });
        const fetches = [
          // text/plain and no-cors: a simple request, sent without a preflight; the page cannot read it.
          settled(fetch('${target}/', { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' },
            body: 'Action=SendMessage&QueueUrl=${queuePath}&MessageBody=injected' })),
          // A form-encoded fetch that wants to read the answer: sent, but CORS hides it.
          settled(fetch('${target}/', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: 'Action=ReceiveMessage&QueueUrl=${queuePath}' })),
          // The JSON protocol needs a preflight, which is refused: the request is never sent.
          settled(fetch('${target}/', { method: 'POST', headers: { 'content-type': 'application/x-amz-json-1.0',
            'x-amz-target': 'AmazonSQS.PurgeQueue' }, body: JSON.stringify({ QueueUrl: '${queueUrl}' }) })),
        ];
        window.attack = Promise.all([...frames, ...images, ...fetches]);
      </script>`,
    );
    const { page, sent, answers } = await pageRecording(target);
    await page.goto(`${siteOrigin}/attack`);
    const outcomes = await page.evaluate(() => (window as unknown as { attack: Promise<string[]> }).attack);
    await page.close();

    // Every attempt was made; every answer the browser showed was a refusal. The JSON fetch never got past
    // its preflight, and the form-encoded one could not read its answer.
    assert.deepEqual(sent.sort(), [
      'GET /000000000000/victim?Action=DeleteQueue image',
      'GET /000000000000/victim?Action=ReceiveMessage image',
      'POST / document',
      'POST / document',
      'POST / document',
      'POST / fetch',
      'POST / fetch',
      'POST / fetch',
    ]);
    assert.ok(answers.length >= 3, answers.join('\n'));
    assert.deepEqual(
      answers.filter((answer) => !answer.endsWith(' 403')),
      [],
    );
    assert.deepEqual(outcomes.slice(-3), ['answered opaque', 'failed TypeError', 'failed TypeError']);

    // A normal client finds the queues, the message visible and never received, nothing sent, nothing moved.
    const { QueueUrls = [] } = await sqs.send(new ListQueuesCommand({}));
    assert.deepEqual(QueueUrls.sort(), [queueUrl, dlqUrl]);
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['All'] }),
    );
    assert.equal(Attributes.ApproximateNumberOfMessages, '1');
    assert.equal(Attributes.ApproximateNumberOfMessagesNotVisible, '0');
    const { Results = [] } = await sqs.send(
      new ListMessageMoveTasksCommand({ SourceArn: 'arn:aws:sqs:us-east-1:000000000000:victim-dlq' }),
    );
    assert.deepEqual(Results, []);
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        MessageSystemAttributeNames: ['All'],
      }),
    );
    assert.deepEqual(
      Messages.map((m) => [m.Body, m.Attributes?.ApproximateReceiveCount]),
      [['keep me', '1']],
    );
    sqs.destroy();
  });

  test('a page on a rebound DNS name gets neither the console nor an answer to its own-origin fetch', {
    timeout: 30_000,
  }, async () => {
    const port = new URL(sluice.endpoint).port;
    const rebound = `http://${REBOUND_NAME}:${port}`;
    const { page, answers } = await pageRecording(rebound);
    const console = await page.goto(`${rebound}/console`);
    assert.equal(console?.status(), 403);
    // Same origin for the browser, so it may read the answer: the server must not give one.
    const listed = await page.evaluate(async () => {
      const response = await fetch('/', {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AmazonSQS.ListQueues' },
        body: '{}',
      });
      return { status: response.status, body: await response.text() };
    });
    await page.close();
    assert.equal(listed.status, 403);
    assert.doesNotMatch(listed.body, /QueueUrls/);
    assert.deepEqual(answers, ['GET /console 403', 'POST / 403']);
  });

  test('with --cors-origin, that origin’s page uses the JSON protocol through fetch; another origin cannot', {
    timeout: 30_000,
  }, async () => {
    const target = corsSluice.endpoint;
    sitePages.set(
      '/app',
      `<!doctype html><script>
        // The headers the AWS SDK for JavaScript sends from a browser, signature included.
        const call = async (action, input) => {
          const response = await fetch('${target}/', {
            method: 'POST',
            headers: {
              'content-type': 'application/x-amz-json-1.0',
              'x-amz-target': 'AmazonSQS.' + action,
              'x-amzn-query-mode': 'true',
              'x-amz-date': '20261201T090000Z',
              'x-amz-user-agent': 'aws-sdk-js/3',
              'amz-sdk-invocation-id': crypto.randomUUID(),
              'amz-sdk-request': 'attempt=1; max=3',
              authorization: 'AWS4-HMAC-SHA256 Credential=test/20261201/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0',
            },
            body: JSON.stringify(input),
          });
          return { status: response.status, error: response.headers.get('x-amzn-query-error'),
            requestId: response.headers.get('x-amzn-requestid'), body: await response.json() };
        };
        window.run = async () => {
          const created = await call('CreateQueue', { QueueName: 'from-page' });
          await call('SendMessage', { QueueUrl: created.body.QueueUrl, MessageBody: 'hello from a page' });
          const received = await call('ReceiveMessage', { QueueUrl: created.body.QueueUrl });
          const missing = await call('GetQueueUrl', { QueueName: 'no-such-queue' });
          return { created, received, missing };
        };
      </script>`,
    );
    const allowed = await browser.newPage();
    await allowed.goto(`${siteOrigin}/app`);
    const result = await allowed.evaluate(() =>
      (
        window as unknown as {
          run: () => Promise<
            Record<string, { status: number; error: string | null; requestId: string | null; body: unknown }>
          >;
        }
      ).run(),
    );
    await allowed.close();
    assert.equal(result.created?.status, 200);
    assert.match(result.created?.requestId ?? '', /^[0-9a-f-]{36}$/);
    const { Messages = [] } = (result.received?.body ?? {}) as { Messages?: Array<{ Body: string }> };
    assert.deepEqual(
      Messages.map((m) => m.Body),
      ['hello from a page'],
    );
    // The SDK takes the error code from a header, which CORS must expose.
    assert.equal(result.missing?.status, 400);
    assert.equal(result.missing?.error, 'AWS.SimpleQueueService.NonExistentQueue;Sender');

    // The same site by another name is another origin, not the allowed one.
    const port = new URL(siteOrigin).port;
    const other = await browser.newPage();
    await other.goto(`http://localhost:${port}/app`);
    const refused = await other.evaluate(() =>
      (window as unknown as { run: () => Promise<unknown> }).run().then(
        () => 'answered',
        (error: Error) => error.name,
      ),
    );
    await other.close();
    assert.equal(refused, 'TypeError');
    const sqs = client(target);
    await assert.rejects(sqs.send(new GetQueueUrlCommand({ QueueName: 'no-such-queue' })));
    const { QueueUrls = [] } = await sqs.send(new ListQueuesCommand({}));
    assert.equal(QueueUrls.length, 1, 'only the allowed page created a queue');
    sqs.destroy();
  });
});
