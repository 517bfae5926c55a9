#!/usr/bin/env python3
"""Standard-queue scenario driven through a real boto3 client.

Usage: scenario.py ENDPOINT [--keep-going]

Runs against any SQS-compatible endpoint with whichever boto3 the interpreter has: Debian's
boto3 1.26 speaks the Query protocol (form-encoded, XML), boto3 1.43 speaks AWS JSON 1.0. The
first line printed is `PROTOCOL=<query|json>` so the caller can check which wire format was used.

Exits 1 on the first failed check (or, with --keep-going, after running every step, listing
each failure), 2 on bad usage. Error codes each client exposes are printed as `ERROR_CODE ...`
lines. boto3 does not verify MD5 digests itself, so the script does.

Kept to Python 3.9 syntax and to APIs that exist in both boto3 1.26 and 1.43.
"""

import hashlib
import os
import struct
import sys
import threading
import time
import traceback
import uuid

import boto3
import botocore
from botocore.config import Config
from botocore.exceptions import ClientError

NON_EXISTENT_QUEUE = 'AWS.SimpleQueueService.NonExistentQueue'
# Every printable class of character SQS allows, plus the ones XML and form encoding must escape.
TRICKY_BODY = 'line1\r\nline2\rline3\n\ttab &amp; & < > " \' caf\u00e9 \u65e5\u672c\u8a9e \U0001f680\U0001f389 \ufffd end'


class CheckFailed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise CheckFailed(message)


def equal(actual, expected, what):
    check(actual == expected, '%s: expected %r, got %r' % (what, expected, actual))


def md5_hex(data):
    return hashlib.md5(data).hexdigest()


def md5_of_attributes(attributes):
    """MD5OfMessageAttributes as SQS computes it (names sorted; length-prefixed fields)."""
    buf = b''
    for name in sorted(attributes):
        value = attributes[name]
        data_type = value['DataType']
        for part in (name.encode('utf-8'), data_type.encode('utf-8')):
            buf += struct.pack('>I', len(part)) + part
        if data_type.startswith('Binary'):
            raw = value['BinaryValue']
            buf += b'\x02'
        else:
            raw = value['StringValue'].encode('utf-8')
            buf += b'\x01'
        buf += struct.pack('>I', len(raw)) + raw
    return md5_hex(buf)


def expect_error(label, expected_code, fn, *args, **kwargs):
    """Calls fn, which must fail with Error.Code == expected_code; prints what the client exposed."""
    try:
        fn(*args, **kwargs)
    except ClientError as e:
        error = e.response.get('Error', {})
        status = e.response.get('ResponseMetadata', {}).get('HTTPStatusCode')
        print(
            'ERROR_CODE op=%s code=%s class=%s status=%s query_error_code=%s'
            % (label, error.get('Code'), type(e).__name__, status, error.get('QueryErrorCode'))
        )
        equal(error.get('Code'), expected_code, '%s: Error.Code' % label)
        return e
    raise CheckFailed('%s: expected error %s, but the call succeeded' % (label, expected_code))


