#!/usr/bin/env python3
"""The SNS walkthrough of AWS's docs through a real boto3: a topic, a queue subscribed with a filter policy
and raw delivery, publishes that match and do not, a FIFO topic, and the errors boto3 reports.

Usage: sns_walkthrough.py ENDPOINT PREFIX

Credentials come from the environment. Prints one line per check and `SNS OK` at the end; a failed check
raises. Python 3.9 syntax.
"""

import base64
import json
import sys
import urllib.request

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding


def main():
    endpoint, prefix = sys.argv[1], sys.argv[2]
    config = Config(retries={'max_attempts': 1})
    sns = boto3.client('sns', endpoint_url=endpoint, region_name='us-east-1', config=config)
    sqs = boto3.client('sqs', endpoint_url=endpoint, region_name='us-east-1', config=config)

    topic = sns.create_topic(Name=prefix + '-orders', Tags=[{'Key': 'team', 'Value': 'a'}])['TopicArn']
    queue = sqs.create_queue(QueueName=prefix + '-billing')['QueueUrl']
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=['QueueArn'])['Attributes']['QueueArn']
    subscription = sns.subscribe(
        TopicArn=topic,
        Protocol='sqs',
        Endpoint=queue_arn,
        Attributes={'RawMessageDelivery': 'true', 'FilterPolicy': json.dumps({'kind': ['invoice']})},
        ReturnSubscriptionArn=True,
    )['SubscriptionArn']
    print('subscribed %s' % subscription)
    attributes = sns.get_subscription_attributes(SubscriptionArn=subscription)['Attributes']
    assert attributes['FilterPolicyScope'] == 'MessageAttributes', attributes
    assert attributes['RawMessageDelivery'] == 'true', attributes

    sns.publish(TopicArn=topic, Message='skip me',
                MessageAttributes={'kind': {'DataType': 'String', 'StringValue': 'receipt'}})
    published = sns.publish(TopicArn=topic, Message='bill me',
                            MessageAttributes={'kind': {'DataType': 'String', 'StringValue': 'invoice'}})
    batch = sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=[
        {'Id': 'a', 'Message': 'batched', 'MessageAttributes': {'kind': {'DataType': 'String', 'StringValue': 'invoice'}}},
        {'Id': 'b', 'Message': ''},
    ])
    assert [entry['Id'] for entry in batch['Successful']] == ['a'], batch
    assert [entry['Code'] for entry in batch['Failed']] == ['InvalidParameter'], batch
    bodies = []
    for _ in range(20):
        if len(bodies) >= 2:
            break
        messages = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                       MessageAttributeNames=['All']).get('Messages', [])
        bodies.extend(message['Body'] for message in messages)
    assert sorted(bodies) == ['batched', 'bill me'], bodies
    print('delivered %s' % published['MessageId'])

    check_envelope(sns, sqs, topic, prefix)

    tags = sns.list_tags_for_resource(ResourceArn=topic)['Tags']
    assert tags == [{'Key': 'team', 'Value': 'a'}], tags
    topics = [t['TopicArn'] for t in sns.list_topics()['Topics']]
    assert topic in topics, topics
    subscriptions = sns.list_subscriptions_by_topic(TopicArn=topic)['Subscriptions']
    assert [s['SubscriptionArn'] for s in subscriptions] == [subscription], subscriptions

    fifo = sns.create_topic(Name=prefix + '-ledger.fifo',
                            Attributes={'FifoTopic': 'true', 'ContentBasedDeduplication': 'true'})['TopicArn']
    first = sns.publish(TopicArn=fifo, Message='entry', MessageGroupId='g')
    again = sns.publish(TopicArn=fifo, Message='entry', MessageGroupId='g')
    assert first['MessageId'] == again['MessageId'] and len(first['SequenceNumber']) == 20, (first, again)
    try:
        sns.publish(TopicArn=fifo, Message='entry')
        raise AssertionError('a FIFO publish without a group was accepted')
    except ClientError as error:
        assert error.response['Error']['Code'] == 'InvalidParameter', error.response
        print('refused: %s' % error.response['Error']['Message'])
    try:
        sns.get_topic_attributes(TopicArn=topic + '-missing')
        raise AssertionError('a missing topic was found')
    except ClientError as error:
        assert error.response['Error']['Code'] == 'NotFound', error.response
        assert error.response['ResponseMetadata']['HTTPStatusCode'] == 404

    sns.unsubscribe(SubscriptionArn=subscription)
    sns.delete_topic(TopicArn=topic)
    print('SNS OK')
    return 0


def check_envelope(sns, sqs, topic, prefix):
    """A queue subscribed without raw delivery gets SNS's JSON notification; its signature verifies as the SNS
    developer guide tells a subscriber to verify it, with the certificate fetched from SigningCertURL."""
    queue = sqs.create_queue(QueueName=prefix + '-envelopes')['QueueUrl']
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=['QueueArn'])['Attributes']['QueueArn']
    subscription = sns.subscribe(TopicArn=topic, Protocol='sqs', Endpoint=queue_arn,
                                 ReturnSubscriptionArn=True)['SubscriptionArn']
    published = sns.publish(TopicArn=topic, Message='caf\u00e9 "quoted"\nline', Subject='envelope check',
                            MessageAttributes={'kind': {'DataType': 'String', 'StringValue': 'invoice'},
                                               'count': {'DataType': 'Number', 'StringValue': '3'}})
    messages = sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=1).get('Messages', [])
    assert len(messages) == 1, messages
    envelope = json.loads(messages[0]['Body'])
    assert list(envelope) == ['Type', 'MessageId', 'TopicArn', 'Subject', 'Message', 'Timestamp',
                              'SignatureVersion', 'Signature', 'SigningCertURL', 'UnsubscribeURL',
                              'MessageAttributes'], list(envelope)
    assert envelope['Type'] == 'Notification' and envelope['MessageId'] == published['MessageId'], envelope
    assert envelope['TopicArn'] == topic and envelope['Subject'] == 'envelope check', envelope
    assert envelope['Message'] == 'caf\u00e9 "quoted"\nline', envelope
    assert envelope['MessageAttributes'] == {'kind': {'Type': 'String', 'Value': 'invoice'},
                                             'count': {'Type': 'Number', 'Value': '3'}}, envelope
    assert subscription.replace(':', '%3A') in envelope['UnsubscribeURL'], envelope
    with urllib.request.urlopen(envelope['SigningCertURL']) as response:
        certificate = x509.load_pem_x509_certificate(response.read())
    signed = ''.join('%s\n%s\n' % (name, envelope[name])
                     for name in ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
                     if name in envelope)
    assert envelope['SignatureVersion'] == '1', envelope
    # Raises InvalidSignature when it does not verify.
    certificate.public_key().verify(base64.b64decode(envelope['Signature']), signed.encode('utf-8'),
                                    padding.PKCS1v15(), hashes.SHA1())
    print('envelope signature verified with %s' % envelope['SigningCertURL'])
    sns.unsubscribe(SubscriptionArn=subscription)
    sqs.delete_queue(QueueUrl=queue)


if __name__ == '__main__':
    sys.exit(main())
