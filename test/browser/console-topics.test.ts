/**
 * The console's topics page in headless Chromium against a really started server: topics and their
 * subscriptions with filter policies, the filter-policy tester (the server's own matcher), and, with access
 * keys, only the topics the signed-in key may see (SNS's own authorization, through the session).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CreateTopicCommand, type SNSClient, SubscribeCommand } from '@aws-sdk/client-sns';
import { CreateQueueCommand, ReceiveMessageCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { Browser, Page } from 'playwright-core';
import { type RunningSluice, startSluice } from 'sluice';
import { type ConsoleUnderTest, consolePage, launchChromium, startConsole } from '../helpers/browser.ts';
import { snsClient } from '../helpers/sns-client.ts';
import { sqsClient } from '../helpers/sqs-client.ts';

const ARN = 'arn:aws:sqs:us-east-1:000000000000:';

async function subscribe(
  sns: SNSClient,
  TopicArn: string,
  queue: string,
  Attributes: Record<string, string>,
) {
  await sns.send(new SubscribeCommand({ TopicArn, Protocol: 'sqs', Endpoint: `${ARN}${queue}`, Attributes }));
}

describe('console: topics', { concurrency: false }, () => {
  let ui: ConsoleUnderTest;

  before(async () => {
    ui = await startConsole();
    const sqs = sqsClient(ui.sluice.endpoint);
    for (const QueueName of ['billing', 'audit', 'billing-dlq'])
      await sqs.send(new CreateQueueCommand({ QueueName }));
    const sns = snsClient(ui.sluice.endpoint);
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: 'orders' }));
    // The audit queue's policy allows the topic, as AWS requires; billing's has none.
    await sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: `${ui.sluice.endpoint}/000000000000/audit`,
        Attributes: {
          Policy: JSON.stringify({
            Version: '2012-10-17',
            Statement: [
              {
                Effect: 'Allow',
                Principal: { Service: 'sns.amazonaws.com' },
                Action: 'sqs:SendMessage',
                Resource: `${ARN}audit`,
                Condition: { ArnEquals: { 'aws:SourceArn': TopicArn } },
              },
            ],
          }),
        },
      }),
    );
    sqs.destroy();
    await subscribe(sns, TopicArn!, 'billing', {
      FilterPolicy: JSON.stringify({ kind: ['invoice'], total: [{ numeric: ['>=', 100] }] }),
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: `${ARN}billing-dlq` }),
    });
    await subscribe(sns, TopicArn!, 'audit', {
      FilterPolicyScope: 'MessageBody',
      FilterPolicy: JSON.stringify({ order: { country: [{ 'anything-but': 'FR' }] } }),
      RawMessageDelivery: 'true',
    });
    await sns.send(new CreateTopicCommand({ Name: 'quiet' }));
    const { TopicArn: stale } = await sns.send(new CreateTopicCommand({ Name: 'stale' }));
    await subscribe(sns, stale!, 'never-created', {});
    sns.destroy();
  });

  after(() => ui?.close());

  test('lists topics with their subscriptions, filter policies, dead-letter queues, and marks those AWS would not deliver to', async () => {
    const { page, sluice } = ui;
    await page.goto(`${sluice.endpoint}/console#/topics`);
    await page.getByRole('heading', { name: 'Topics', exact: true }).waitFor();
    const orders = page.locator('section[data-topic="orders"]');
    await orders.locator('tbody tr').nth(1).waitFor();
    const rows = await orders
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map((tr) =>
          [...tr.querySelectorAll('td')].map((td) => td.textContent?.replace(/\s+/g, ' ').trim()),
        ),
      );
    const billing = rows.find((cells) => cells[1]?.startsWith('billing'));
    const audit = rows.find((cells) => cells[1] === 'audit');
    assert.ok(billing && audit, JSON.stringify(rows));
    assert.equal(billing[0], 'sqs');
    // Marked: on AWS, billing (no policy) would receive nothing; audit's policy allows the topic.
    assert.match(
      billing[1] ?? '',
      /^billingOn AWS this subscription would deliver nothing: queue billing's policy/,
    );
    assert.equal(audit[1], 'audit');
    assert.match(
      (await page.locator('section[data-topic="stale"] tbody td').nth(1).textContent()) ?? '',
      /Queue never-created does not exist: deliveries fail/,
    );
    assert.match(billing[2] ?? '', /"kind": \[ "invoice" \]/);
    assert.deepEqual(billing.slice(3), ['MessageAttributes', 'no', 'billing-dlq']);
    assert.match(audit[2] ?? '', /"anything-but": "FR"/);
    assert.deepEqual(audit.slice(3), ['MessageBody', 'yes', 'none']);
    assert.equal(
      await orders.locator('a', { hasText: 'billing-dlq' }).getAttribute('href'),
      '#/queue/billing-dlq',
    );
    await page.locator('section[data-topic="quiet"]', { hasText: 'No subscriptions.' }).waitFor();
    assert.equal(await page.locator('header nav a[aria-current="page"]').textContent(), 'Topics');
    assert.deepEqual(ui.failedLoads, []);
    assert.deepEqual(ui.cspViolations, []);
  });

  test('the tester says which subscriptions a message reaches, and why not; Publish sends it', async () => {
    const { page, sluice } = ui;
    await page.goto(`${sluice.endpoint}/console#/topics`);
    const tester = page.locator('#filter-tester');
    await tester.getByLabel('Topic').selectOption({ label: 'orders' });
    const outcome = (queue: string) =>
      tester.locator(`li[data-subscription^="arn:aws:sns:us-east-1:000000000000:orders:"]`, {
        hasText: queue,
      });
    const run = async (message: string, attributes: string) => {
      await tester.getByLabel('Message', { exact: true }).fill(message);
      await tester.getByLabel('Message attributes (JSON)').fill(attributes);
      await tester.getByRole('button', { name: 'Test' }).click();
    };

    await run('{"order": {"country": "FR"}}', '{"kind": "invoice", "total": 50}');
    await tester.locator('#tester-results', { hasText: 'Reaches 0 of 2 subscriptions.' }).waitFor();
    assert.equal(await outcome('billing').first().getAttribute('data-matches'), 'false');
    assert.match(
      (await outcome('billing').first().textContent()) ?? '',
      /Does not reach sqs billing: Filtered out: the attribute total does not match the policy\./,
    );
    assert.match(
      (await outcome('audit').first().textContent()) ?? '',
      /Does not reach sqs audit: Filtered out: the body field order does not match the policy\./,
    );

    await run('{"order": {"country": "DE"}}', '{"kind": "invoice", "total": 250}');
    await tester.locator('#tester-results', { hasText: 'Reaches 2 of 2 subscriptions.' }).waitFor();
    assert.match(
      (await outcome('billing').first().textContent()) ?? '',
      /Reaches sqs billing: The filter policy matches/,
    );

    await run('not json', '{"kind": "invoice", "total": 250}');
    await tester.locator('#tester-results', { hasText: 'Reaches 1 of 2 subscriptions.' }).waitFor();
    assert.match(
      (await outcome('audit').first().textContent()) ?? '',
      /The message body is not a JSON object, so no MessageBody policy matches it\./,
    );

    // Publish sends it for real: the queues whose policies match receive it, raw or wrapped.
    await tester.getByLabel('Message', { exact: true }).fill('{"order": {"country": "DE"}}');
    await tester.getByLabel('Message attributes (JSON)').fill('{"kind": "invoice", "total": 250}');
    await tester.getByRole('button', { name: 'Publish' }).click();
    const published = await page.locator('#status.success', { hasText: 'Published message' }).textContent();
    const messageId = /Published message ([0-9a-f-]{36})\./.exec(published ?? '')?.[1];
    assert.ok(messageId, published ?? '');
    const sqs = sqsClient(sluice.endpoint);
    try {
      const receive = async (queue: string) => {
        const { Messages = [] } = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: `${sluice.endpoint}/000000000000/${queue}`,
            WaitTimeSeconds: 5,
            MessageAttributeNames: ['All'],
          }),
        );
        return Messages;
      };
      const [toAudit] = await receive('audit');
      assert.equal(toAudit?.Body, '{"order": {"country": "DE"}}');
      assert.deepEqual(toAudit?.MessageAttributes?.total, { DataType: 'Number', StringValue: '250' });
      const [toBilling] = await receive('billing');
      assert.equal(JSON.parse(toBilling?.Body ?? '{}').MessageId, messageId);
    } finally {
      sqs.destroy();
    }

    await run('{}', '{"kind": ');
    await page.locator('#status.error').waitFor();
    assert.deepEqual(ui.cspViolations, []);
  });

  test('the console SNS API refuses a policy SNS would refuse, with its text, and bad input', async () => {
    const response = await fetch(`${ui.sluice.endpoint}/api/sns/filter-test`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        filterPolicy: JSON.stringify({ total: [{ numeric: ['>>', 1] }] }),
        message: 'x',
      }),
    });
    assert.equal(response.status, 400);
    const answer = (await response.json()) as { __type: string; message: string };
    assert.match(answer.__type, /InvalidParameterValue/);
    assert.match(answer.message, /^Invalid parameter: FilterPolicy: /);
    const noArns = await fetch(`${ui.sluice.endpoint}/api/sns/queue-policy-check`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ policy: '{}' }),
    });
    assert.equal(noArns.status, 400);
    assert.match(((await noArns.json()) as { __type: string }).__type, /InvalidParameterValue/);
    // A console POST: another origin's page cannot make a browser send it.
    const crossOrigin = await fetch(`${ui.sluice.endpoint}/api/sns/filter-test`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
      body: JSON.stringify({ message: 'x' }),
    });
    assert.equal(crossOrigin.status, 403);
  });
});

describe('console: topics with access keys', { concurrency: false }, () => {
  const ADMIN = { accessKeyId: 'AKIDADMIN', secretAccessKey: 'admin-secret' };
  const ORDERS = { accessKeyId: 'AKIDORDERS', secretAccessKey: 'orders-secret', queues: ['orders*'] };
  let sluice: RunningSluice;
  let browser: Browser;
  let page: Page;
  let dataDir: string;
  const cspViolations: string[] = [];

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'sluice-console-topics-'));
    sluice = await startSluice({ port: 0, dataDir, logLevel: 'silent', credentials: [ADMIN, ORDERS] });
    const sns = snsClient(sluice.endpoint, { credentials: ADMIN });
    for (const Name of ['orders-events', 'payroll']) await sns.send(new CreateTopicCommand({ Name }));
    sns.destroy();
    browser = await launchChromium();
    page = await consolePage(browser, cspViolations);
  });

  after(async () => {
    await browser?.close();
    await sluice?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('a signed-in key sees only the topics its patterns name', { timeout: 60_000 }, async () => {
    await page.goto(`${sluice.endpoint}/console`);
    await page.getByLabel('Access key id').fill(ORDERS.accessKeyId);
    await page.getByLabel('Secret access key').fill(ORDERS.secretAccessKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Queues', exact: true }).waitFor();
    await page.getByRole('link', { name: 'Topics' }).click();
    await page.locator('section[data-topic="orders-events"]').waitFor();
    assert.equal(
      await page.locator('section[data-topic="payroll"]').count(),
      0,
      'outside the key: not listed',
    );
    assert.deepEqual(cspViolations, []);
  });
});
