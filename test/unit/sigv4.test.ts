import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SignatureV4 } from '@smithy/signature-v4';
import { FakeClock } from 'sluice-client/clock';
import { type ErrorCode, SqsError } from '../../packages/server/src/core/errors.ts';
import type { AccessedQueue } from '../../packages/server/src/core/queue-reference.ts';
import { type AccessKey, createAuthenticator } from '../../packages/server/src/server/auth/access.ts';
import type { RequestToVerify } from '../../packages/server/src/server/auth/sigv4.ts';
import { NodeSha256 } from '../helpers/sigv4.ts';

/**
 * The requests here are signed by the AWS SDK's own signer (@smithy/signature-v4, what @aws-sdk/client-sqs
 * uses), not by a second copy of Sluice's rules, so a shared misreading of the canonical form cannot pass.
 */
const KEY: AccessKey = { accessKeyId: 'AKIDSLUICE', secretAccessKey: 'right-secret' };
const LIMITED: AccessKey = {
  accessKeyId: 'AKIDLIMITED',
  secretAccessKey: 'other-secret',
  queues: ['orders*'],
  actions: ['sqs:SendMessage', 'Receive*'],
};
const HOST = '127.0.0.1:9324';

function signer(secretAccessKey = KEY.secretAccessKey, accessKeyId = KEY.accessKeyId, region = 'us-east-1') {
  return new SignatureV4({
    credentials: { accessKeyId, secretAccessKey },
    region,
    service: 'sqs',
    sha256: NodeSha256,
  });
}

const jsonRequest = (body: string) => ({
  method: 'POST',
  protocol: 'http:',
  hostname: '127.0.0.1',
  port: 9324,
  path: '/',
  query: {},
  headers: {
    host: HOST,
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': 'AmazonSQS.SendMessage',
  },
  body,
});

