/**
 * A Lambda function for an SQS event source mapping, written as it is deployed to AWS: each record is an
 * order, `{"orderId": "o-1", "amountCents": 500}`; a record that is not one is reported as a batch item
 * failure (the mapping has FunctionResponseTypes ReportBatchItemFailures), so only it comes back, and after
 * the queue's maxReceiveCount it goes to the dead-letter queue. The rest of the batch is deleted.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

interface Order {
  orderId: string;
  amountCents: number;
}

function orderOf(record: SQSRecord): Order {
  const order = JSON.parse(record.body) as Partial<Order>;
  if (typeof order.orderId !== 'string' || !Number.isInteger(order.amountCents))
    throw new Error(`not an order: ${record.body}`);
  return order as Order;
}

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    try {
      const order = orderOf(record);
      console.log(
        JSON.stringify({
          event: 'order processed',
          orderId: order.orderId,
          receiveCount: record.attributes.ApproximateReceiveCount,
        }),
      );
    } catch (error) {
      console.log(
        JSON.stringify({
          event: 'order failed',
          messageId: record.messageId,
          reason: (error as Error).message,
        }),
      );
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
}
