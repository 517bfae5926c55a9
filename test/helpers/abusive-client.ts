import { spawn } from 'node:child_process';
import { Agent, type ClientRequest, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { signV4 } from './sigv4.ts';

/**
 * Abusive clients, run as a process of their own (`node --import tsx abusive-client.ts ORDERS-JSON`) so that
 * their work does not delay the well-behaved client a test measures. An attack runs for `seconds`, then
 * prints its report as JSON.
 */

export type AttackKind = 'slow-body' | 'unsigned-body' | 'large-receive' | 'nested-json';

export interface AttackOrders {
  kind: AttackKind;
  endpoint: string;
  seconds: number;
  /** Connections (body attacks) or concurrent clients (the others). */
  clients: number;
  /** large-receive: the queue of large messages. */
  queueUrl?: string;
}

export interface AttackReport {
  /** Requests started. */
  sent: number;
  /** Answers by HTTP status. */
  statuses: Record<string, number>;
  /** Requests that ended without an answer (reset, cut off, or still waiting at the end). */
  unanswered: number;
}

const BODY_BYTES = 5 * 1024 * 1024;

function jsonHeaders(action: string): Record<string, string> {
  return { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': `AmazonSQS.${action}` };
}

async function attack(orders: AttackOrders): Promise<AttackReport> {
  const report: AttackReport = { sent: 0, statuses: {}, unanswered: 0 };
  const url = new URL(orders.endpoint);
  const open = new Set<ClientRequest>();
  const until = Date.now() + orders.seconds * 1000;
  const send = (headers: Record<string, string>, body: Buffer, finish: boolean, agent: Agent | false) =>
    new Promise<void>((resolve) => {
      report.sent++;
      let answered = false;
      const req = request(
        { host: url.hostname, port: url.port, method: 'POST', path: '/', headers, agent },
        (res) => {
          answered = true;
          report.statuses[res.statusCode ?? 0] = (report.statuses[res.statusCode ?? 0] ?? 0) + 1;
          res.resume();
          res.once('end', () => resolve());
          res.once('error', () => resolve());
        },
      );
      open.add(req);
      req.once('error', () => resolve());
      req.once('close', () => {
        open.delete(req);
        if (!answered) report.unanswered++;
        resolve();
      });
      if (finish) req.end(body);
      else req.write(body);
    });

  if (orders.kind === 'slow-body' || orders.kind === 'unsigned-body') {
    // Each connection sends all but the last byte of a 5 MiB body, then waits: the server holds the rest.
    const body = Buffer.alloc(BODY_BYTES - 1, 'a');
    const headers = {
      ...jsonHeaders('SendMessage'),
      'content-length': String(BODY_BYTES),
      // slow-body: a known key and a current date, as a client with the key id would send; the
      // signature itself cannot be checked before the body is complete.
      ...(orders.kind === 'slow-body' ? signV4(url, jsonHeaders('SendMessage'), Buffer.alloc(0)) : {}),
    };
    const pending = Array.from({ length: orders.clients }, () => send(headers, body, false, false));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, until - Date.now())));
    for (const req of open) req.destroy();
    await Promise.all(pending);
    return report;
  }

  const agent = new Agent({ keepAlive: true, maxSockets: orders.clients });
  const body =
    orders.kind === 'large-receive'
      ? Buffer.from(
          JSON.stringify({ QueueUrl: orders.queueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }),
        )
      : // 5 MB of brackets: nested far deeper than any SQS request, in an otherwise valid request.
        Buffer.from(`{"QueueName":${'['.repeat(2_500_000)}${']'.repeat(2_500_000)}}`);
  const action = orders.kind === 'large-receive' ? 'ReceiveMessage' : 'GetQueueUrl';
  // Signed once: the server accepts a signature for 15 minutes, far longer than the attack.
  const headers = signV4(url, jsonHeaders(action), body);
  await Promise.all(
    Array.from({ length: orders.clients }, async () => {
      while (Date.now() < until) await send(headers, body, true, agent);
    }),
  );
  agent.destroy();
  return report;
}

/** Runs the attack in a child process; resolves with its report. */
export function runAttack(orders: AttackOrders): Promise<AttackReport> {
  const child = spawn(process.execPath, ['--import', 'tsx', SELF, JSON.stringify(orders)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve(JSON.parse(output) as AttackReport);
      else reject(new Error(`${orders.kind} attack exited with ${code}`));
    });
  });
}

const SELF = fileURLToPath(import.meta.url);

if (process.argv[1] === SELF) {
  const report = await attack(JSON.parse(process.argv[2] ?? '{}') as AttackOrders);
  process.stdout.write(JSON.stringify(report));
}
