#!/usr/bin/env python3
"""Both halves of the Python SQS Extended Client's wire behaviour, driven through real boto3.

Usage:
  extended_client.py send SQS_ENDPOINT S3_ENDPOINT QUEUE_URL BUCKET SIZE
  extended_client.py receive SQS_ENDPOINT S3_ENDPOINT QUEUE_URL

`send` does what amazon-sqs-extended-client's store_message_in_s3 does: put_object of the UTF-8 body under a
uuid4 key, then send_message with json.dumps([class, {s3BucketName, s3Key}]) and ExtendedPayloadSize.
`receive` does what its receive_message and delete_message do: ask for the reserved attributes, json.loads
the pointer, get_object, embed the pointer in the receipt handle, and on delete split the handle again,
delete the message and delete_object. Each prints one JSON line for the caller to check.
"""

import hashlib
import json
import sys
import uuid

import boto3
from botocore.config import Config

POINTER_CLASSES = ('software.amazon.payloadoffloading.PayloadS3Pointer', 'com.amazon.sqs.javamessaging.MessageS3Pointer')
RESERVED = ('ExtendedPayloadSize', 'SQSLargePayloadSize')
BUCKET_MARKER = '-..s3BucketName..-'
KEY_MARKER = '-..s3Key..-'


def clients(sqs_endpoint, s3_endpoint):
    common = dict(region_name='us-east-1', aws_access_key_id='test', aws_secret_access_key='test')
    sqs = boto3.client('sqs', endpoint_url=sqs_endpoint, **common)
    s3 = boto3.client('s3', endpoint_url=s3_endpoint, config=Config(s3={'addressing_style': 'path'}), **common)
    return sqs, s3


def send(sqs, s3, queue_url, bucket, size):
    body = uuid.uuid4().hex * (size // 32 + 1)
    body = body[:size]
    encoded = body.encode('utf-8')
    key = str(uuid.uuid4())
    s3.put_object(Body=encoded, Bucket=bucket, Key=key)
    pointer = json.dumps([POINTER_CLASSES[0], {'s3BucketName': bucket, 's3Key': key}])
    sqs.send_message(
        QueueUrl=queue_url,
        MessageBody=pointer,
        MessageAttributes={'ExtendedPayloadSize': {'DataType': 'Number', 'StringValue': str(len(encoded))}},
    )
    print(json.dumps({'key': key, 'sha256': hashlib.sha256(encoded).hexdigest(), 'pointer': pointer}))


def receive(sqs, s3, queue_url):
    response = sqs.receive_message(QueueUrl=queue_url, MessageAttributeNames=list(RESERVED), WaitTimeSeconds=0)
    messages = response.get('Messages', [])
    if len(messages) != 1:
        raise SystemExit('expected one message, got %d' % len(messages))
    message = messages[0]
    attributes = message.get('MessageAttributes', {})
    attribute = next(name for name in RESERVED if name in attributes)
    cls, details = json.loads(message['Body'])
    if cls not in POINTER_CLASSES:
        raise SystemExit('unknown pointer class %s' % cls)
    bucket, key = details['s3BucketName'], details['s3Key']
    payload = s3.get_object(Bucket=bucket, Key=key)['Body'].read()
    handle = BUCKET_MARKER + bucket + BUCKET_MARKER + KEY_MARKER + key + KEY_MARKER + message['ReceiptHandle']
    # delete_message with the modified handle, as the Python client does it.
    original = handle.split(KEY_MARKER)[-1]
    first = handle.find(BUCKET_MARKER)
    handle_bucket = handle[first + len(BUCKET_MARKER):handle.find(BUCKET_MARKER, first + len(BUCKET_MARKER))]
    first = handle.find(KEY_MARKER)
    handle_key = handle[first + len(KEY_MARKER):handle.find(KEY_MARKER, first + len(KEY_MARKER))]
    sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=original)
    s3.delete_object(Bucket=handle_bucket, Key=handle_key)
    print(json.dumps({
        'attribute': attribute,
        'size': attributes[attribute]['StringValue'],
        'class': cls,
        'key': key,
        'sha256': hashlib.sha256(payload).hexdigest(),
    }))


def main(argv):
    if len(argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    sqs, s3 = clients(argv[2], argv[3])
    if argv[1] == 'send' and len(argv) == 7:
        send(sqs, s3, argv[4], argv[5], int(argv[6]))
    elif argv[1] == 'receive' and len(argv) == 5:
        receive(sqs, s3, argv[4])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