class Scenario:
    def __init__(self, endpoint):
        config = Config(
            region_name='us-east-1',
            retries={'max_attempts': 1},
            connect_timeout=5,
            read_timeout=30,
        )
        self.sqs = boto3.client(
            'sqs',
            endpoint_url=endpoint,
            aws_access_key_id='test',
            aws_secret_access_key='test',
            config=config,
        )
        self.protocol = self.sqs.meta.service_model.protocol
        run = uuid.uuid4().hex[:8]
        self.prefix = 'scn-%s-%s' % (self.protocol, run)
        self.name = self.prefix + '-main'
        self.other_name = self.prefix + '-other'
        self.url = None
        self.other_url = None
        self.created = []
        self.attrs_a = {}
        self.msg_a = None
        self.msg_b = None
        self.handles = {}

    # -- helpers ------------------------------------------------------------------------------

    def receive_until(self, count, **kwargs):
        """Receives until `count` messages were collected (SQS may return fewer per call)."""
        got = {}
        deadline = time.time() + 5
        while len(got) < count and time.time() < deadline:
            resp = self.sqs.receive_message(
                QueueUrl=self.url, MaxNumberOfMessages=10, WaitTimeSeconds=1, **kwargs
            )
            for m in resp.get('Messages', []):
                got[m['MessageId']] = m
        equal(len(got), count, 'number of messages received')
        return got

    def check_md5s(self, message, sent_attributes, what):
        equal(message['MD5OfBody'], md5_hex(message['Body'].encode('utf-8')), '%s MD5OfBody' % what)
        if sent_attributes:
            equal(
                message.get('MD5OfMessageAttributes'),
                md5_of_attributes(sent_attributes),
                '%s MD5OfMessageAttributes' % what,
            )

    # -- steps --------------------------------------------------------------------------------

    def create_queue(self):
        attrs = {'VisibilityTimeout': '45', 'DelaySeconds': '0'}
        self.url = self.sqs.create_queue(QueueName=self.name, Attributes=attrs)['QueueUrl']
        self.created.append(self.url)
        check(self.url.endswith('/' + self.name), 'QueueUrl %r does not end with /%s' % (self.url, self.name))
        again = self.sqs.create_queue(QueueName=self.name, Attributes=attrs)['QueueUrl']
        equal(again, self.url, 'QueueUrl of an idempotent CreateQueue')
        e = expect_error(
            'CreateQueue(different attributes)',
            'QueueAlreadyExists',
            self.sqs.create_queue,
            QueueName=self.name,
            Attributes={'VisibilityTimeout': '46', 'DelaySeconds': '0'},
        )
        equal(type(e).__name__, 'QueueNameExists', 'exception class for QueueAlreadyExists')
        self.other_url = self.sqs.create_queue(QueueName=self.other_name)['QueueUrl']
        self.created.append(self.other_url)

    def get_url_and_list(self):
        equal(self.sqs.get_queue_url(QueueName=self.name)['QueueUrl'], self.url, 'GetQueueUrl')
        listed = self.sqs.list_queues(QueueNamePrefix=self.prefix).get('QueueUrls', [])
        equal(sorted(listed), sorted([self.url, self.other_url]), 'ListQueues with the run prefix')
        listed = self.sqs.list_queues(QueueNamePrefix=self.name).get('QueueUrls', [])
        equal(listed, [self.url], 'ListQueues with the main queue name as prefix')
        listed = self.sqs.list_queues(QueueNamePrefix=self.prefix + '-nothing').get('QueueUrls', [])
        equal(listed, [], 'ListQueues with a prefix matching nothing')

    def attributes(self):
        attrs = self.sqs.get_queue_attributes(QueueUrl=self.url, AttributeNames=['All'])['Attributes']
        expected = {
            'VisibilityTimeout': '45',
            'DelaySeconds': '0',
            'MaximumMessageSize': '1048576',
            'MessageRetentionPeriod': '345600',
            'ReceiveMessageWaitTimeSeconds': '0',
            'ApproximateNumberOfMessages': '0',
            'ApproximateNumberOfMessagesNotVisible': '0',
            'ApproximateNumberOfMessagesDelayed': '0',
        }
        for name, value in sorted(expected.items()):
            equal(attrs.get(name), value, 'attribute %s' % name)
        check(attrs.get('QueueArn', '').endswith(':' + self.name), 'QueueArn %r' % attrs.get('QueueArn'))
        check(attrs.get('QueueArn', '').startswith('arn:aws:sqs:'), 'QueueArn %r' % attrs.get('QueueArn'))
        self.sqs.set_queue_attributes(QueueUrl=self.url, Attributes={'VisibilityTimeout': '60'})
        one = self.sqs.get_queue_attributes(QueueUrl=self.url, AttributeNames=['VisibilityTimeout'])
        equal(one['Attributes'], {'VisibilityTimeout': '60'}, 'GetQueueAttributes(VisibilityTimeout)')
        # Integers: SQS returns whole epoch seconds here (moto returns a float).
        for name in ('CreatedTimestamp', 'LastModifiedTimestamp'):
            value = attrs.get(name, '')
            check(value.isdigit() and abs(int(value) - time.time()) < 600, '%s %r is not epoch seconds' % (name, value))

    def tags(self):
        self.sqs.tag_queue(QueueUrl=self.url, Tags={'team': 'core', 'env': 'test'})
        equal(self.sqs.list_queue_tags(QueueUrl=self.url).get('Tags'), {'team': 'core', 'env': 'test'}, 'tags')
        self.sqs.untag_queue(QueueUrl=self.url, TagKeys=['env'])
        equal(self.sqs.list_queue_tags(QueueUrl=self.url).get('Tags'), {'team': 'core'}, 'tags after untag')

    def send(self):
        self.attrs_a = {
            'str.plain': {'DataType': 'String', 'StringValue': 'hello & <world> \r\n \u00e9\U0001f680'},
            'num': {'DataType': 'Number', 'StringValue': '-12.5'},
            'bin': {'DataType': 'Binary', 'BinaryValue': b'\x00\x01\x7f\x80\xfe\xff'},
            'str.json': {'DataType': 'String.json', 'StringValue': '{"k": [1, 2], "s": "\u00fc"}'},
        }
        resp = self.sqs.send_message(QueueUrl=self.url, MessageBody=TRICKY_BODY, MessageAttributes=self.attrs_a)
        equal(resp['MD5OfMessageBody'], md5_hex(TRICKY_BODY.encode('utf-8')), 'SendMessage MD5OfMessageBody')
        equal(resp['MD5OfMessageAttributes'], md5_of_attributes(self.attrs_a), 'SendMessage MD5OfMessageAttributes')
        self.msg_a = resp['MessageId']

        resp = self.sqs.send_message_batch(
            QueueUrl=self.url, Entries=[{'Id': 'b', 'MessageBody': 'batch body \u2713'}]
        )
        self.msg_b = resp['Successful'][0]['MessageId']

    def batch_partial_failure(self):
        # On the other queue, so that a server wrongly accepting the bad entry does not disturb the
        # counts of the main queue in later steps.
        resp = self.sqs.send_message_batch(
            QueueUrl=self.other_url,
            Entries=[
                {'Id': 'ok-1', 'MessageBody': 'batch body \u2713'},
                {'Id': 'bad_1', 'MessageBody': 'forbidden \x00 character'},
            ],
        )
        ok = resp.get('Successful', [])
        failed = resp.get('Failed', [])
        equal([e['Id'] for e in ok], ['ok-1'], 'SendMessageBatch successful ids')
        equal(ok[0]['MD5OfMessageBody'], md5_hex('batch body \u2713'.encode('utf-8')), 'batch entry MD5')
        equal([e['Id'] for e in failed], ['bad_1'], 'SendMessageBatch failed ids')
        print('BATCH_ENTRY_ERROR op=SendMessageBatch code=%s' % failed[0].get('Code'))
        equal(failed[0].get('Code'), 'InvalidMessageContents', 'failed batch entry Code')
        equal(failed[0].get('SenderFault'), True, 'failed batch entry SenderFault')

    def receive(self):
        got = self.receive_until(2, AttributeNames=['All'], MessageAttributeNames=['All'], VisibilityTimeout=0)
        check(self.msg_a in got and self.msg_b in got, 'received ids %r' % sorted(got))
        a = got[self.msg_a]
        check(a['Body'] == TRICKY_BODY, 'body not byte-identical: %r' % a['Body'])
        self.check_md5s(a, self.attrs_a, 'message A')
        equal(a.get('MessageAttributes'), self.attrs_a, 'message attributes (All)')
        sys_attrs = a.get('Attributes', {})
        equal(sys_attrs.get('ApproximateReceiveCount'), '1', 'ApproximateReceiveCount on first receive')
        for name in ('SentTimestamp', 'ApproximateFirstReceiveTimestamp'):
            value = sys_attrs.get(name, '')
            check(value.isdigit() and abs(int(value) / 1000 - time.time()) < 600, '%s %r not epoch ms' % (name, value))
        check(sys_attrs.get('SenderId'), 'SenderId missing from Attributes All')
        b = got[self.msg_b]
        equal(b['Body'], 'batch body \u2713', 'batch message body')
        check('MessageAttributes' not in b, 'message B has no attributes, got %r' % b.get('MessageAttributes'))

        # Redelivered (VisibilityTimeout=0 above): the count goes up, the filters pick attributes.
        got = self.receive_until(
            2,
            AttributeNames=['ApproximateReceiveCount'],
            MessageAttributeNames=['str.*'],
            VisibilityTimeout=0,
        )
        a2 = got[self.msg_a]
        equal(a2['Attributes'], {'ApproximateReceiveCount': '2'}, 'Attributes when only the count is asked')
        subset = {k: v for k, v in self.attrs_a.items() if k.startswith('str.')}
        equal(a2.get('MessageAttributes'), subset, 'message attributes with prefix filter str.*')
        self.check_md5s(a2, subset, 'message A (prefix filter)')
        check(a2['ReceiptHandle'] != a['ReceiptHandle'], 'a new receipt handle on every receive')

        got = self.receive_until(2, AttributeNames=['All'], MessageAttributeNames=['num'])
        a3 = got[self.msg_a]
        equal(a3['Attributes']['ApproximateReceiveCount'], '3', 'ApproximateReceiveCount on third receive')
        equal(a3.get('MessageAttributes'), {'num': self.attrs_a['num']}, 'message attributes by name')
        self.handles = {mid: m['ReceiptHandle'] for mid, m in got.items()}

    def visibility(self):
        # Both messages are in flight for the queue's 60 s now: a short poll must not see them.
        resp = self.sqs.receive_message(QueueUrl=self.url, MaxNumberOfMessages=10, WaitTimeSeconds=0)
        equal(resp.get('Messages', []), [], 'receive while every message is in flight')
        self.sqs.change_message_visibility(
            QueueUrl=self.url, ReceiptHandle=self.handles[self.msg_a], VisibilityTimeout=0
        )
        resp = self.receive_until(1, AttributeNames=['ApproximateReceiveCount'])
        a = resp[self.msg_a]
        equal(a['Attributes']['ApproximateReceiveCount'], '4', 'count after ChangeMessageVisibility 0')
        self.handles[self.msg_a] = a['ReceiptHandle']

        resp = self.sqs.change_message_visibility_batch(
            QueueUrl=self.url,
            Entries=[
                {'Id': 'a', 'ReceiptHandle': self.handles[self.msg_a], 'VisibilityTimeout': 0},
                {'Id': 'b', 'ReceiptHandle': self.handles[self.msg_b], 'VisibilityTimeout': 0},
                {'Id': 'bad', 'ReceiptHandle': 'not-a-receipt-handle', 'VisibilityTimeout': 0},
            ],
        )
        equal(sorted(e['Id'] for e in resp.get('Successful', [])), ['a', 'b'], 'ChangeMessageVisibilityBatch ok')
        failed = resp.get('Failed', [])
        equal([e['Id'] for e in failed], ['bad'], 'ChangeMessageVisibilityBatch failed ids')
        print('BATCH_ENTRY_ERROR op=ChangeMessageVisibilityBatch code=%s' % failed[0].get('Code'))
        equal(failed[0].get('Code'), 'ReceiptHandleIsInvalid', 'ChangeMessageVisibilityBatch failed Code')
        equal(failed[0].get('SenderFault'), True, 'ChangeMessageVisibilityBatch SenderFault')

    def delete(self):
        got = self.receive_until(2)
        self.sqs.delete_message(QueueUrl=self.url, ReceiptHandle=got[self.msg_a]['ReceiptHandle'])
        resp = self.sqs.delete_message_batch(
            QueueUrl=self.url,
            Entries=[
                {'Id': 'b', 'ReceiptHandle': got[self.msg_b]['ReceiptHandle']},
                {'Id': 'bad', 'ReceiptHandle': 'not-a-receipt-handle'},
            ],
        )
        equal([e['Id'] for e in resp.get('Successful', [])], ['b'], 'DeleteMessageBatch successful ids')
        failed = resp.get('Failed', [])
        equal([e['Id'] for e in failed], ['bad'], 'DeleteMessageBatch failed ids')
        print('BATCH_ENTRY_ERROR op=DeleteMessageBatch code=%s' % failed[0].get('Code'))
        equal(failed[0].get('Code'), 'ReceiptHandleIsInvalid', 'DeleteMessageBatch failed Code')
        expect_error(
            'DeleteMessage(invalid handle)',
            'ReceiptHandleIsInvalid',
            self.sqs.delete_message,
            QueueUrl=self.url,
            ReceiptHandle='not-a-receipt-handle',
        )
        attrs = self.sqs.get_queue_attributes(
            QueueUrl=self.url,
            AttributeNames=['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        )['Attributes']
        equal(
            attrs,
            {'ApproximateNumberOfMessages': '0', 'ApproximateNumberOfMessagesNotVisible': '0'},
            'counts after deleting everything',
        )

    def missing_queue(self):
        missing_name = self.prefix + '-missing'
        missing_url = self.url[: -len(self.name)] + missing_name
        calls = [
            ('GetQueueUrl', self.sqs.get_queue_url, {'QueueName': missing_name}),
            ('SendMessage', self.sqs.send_message, {'QueueUrl': missing_url, 'MessageBody': 'x'}),
            ('ReceiveMessage', self.sqs.receive_message, {'QueueUrl': missing_url}),
            ('GetQueueAttributes', self.sqs.get_queue_attributes, {'QueueUrl': missing_url}),
            ('DeleteQueue', self.sqs.delete_queue, {'QueueUrl': missing_url}),
        ]
        for label, fn, kwargs in calls:
            e = expect_error('%s(missing queue)' % label, NON_EXISTENT_QUEUE, fn, **kwargs)
            equal(type(e).__name__, 'QueueDoesNotExist', '%s: exception class' % label)

    def long_poll(self):
        started = time.time()
        resp = self.sqs.receive_message(QueueUrl=self.url, WaitTimeSeconds=2)
        elapsed = time.time() - started
        equal(resp.get('Messages', []), [], 'long poll on an empty queue')
        check(1.8 <= elapsed < 4, 'long poll of 2 s on an empty queue took %.2f s' % elapsed)

        result = {}

        def waiter():
            try:
                result['resp'] = self.sqs.receive_message(QueueUrl=self.url, WaitTimeSeconds=10)
            except Exception as e:  # reported by the main thread
                result['error'] = e
            result['done'] = time.time()

        thread = threading.Thread(target=waiter)
        thread.start()
        time.sleep(0.5)  # let the receive reach the server and start waiting
        check('done' not in result, 'the long poll returned before anything was sent: %r' % result)
        sent_at = time.time()
        self.sqs.send_message(QueueUrl=self.url, MessageBody='wake up')
        thread.join(12)
        check(not thread.is_alive(), 'long poll did not return')
        if 'error' in result:
            raise result['error']
        messages = result['resp'].get('Messages', [])
        equal([m['Body'] for m in messages], ['wake up'], 'message delivered to the waiting long poll')
        latency = result['done'] - sent_at
        check(latency < 1.5, 'long poll answered %.2f s after the send (should be at once)' % latency)
        self.sqs.delete_message(QueueUrl=self.url, ReceiptHandle=messages[0]['ReceiptHandle'])

    def fifo(self):
        """FIFO queue: group order, blocking, deduplication, sequence numbers, receive attempts."""
        name = self.prefix + '-orders.fifo'
        url = self.sqs.create_queue(QueueName=name, Attributes={'FifoQueue': 'true'})['QueueUrl']
        self.created.append(url)
        expect_error('SendMessage(no group)', 'MissingParameter', self.sqs.send_message,
                     QueueUrl=url, MessageBody='x', MessageDeduplicationId='d0')
        expect_error('SendMessage(no dedup id)', 'InvalidParameterValue', self.sqs.send_message,
                     QueueUrl=url, MessageBody='x', MessageGroupId='g')
        expect_error('SendMessage(per-message delay)', 'InvalidParameterValue', self.sqs.send_message,
                     QueueUrl=url, MessageBody='x', MessageGroupId='g', MessageDeduplicationId='d0',
                     DelaySeconds=5)
        first = self.sqs.send_message(QueueUrl=url, MessageBody='one', MessageGroupId='g1',
                                      MessageDeduplicationId='d1')
        check(first['SequenceNumber'].isdigit(), 'SequenceNumber %r' % first.get('SequenceNumber'))
        again = self.sqs.send_message(QueueUrl=url, MessageBody='one again', MessageGroupId='g1',
                                      MessageDeduplicationId='d1')
        equal(again['MessageId'], first['MessageId'], 'MessageId of a deduplicated send')
        equal(again['SequenceNumber'], first['SequenceNumber'], 'SequenceNumber of a deduplicated send')
        entries = [
            {'Id': 'b%d' % i, 'MessageBody': 'b%d' % i, 'MessageGroupId': 'g1', 'MessageDeduplicationId': 'db%d' % i}
            for i in range(3)
        ]
        # An entry without a group fails the whole request (SQS); a malformed group fails its entry alone.
        expect_error('SendMessageBatch(entry without group)', 'InvalidParameterValue', self.sqs.send_message_batch,
                     QueueUrl=url, Entries=entries + [{'Id': 'bad', 'MessageBody': 'no group',
                                                       'MessageDeduplicationId': 'dbad'}])
        batch = self.sqs.send_message_batch(QueueUrl=url, Entries=entries + [
            {'Id': 'bad', 'MessageBody': 'bad group', 'MessageGroupId': 'a b', 'MessageDeduplicationId': 'dbad'}])
        equal(sorted(e['Id'] for e in batch['Successful']), ['b0', 'b1', 'b2'], 'batch successes')
        equal([e['Code'] for e in batch.get('Failed', [])], ['InvalidParameterValue'], 'batch failure codes')
        numbers = [int(first['SequenceNumber'])] + [int(e['SequenceNumber']) for e in sorted(batch['Successful'], key=lambda e: e['Id'])]
        equal(numbers, sorted(set(numbers)), 'sequence numbers strictly increasing')
        self.sqs.send_message(QueueUrl=url, MessageBody='other', MessageGroupId='g2', MessageDeduplicationId='d2')

        got = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=['All'],
                                       ReceiveRequestAttemptId='attempt-1')['Messages']
        by_group = {}
        for m in got:
            by_group.setdefault(m['Attributes']['MessageGroupId'], []).append(m)
        equal([m['Body'] for m in by_group.get('g1', [])], ['one', 'b0', 'b1', 'b2'], 'group g1 order')
        equal([m['Body'] for m in by_group.get('g2', [])], ['other'], 'group g2')
        head = by_group['g1'][0]['Attributes']
        equal(head['MessageDeduplicationId'], 'd1', 'MessageDeduplicationId attribute')
        equal(head['SequenceNumber'], first['SequenceNumber'], 'SequenceNumber attribute')
        retried = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10,
                                           ReceiveRequestAttemptId='attempt-1')['Messages']
        equal(sorted(m['ReceiptHandle'] for m in retried), sorted(m['ReceiptHandle'] for m in got),
              'receipt handles of a retried receive attempt')
        # Both groups are in flight: a new attempt gets nothing until a group is freed.
        self.sqs.send_message(QueueUrl=url, MessageBody='later', MessageGroupId='g1', MessageDeduplicationId='d3')
        blocked = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, ReceiveRequestAttemptId='attempt-2')
        equal(blocked.get('Messages', []), [], 'receive while every group is in flight')
        self.sqs.delete_message_batch(QueueUrl=url, Entries=[
            {'Id': str(i), 'ReceiptHandle': m['ReceiptHandle']} for i, m in enumerate(got)])
        freed = self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)['Messages']
        equal([m['Body'] for m in freed], ['later'], 'the next message of the freed group')

    def purge_and_delete(self):
        self.sqs.send_message(QueueUrl=self.url, MessageBody='to be purged')
        self.sqs.purge_queue(QueueUrl=self.url)
        e = expect_error(
            'PurgeQueue(second within 60 s)',
            'AWS.SimpleQueueService.PurgeQueueInProgress',
            self.sqs.purge_queue,
            QueueUrl=self.url,
        )
        equal(type(e).__name__, 'PurgeQueueInProgress', 'exception class for PurgeQueueInProgress')
        for url in (self.url, self.other_url):
            self.sqs.delete_queue(QueueUrl=url)
            self.created.remove(url)
        expect_error('GetQueueUrl(deleted queue)', NON_EXISTENT_QUEUE, self.sqs.get_queue_url, QueueName=self.name)

    STEPS = (
        'create_queue',
        'get_url_and_list',
        'attributes',
        'tags',
        'send',
        'batch_partial_failure',
        'receive',
        'visibility',
        'delete',
        'missing_queue',
        'long_poll',
        'fifo',
        'purge_and_delete',
    )

    def cleanup(self):
        for url in list(self.created):
            try:
                self.sqs.delete_queue(QueueUrl=url)
            except ClientError:
                pass


