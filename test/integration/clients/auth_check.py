#!/usr/bin/env python3
"""One signed round trip through a real boto3 client, with the credentials in the environment.

Usage: auth_check.py ENDPOINT QUEUE_NAME

Prints `PROTOCOL=<query|json>`, then creates QUEUE_NAME, sends, receives and deletes one message and
prints `AUTH OK`. The first call the server refuses prints `ERROR_CODE <code>` and exits 3, so the
caller can check which of SQS's authentication errors the client saw. Python 3.9 syntax.
"""

import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError


def main():
    endpoint, queue_name = sys.argv[1], sys.argv[2]
    sqs = boto3.client('sqs', endpoint_url=endpoint, config=Config(retries={'max_attempts': 1}))
    protocol = sqs.meta.service_model.protocol
    print('PROTOCOL=%s' % ('json' if protocol == 'json' else 'query'), flush=True)
    try:
        url = sqs.create_queue(QueueName=queue_name)['QueueUrl']
        sqs.send_message(QueueUrl=url, MessageBody='signed hello')
        messages = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get('Messages', [])
        if [m['Body'] for m in messages] != ['signed hello']:
            print('unexpected receive: %r' % messages)
            return 1
        sqs.delete_message(QueueUrl=url, ReceiptHandle=messages[0]['ReceiptHandle'])
    except ClientError as error:
        print('ERROR_CODE %s' % error.response['Error']['Code'], flush=True)
        return 3
    print('AUTH OK')
    return 0


if __name__ == '__main__':
    sys.exit(main())
