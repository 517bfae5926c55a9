import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { queueNameOfArn, queueNameOfUrl } from '../../packages/server/src/core/queue-reference.ts';

/** One reading of a queue reference, for the access check and the action alike: these are its cases. */
const ACCOUNT = '000000000000';

describe('queue references', () => {
  it('reads a queue URL of this server, with any host, by its path alone, in the /queue/NAME form, or a bare name', () => {
    const accepted: Array<[string, string]> = [
      ['http://127.0.0.1:9324/000000000000/orders', 'orders'],
      ['HTTPS://sqs.us-east-1.amazonaws.com/000000000000/orders.fifo', 'orders.fifo'],
      ['http://localhost/queue/orders_2-b', 'orders_2-b'],
      ['/000000000000/orders', 'orders'],
      // AWS takes a queue's name wherever a QueueUrl goes (recorded; moto's suite expects it too).
      ['orders', 'orders'],
      ['orders.fifo', 'orders.fifo'],
    ];
    for (const [url, name] of accepted) assert.equal(queueNameOfUrl(url, ACCOUNT), name, url);
  });

  it('finds no queue in anything else: the spellings that once let one string name two queues', () => {
    const refused = [
      'http://127.0.0.1:9324/000000000000/secret?/orders',
      'http://127.0.0.1:9324/000000000000/secret?',
      'http://127.0.0.1:9324/000000000000/secret#/orders',
      'http://127.0.0.1:9324/000000000000/secret/orders',
      'http://127.0.0.1:9324/000000000000/orders/',
      'http://127.0.0.1:9324//000000000000/orders',
      'http://127.0.0.1:9324/000000000000/orders%2F..%2Fsecret',
      'http://127.0.0.1:9324/000000000000/%6Frders',
      'http://127.0.0.1:9324/000000000000/x/../orders',
      'http://127.0.0.1:9324/111122223333/orders',
      'http://127.0.0.1:9324/orders',
      'http://whatever-incorrect-queue-address',
      'ftp://127.0.0.1/000000000000/orders',
      '/orders',
      'or ders',
      'orders.FIFO',
      '',
      `http://127.0.0.1/000000000000/${'a'.repeat(81)}`,
    ];
    for (const url of refused) assert.equal(queueNameOfUrl(url, ACCOUNT), undefined, url);
  });

  it('reads a queue ARN of this region and account only', () => {
    assert.equal(queueNameOfArn('arn:aws:sqs:us-east-1:000000000000:orders', 'us-east-1', ACCOUNT), 'orders');
    for (const arn of [
      'arn:aws:sqs:us-east-1:000000000000:secret:orders',
      'arn:aws:sqs:us-east-1:000000000000:orders/x',
      'arn:aws:sqs:us-east-1:000000000000:*',
      'arn:aws:sqs:us-east-1:111122223333:orders',
      'arn:aws:sqs:eu-west-1:000000000000:orders',
      'arn:aws:sns:us-east-1:000000000000:orders',
    ])
      assert.equal(queueNameOfArn(arn, 'us-east-1', ACCOUNT), undefined, arn);
  });
});
