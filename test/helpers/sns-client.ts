import { SNSClient, type SNSClientConfig } from '@aws-sdk/client-sns';

/** The SNS client the tests drive a server with, set up as sqsClient (helpers/sqs-client.ts). */
export const snsClient = (endpoint: string, config: SNSClientConfig = {}): SNSClient =>
  new SNSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
    ...config,
  });
