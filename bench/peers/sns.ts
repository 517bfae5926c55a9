/**
 * A lean SNS client for the peer bench's fan-out: the Query protocol (form-encoded POST, XML answers) over
 * node:http with keep-alive sockets, as bench/raw-client.ts does for SQS, so PublishBatch costs the client
 * tens of microseconds rather than the SDK's milliseconds. The answers are read with a few regular
 * expressions: only the ARNs and the count of accepted entries matter here.
 */
import { Agent } from 'node:http';
import { rawPost } from '../raw-post.ts';

/** The SigV4 scope names `sns`: Sluice tells SNS requests from SQS Query ones by it. */
const AUTHORIZATION =
  'AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/sns/aws4_request, SignedHeaders=host, Signature=0';

export interface SnsClient {
  createTopic(name: string): Promise<string>;
  /** Subscribes a queue with raw message delivery (the body is the published message, no envelope). */
  subscribeQueue(topicArn: string, queueArn: string): Promise<void>;
  /** Publishes the bodies in one PublishBatch; throws unless every entry was accepted. */
  publishBatch(topicArn: string, bodies: readonly string[]): Promise<void>;
  close(): void;
}

export function makeRawSnsClient(endpoint: string, maxSockets = 64): SnsClient {
  const url = new URL(endpoint);
  const agent = new Agent({ keepAlive: true, maxSockets });
  const call = async (action: string, params: Record<string, string>): Promise<string> => {
    const { status, text } = await rawPost(
      agent,
      url,
      { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8', authorization: AUTHORIZATION },
      new URLSearchParams({ Action: action, Version: '2010-03-31', ...params }).toString(),
      action,
    );
    if (status === 200) return text;
    const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1] ?? `HTTP${status}`;
    throw new Error(`${action}: ${code}: ${text.slice(0, 200)}`);
  };
  return {
    async createTopic(name) {
      const arn = /<TopicArn>([^<]+)<\/TopicArn>/.exec(await call('CreateTopic', { Name: name }))?.[1];
      if (!arn) throw new Error('CreateTopic returned no TopicArn');
      return arn;
    },
    async subscribeQueue(topicArn, queueArn) {
      await call('Subscribe', {
        TopicArn: topicArn,
        Protocol: 'sqs',
        Endpoint: queueArn,
        'Attributes.entry.1.key': 'RawMessageDelivery',
        'Attributes.entry.1.value': 'true',
      });
    },
    async publishBatch(topicArn, bodies) {
      const params: Record<string, string> = { TopicArn: topicArn };
      bodies.forEach((body, i) => {
        params[`PublishBatchRequestEntries.member.${i + 1}.Id`] = `m${i}`;
        params[`PublishBatchRequestEntries.member.${i + 1}.Message`] = body;
      });
      const text = await call('PublishBatch', params);
      // Each accepted entry answers with its MessageId; a failed one with a Code instead.
      const accepted = text.match(/<MessageId>/g)?.length ?? 0;
      if (accepted !== bodies.length)
        throw new Error(`PublishBatch: ${bodies.length - accepted} entries failed: ${text.slice(0, 200)}`);
    },
    close() {
      agent.destroy();
    },
  };
}
