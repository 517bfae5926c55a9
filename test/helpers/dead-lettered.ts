import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  type SendMessageBatchRequestEntry,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/**
 * The scene of the triage tests: `orders` (or `source`) dead-letters into `orders-dlq` (`SOURCE-dlq`) after one
 * receive, and `messages` have been sent to it and received until every one of them moved to the DLQ.
 */
export async function deadLetteredOrders(
  sqs: SQSClient,
  messages: ReadonlyArray<Omit<SendMessageBatchRequestEntry, 'Id'>>,
  source = 'orders',
): Promise<{ dlqUrl: string; sourceUrl: string }> {
  const dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `${source}-dlq` }))).QueueUrl!;
  const sourceUrl = (
    await sqs.send(
      new CreateQueueCommand({
        QueueName: source,
        Attributes: {
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: `arn:aws:sqs:us-east-1:000000000000:${source}-dlq`,
            maxReceiveCount: 1,
          }),
        },
      }),
    )
  ).QueueUrl!;
  for (const message of messages) await sqs.send(new SendMessageCommand({ QueueUrl: sourceUrl, ...message }));
  // One receive each with no visibility timeout, then the receive that dead-letters them.
  while (
    ((
      await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: sourceUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }),
      )
    ).Messages?.length ?? 0) > 0
  ) {}
  return { dlqUrl, sourceUrl };
}