def main(argv):
    args = [a for a in argv[1:] if not a.startswith('--')]
    keep_going = '--keep-going' in argv
    if len(args) != 1:
        print('usage: scenario.py ENDPOINT [--keep-going]', file=sys.stderr)
        return 2
    for var in ('AWS_CONFIG_FILE', 'AWS_SHARED_CREDENTIALS_FILE'):
        os.environ.setdefault(var, os.devnull)
    scenario = Scenario(args[0])
    print('PROTOCOL=%s' % scenario.protocol)
    print('CLIENT python=%s boto3=%s botocore=%s' % (sys.version.split()[0], boto3.__version__, botocore.__version__))
    failures = []
    try:
        for step in Scenario.STEPS:
            started = time.time()
            try:
                getattr(scenario, step)()
            except (CheckFailed, ClientError) as e:
                failures.append(step)
                print('FAIL %s: %s: %s' % (step, type(e).__name__, e))
                if not keep_going:
                    break
            except Exception:
                failures.append(step)
                print('FAIL %s: unexpected exception' % step)
                traceback.print_exc(file=sys.stdout)
                if not keep_going:
                    break
            else:
                print('ok %s (%.2f s)' % (step, time.time() - started))
    finally:
        scenario.cleanup()
    if failures:
        print('SCENARIO FAILED (%s): %s' % (scenario.protocol, ', '.join(failures)))
        return 1
    print('SCENARIO PASSED (%s)' % scenario.protocol)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
