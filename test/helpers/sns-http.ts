import assert from 'node:assert/strict';
import { verify, X509Certificate } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SNSServiceException } from '@aws-sdk/client-sns';
import { FakeClock, startSluice } from 'sluice';
import { freshDatabase } from '../../tools/postgres.ts';
import { useServer } from './server.ts';

/**
 * SNS's HTTP/HTTPS subscribers, as the sns-http*.test.ts files exercise them: a real node HTTP receiver that
 * checks every signature with the certificate fetched from SigningCertURL and confirms through SubscribeURL,
 * and the two stores to run them on, each with its clock.
 */

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** Whether the body's signature checked out against the certificate at its SigningCertURL (envelopes). */
  signed: boolean | undefined;
  status: number;
}

/** AWS's canonical string for each message type ("Verifying the signatures of Amazon SNS messages"). */
function stringToSign(message: Record<string, string>): string {
  const names =
    message.Type === 'Notification'
      ? ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
      : ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type'];
  return names
    .filter((name) => message[name] !== undefined)
    .map((name) => `${name}\n${message[name]}\n`)
    .join('');
}

async function checkSignature(message: Record<string, string>): Promise<boolean> {
  const pem = await (await fetch(message.SigningCertURL!)).text();
  const certificate = new X509Certificate(pem);
  return verify(
    message.SignatureVersion === '2' ? 'sha256' : 'sha1',
    Buffer.from(stringToSign(message), 'utf8'),
    certificate.publicKey,
    Buffer.from(message.Signature!, 'base64'),
  );
}

/**
 * The subscriber: confirms each subscription by a GET of its SubscribeURL (unless told not to), answers each
 * notification with the next status of `statuses` (200 once they are used up).
 */
export async function receiver() {
  const received: Received[] = [];
  const state = { statuses: [] as number[], confirm: true };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const type = request.headers['x-amz-sns-message-type'];
      let signed: boolean | undefined;
      if (request.headers['x-amz-sns-rawdelivery'] !== 'true') {
        const message = JSON.parse(body) as Record<string, string>;
        signed = await checkSignature(message);
        if (type === 'SubscriptionConfirmation' && state.confirm && signed) {
          const confirmed = await fetch(message.SubscribeURL!);
          assert.equal(confirmed.status, 200, await confirmed.text());
        }
      }
      const status = type === 'Notification' ? (state.statuses.shift() ?? 200) : 200;
      received.push({ headers: request.headers, body, signed, status });
      response.writeHead(status, { 'content-type': 'text/plain' });
      response.end(status === 200 ? 'ok' : 'secret internal error text');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    state,
    of: (type: string) => received.filter((entry) => entry.headers['x-amz-sns-message-type'] === type),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface Backend {
  endpoint: string;
  /** Sluice's clock now. */
  now(): Promise<number>;
  /** Moves Sluice's clock; resolves once the work it made due (the deliveries) is done. */
  advance(seconds: number): Promise<void>;
  close(): Promise<void>;
}

export const backends: Array<[string, () => Promise<Backend>]> = [
  [
    'SQLite (--test-clock)',
    async () => {
      const server = await useServer({ args: ['--test-clock'] });
      return {
        endpoint: server.endpoint,
        async now() {
          const answer = await fetch(`${server.endpoint}/_sluice/clock`);
          return ((await answer.json()) as { now: number }).now;
        },
        async advance(seconds) {
          const answer = await fetch(`${server.endpoint}/_sluice/clock/advance`, {
            method: 'POST',
            body: JSON.stringify({ seconds }),
          });
          assert.equal(answer.status, 200);
        },
        close: () => server.close(),
      };
    },
  ],
  [
    'PostgreSQL (injected clock)',
    async () => {
      const database = await freshDatabase();
      const clock = new FakeClock(Date.UTC(2026, 11, 1));
      const node = await startSluice({
        port: 0,
        storeUrl: database.url,
        logLevel: 'silent',
        dataDir: ':memory:',
        clock,
      });
      return {
        endpoint: node.endpoint,
        now: async () => clock.now(),
        advance: (seconds) => clock.advance(seconds * 1000),
        close: async () => {
          await node.close();
          await database.drop();
        },
      };
    },
  ],
];

export const errorOf = async (promise: Promise<unknown>): Promise<SNSServiceException> => {
  try {
    await promise;
  } catch (error) {
    if (error instanceof SNSServiceException) return error;
    throw error;
  }
  assert.fail('expected an SNS error');
};
