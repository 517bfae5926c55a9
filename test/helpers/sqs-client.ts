import { SQSClient, type SQSClientConfig } from '@aws-sdk/client-sqs';

/**
 * The AWS SDK client the tests drive a server with: us-east-1, a throwaway key (an unauthenticated server
 * accepts any), and one attempt, so a failure shows instead of being retried away. `config` overrides any of it.
 */
export const sqsClient = (endpoint: string, config: SQSClientConfig = {}): SQSClient =>
  new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
    ...config,
  });