/** What the server sees of a request the SDK signed: the target as sent, raw headers, body. */
function asReceived(
  signed: { method: string; path: string; query?: Record<string, unknown>; headers: Record<string, string> },
  body = '',
): RequestToVerify {
  const query = Object.entries(signed.query ?? {})
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(String(value))}`)
    .join('&');
  return {
    method: signed.method,
    target: query ? `${signed.path}?${query}` : signed.path,
    rawHeaders: Object.entries(signed.headers).flat(),
    body,
  };
}

const clock = new FakeClock(Date.UTC(2026, 5, 1, 12, 0, 0));
const PARTNER: AccessKey = { accessKeyId: 'AKIDPARTNER', secretAccessKey: 's', accountId: '111122223333' };
const auth = createAuthenticator({
  keys: [KEY, LIMITED, PARTNER],
  region: 'us-east-1',
  accountId: '000000000000',
  clock,
});

function rejects(request: RequestToVerify, code: ErrorCode, part: string) {
  assert.throws(
    () => auth.authenticate(request),
    (error: unknown) => {
      assert.ok(error instanceof SqsError, String(error));
      assert.equal(error.code, code, error.message);
      assert.ok(error.message.includes(part), `"${error.message}" lacks "${part}"`);
      return true;
    },
  );
}

const BODY = '{"QueueUrl":"http://127.0.0.1:9324/000000000000/orders","MessageBody":"hi"}';
const signedAt = (offsetMs: number) => new Date(clock.now() + offsetMs);

describe('SigV4 verification', () => {
  it('accepts an Authorization header signed by the SDK signer, and names its key', async () => {
    const signed = await signer().sign(jsonRequest(BODY), { signingDate: signedAt(0) });
    assert.equal(auth.authenticate(asReceived(signed, BODY)).accessKeyId, KEY.accessKeyId);
  });

  it('refuses a wrong secret, a changed body, a changed signed header, an unknown key', async () => {
    const wrong = await signer('wrong-secret').sign(jsonRequest(BODY), { signingDate: signedAt(0) });
    rejects(asReceived(wrong, BODY), 'SignatureDoesNotMatch', 'does not match');
    const good = await signer().sign(jsonRequest(BODY), { signingDate: signedAt(0) });
    rejects(asReceived(good, BODY.replace('hi', 'ho')), 'SignatureDoesNotMatch', 'does not match');
    const retargeted = { ...good, headers: { ...good.headers, 'x-amz-target': 'AmazonSQS.DeleteQueue' } };
    rejects(asReceived(retargeted, BODY), 'SignatureDoesNotMatch', 'does not match');
    const stranger = await signer('s', 'AKIDUNKNOWN').sign(jsonRequest(BODY), { signingDate: signedAt(0) });
    rejects(asReceived(stranger, BODY), 'InvalidClientTokenId', 'security token');
  });

  it('refuses a request whose X-Amz-Target or Content-Type the signature does not cover', async () => {
    for (const [header, shown] of [
      ['x-amz-target', 'X-Amz-Target'],
      ['content-type', 'Content-Type'],
    ]) {
      const signed = await signer().sign(jsonRequest(BODY), {
        signingDate: signedAt(0),
        unsignableHeaders: new Set([header as string]),
      });
      assert.ok(!signed.headers.authorization?.includes(header as string));
      rejects(asReceived(signed, BODY), 'SignatureDoesNotMatch', `'${shown}' must be a 'SignedHeader'`);
    }
  });

  it('refuses unsigned requests and half-written Authorization headers', () => {
    const headers = { host: HOST, 'content-type': 'application/x-amz-json-1.0' };
    rejects(
      asReceived({ method: 'POST', path: '/', headers }, BODY),
      'MissingAuthenticationToken',
      'missing',
    );
    const half = {
      ...headers,
      authorization: 'AWS4-HMAC-SHA256 Credential=AKIDSLUICE/20260601/us-east-1/sqs/aws4_request',
    };
    rejects(
      asReceived({ method: 'POST', path: '/', headers: half }, BODY),
      'IncompleteSignature',
      'SignedHeaders',
    );
  });

  it('allows 15 minutes of clock skew either way, as AWS does, and no more', async () => {
    const minutes = (n: number) => n * 60_000;
    for (const offset of [minutes(-14.9), minutes(14.9)]) {
      const signed = await signer().sign(jsonRequest(BODY), { signingDate: signedAt(offset) });
      assert.equal(auth.authenticate(asReceived(signed, BODY)).accessKeyId, KEY.accessKeyId);
    }
    const old = await signer().sign(jsonRequest(BODY), { signingDate: signedAt(minutes(-16)) });
    rejects(
      asReceived(old, BODY),
      'SignatureDoesNotMatch',
      'Signature expired: 20260601T114400Z is now earlier than 20260601T114500Z',
    );
    const future = await signer().sign(jsonRequest(BODY), { signingDate: signedAt(minutes(16)) });
    rejects(asReceived(future, BODY), 'SignatureDoesNotMatch', 'Signature not yet current');
  });

  it('checks the key, scope and date from the headers alone, before the body is read', async () => {
    const headersOf = (request: RequestToVerify) => ({
      method: request.method,
      target: request.target,
      rawHeaders: request.rawHeaders,
    });
    const scopeRefused = (request: RequestToVerify, code: ErrorCode) =>
      assert.throws(
        () => auth.checkScope(headersOf(request)),
        (error: unknown) => error instanceof SqsError && error.code === code,
      );
    const good = await signer().sign(jsonRequest(BODY), { signingDate: signedAt(0) });
    auth.checkScope(headersOf(asReceived(good, BODY)));
    // The signature covers the body, so a wrong secret shows only once the body is in.
    const wrong = await signer('wrong-secret').sign(jsonRequest(BODY), { signingDate: signedAt(0) });
    auth.checkScope(headersOf(asReceived(wrong, BODY)));
    const stranger = await signer('s', 'AKIDUNKNOWN').sign(jsonRequest(BODY), { signingDate: signedAt(0) });
    scopeRefused(asReceived(stranger, BODY), 'InvalidClientTokenId');
    const old = await signer().sign(jsonRequest(BODY), { signingDate: signedAt(-16 * 60_000) });
    scopeRefused(asReceived(old, BODY), 'SignatureDoesNotMatch');
    const elsewhere = await signer(KEY.secretAccessKey, KEY.accessKeyId, 'eu-west-1').sign(
      jsonRequest(BODY),
      {
        signingDate: signedAt(0),
      },
    );
    scopeRefused(asReceived(elsewhere, BODY), 'SignatureDoesNotMatch');
    scopeRefused(
      asReceived({ method: 'POST', path: '/', headers: { host: HOST } }),
      'MissingAuthenticationToken',
    );
  });

  it('refuses credentials scoped to another region or service', async () => {
    const elsewhere = await signer(KEY.secretAccessKey, KEY.accessKeyId, 'eu-west-1').sign(
      jsonRequest(BODY),
      {
        signingDate: signedAt(0),
      },
    );
    rejects(asReceived(elsewhere, BODY), 'SignatureDoesNotMatch', "valid region, not 'eu-west-1'");
    const signerFor = (service: string) =>
      new SignatureV4({ credentials: KEY, region: 'us-east-1', service, sha256: NodeSha256 });
    const other = await signerFor('s3').sign(jsonRequest(BODY), { signingDate: signedAt(0) });
    rejects(asReceived(other, BODY), 'SignatureDoesNotMatch', "correct service: 'sqs'");
    // SNS shares the port: its requests are signed for `sns` (server/sns-entry.ts).
    const sns = await signerFor('sns').sign(jsonRequest(BODY), { signingDate: signedAt(0) });
    assert.equal(auth.authenticate(asReceived(sns, BODY)).accessKeyId, KEY.accessKeyId);
  });

  it('accepts a presigned Query-protocol GET until it expires', async () => {
    const request = {
      method: 'GET',
      protocol: 'http:',
      hostname: '127.0.0.1',
      port: 9324,
      path: '/000000000000/orders',
      query: { Action: 'ReceiveMessage', Version: '2012-11-05', 'AttributeName.1': 'All' },
      headers: { host: HOST },
    };
    const presigned = await signer().presign(request, { signingDate: signedAt(0), expiresIn: 300 });
    const received = asReceived(presigned);
    assert.ok(received.target.includes('X-Amz-Signature='));
    assert.equal(auth.authenticate(received).accessKeyId, KEY.accessKeyId);
    rejects(
      { ...received, target: received.target.replace('All', 'None') },
      'SignatureDoesNotMatch',
      'does not match',
    );
    await clock.advance(301_000);
    rejects(received, 'SignatureDoesNotMatch', 'Signature expired');
  });

  const queue = (name: string, policy?: string): AccessedQueue => ({
    name,
    arn: `arn:aws:sqs:us-east-1:000000000000:${name}`,
    policy,
  });
  const deniedWith = (part: string) => (error: unknown) =>
    error instanceof SqsError && error.code === 'AccessDenied' && error.message.includes(part);

  it('lets a key reach only its queues and actions', () => {
    const sending = auth.authorize(LIMITED, 'SendMessage', {});
    sending.require(queue('orders-eu'));
    assert.equal(sending.allows(queue('orders-eu')), true);
    assert.equal(sending.allows(queue('payroll')), false);
    assert.throws(
      () => sending.require(queue('payroll')),
      deniedWith('sqs:SendMessage on resource: arn:aws:sqs:us-east-1:000000000000:payroll'),
    );
    // Something else done on a queue (a move task sends into its destination) needs that action too.
    assert.throws(
      () => auth.authorize(LIMITED, 'ReceiveMessage', {}).require(queue('orders-eu'), 'DeleteMessage'),
      deniedWith('sqs:DeleteMessage on resource: arn:aws:sqs:us-east-1:000000000000:orders-eu'),
    );
    auth.authorize(KEY, 'DeleteQueue', {}).require(queue('payroll'));
    assert.throws(() => auth.authorize(LIMITED, 'DeleteQueue', {}), deniedWith('sqs:DeleteQueue'));
    assert.throws(() => auth.authorize(LIMITED, 'CreateQueue', {}), deniedWith('sqs:CreateQueue'));
  });

  it('lets a key of another account in where the queue Policy allows, never to actions SQS keeps to the owner', () => {
    const policy = JSON.stringify({
      Statement: [{ Effect: 'Allow', Principal: { AWS: '111122223333' }, Action: 'sqs:*', Resource: '*' }],
    });
    const sending = auth.authorize(PARTNER, 'SendMessageBatch', {});
    sending.require(queue('shared', policy));
    assert.equal(sending.allows(queue('private')), false);
    assert.throws(() => sending.require(queue('private')), deniedWith(':private'));
    for (const action of ['SetQueueAttributes', 'DeleteQueue', 'ListQueues', 'StartMessageMoveTask'])
      assert.throws(() => auth.authorize(PARTNER, action, {}), deniedWith(`sqs:${action}`));
  });
});
