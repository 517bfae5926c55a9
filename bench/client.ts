import { Agent } from 'node:http';
import { SQSClient } from '@aws-sdk/client-sqs';

export interface BenchClient {
  readonly sqs: SQSClient;
  close(): void;
}

/**
 * One SQS client per target: JSON protocol (the SDK default), keep-alive sockets, no retries
 * (a failed request is counted, not hidden), and a request timeout above the 20 s long-poll.
 */
export function makeClient(endpoint: string): BenchClient {
  // The SDK warns once that future releases need Node 22; it is noise in benchmark output.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const sqs = new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    maxAttempts: 1,
    requestHandler: { httpAgent: agent, connectionTimeout: 5_000, requestTimeout: 30_000 },
  });
  return {
    sqs,
    close: () => {
      sqs.destroy();
      agent.destroy();
    },
  };
}
