#!/usr/bin/env python3
"""The message behaviours of issue 24 (AWS fidelity) driven through a real boto3 client.

Usage: message_fidelity.py ENDPOINT

Prints `PROTOCOL=<query|json>`, then one line `RESULT <json>`: for each scenario, what the server
answered, in the same shape test/integration/message-fidelity.test.ts builds with the JS SDK, which
holds the expectations. A scenario that raises records `{"crashed": "<traceback>"}` and the others
still run. Receipt handles in error messages are replaced by `<handle>`.

Kept to Python 3.9 syntax and to APIs that exist in both boto3 1.26 and 1.43.
"""

import json
import sys
import traceback
import uuid

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

TRACE = 'Root=1-3152b799-8954dae64eda91bc9a23a7e8;Parent=7fa8c0f79203be72;Sampled=1'


def error_of(call, handle=None):
    """What a call that must fail answered: its error code and message, or 'ok' if it succeeded."""
    try:
        call()
    except ClientError as e:
        error = e.response.get('Error', {})
        message = error.get('Message', '')
        if handle:
            message = message.replace(handle, '<handle>')
        return {'code': error.get('Code'), 'message': message}
    return 'ok'


class Scenarios:
    def __init__(self, endpoint):
        self.sqs = boto3.client(
            'sqs',
            endpoint_url=endpoint,
            region_name='us-east-1',
            aws_access_key_id='test',
            aws_secret_access_key='test',
            config=Config(retries={'max_attempts': 1}, connect_timeout=5, read_timeout=30),
        )
        self.protocol = self.sqs.meta.service_model.protocol
        self.prefix = 'fid-%s-%s' % (self.protocol, uuid.uuid4().hex[:8])
        self.count = 0

    def queue(self, fifo=False, **attributes):
        self.count += 1
        name = '%s-%d%s' % (self.prefix, self.count, '.fifo' if fifo else '')
        if fifo:
            attributes['FifoQueue'] = 'true'
        return self.sqs.create_queue(QueueName=name, Attributes=attributes)['QueueUrl']

    def receive(self, url, **kwargs):
        return self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, **kwargs).get('Messages', [])

    def handle(self, url, **kwargs):
        return self.receive(url, **kwargs)[0]['ReceiptHandle']

    def change(self, url, handle, timeout):
        return lambda: self.sqs.change_message_visibility(
            QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=timeout
        )

    def attributes(self, url):
        return self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=['All'])['Attributes']

    # -- scenarios, each as the test file names it --------------------------------------------

    def superseded_delete(self):
        url = self.queue()
        self.sqs.send_message(QueueUrl=url, MessageBody='a')
        first = self.handle(url, VisibilityTimeout=0)
        self.handle(url, VisibilityTimeout=30)
        answer = error_of(lambda: self.sqs.delete_message(QueueUrl=url, ReceiptHandle=first), first)
        left = self.attributes(url)
        return {
            'deleteAnswer': answer,
            'messagesLeft': int(left['ApproximateNumberOfMessages'])
            + int(left['ApproximateNumberOfMessagesNotVisible']),
        }

    def lapsed_or_superseded_change(self):
        url = self.queue()
        self.sqs.send_message(QueueUrl=url, MessageBody='a')
        first = self.handle(url, VisibilityTimeout=0)
        lapsed = error_of(self.change(url, first, 60), first)
        hidden = len(self.receive(url))
        error_of(self.change(url, first, 0), first)
        self.handle(url, VisibilityTimeout=30)
        batch = self.sqs.change_message_visibility_batch(
            QueueUrl=url, Entries=[{'Id': 'old', 'ReceiptHandle': first, 'VisibilityTimeout': 0}]
        )
        again = self.receive(url, VisibilityTimeout=30)
        for message in again:
            self.sqs.delete_message(QueueUrl=url, ReceiptHandle=message['ReceiptHandle'])
        return {
            'lapsedChange': lapsed,
            'receivedAfterLapsedChange': hidden,
            'batch': {
                'successful': [entry['Id'] for entry in batch.get('Successful', [])],
                'failed': [entry['Id'] for entry in batch.get('Failed', [])],
            },
            'receivedAfterBatch': len(again),
            'afterDelete': error_of(self.change(url, first, 10), first),
        }

    def fifo_expired_delete(self):
        url = self.queue(fifo=True, ContentBasedDeduplication='true')
        self.sqs.send_message(QueueUrl=url, MessageBody='m', MessageGroupId='g')
        lapsed = self.handle(url, VisibilityTimeout=0)
        answer = error_of(lambda: self.sqs.delete_message(QueueUrl=url, ReceiptHandle=lapsed), lapsed)
        current = self.handle(url, VisibilityTimeout=30)
        return {
            'lapsedDelete': answer,
            'inFlightDelete': error_of(lambda: self.sqs.delete_message(QueueUrl=url, ReceiptHandle=current)),
        }

    def fifo_batch_missing_group(self):
        url = self.queue(fifo=True)
        entries = [
            {'Id': 'a', 'MessageBody': 'a', 'MessageGroupId': 'g', 'MessageDeduplicationId': 'd1'},
            {'Id': 'b', 'MessageBody': 'b', 'MessageDeduplicationId': 'd2'},
        ]
        return error_of(lambda: self.sqs.send_message_batch(QueueUrl=url, Entries=entries))

    def fifo_batch_missing_deduplication(self):
        url = self.queue(fifo=True)
        entries = [
            {'Id': 'a', 'MessageBody': 'a', 'MessageGroupId': 'g', 'MessageDeduplicationId': 'd1'},
            {'Id': 'b', 'MessageBody': 'b', 'MessageGroupId': 'g'},
        ]
        return error_of(lambda: self.sqs.send_message_batch(QueueUrl=url, Entries=entries))

    def batch_sizes(self):
        url = self.queue(MaximumMessageSize='1024')
        result = self.sqs.send_message_batch(
            QueueUrl=url,
            Entries=[{'Id': 'big', 'MessageBody': 'x' * 1025}, {'Id': 'small', 'MessageBody': 'y'}],
        )
        too_long = [{'Id': 'a', 'MessageBody': 'x' * 524288}, {'Id': 'b', 'MessageBody': 'x' * 524289}]
        return {
            'entry': {
                'successful': [entry['Id'] for entry in result.get('Successful', [])],
                'failed': [
                    {key: entry[key] for key in ('Id', 'Code', 'SenderFault', 'Message')}
                    for entry in result.get('Failed', [])
                ],
            },
            'tooLong': error_of(lambda: self.sqs.send_message_batch(QueueUrl=url, Entries=too_long)),
        }

    def attribute_name_filters(self):
        url = self.queue()
        self.sqs.send_message(
            QueueUrl=url,
            MessageBody='msg',
            MessageAttributes={
                'Help.Me': {'DataType': 'String', 'StringValue': 'Me'},
                'Hello': {'DataType': 'String', 'StringValue': 'There'},
                'General': {'DataType': 'String', 'StringValue': 'Kenobi'},
            },
        )
        selected = {}
        for pattern in ('Hel.*', '*'):
            message = self.receive(url, VisibilityTimeout=0, MessageAttributeNames=[pattern])[0]
            selected[pattern] = sorted(message.get('MessageAttributes', {}))
        return selected

    def error_texts(self):
        fifo = self.queue(fifo=True, ContentBasedDeduplication='true')
        standard = self.queue()
        return {
            'fifoDelay': error_of(
                lambda: self.sqs.send_message(
                    QueueUrl=fifo, MessageBody='x', MessageGroupId='g', DelaySeconds=2
                )
            ),
            'standardDeduplicationId': error_of(
                lambda: self.sqs.send_message(QueueUrl=standard, MessageBody='x', MessageDeduplicationId='d')
            ),
            'emptyString': error_of(
                lambda: self.sqs.send_message(
                    QueueUrl=standard,
                    MessageBody='x',
                    MessageAttributes={'ErrorDetails': {'DataType': 'String', 'StringValue': ''}},
                )
            ),
        }

    def trace_header(self):
        url = self.queue()

        def add_trace_header(request, **_):
            request.headers['X-Amzn-Trace-Id'] = TRACE

        self.sqs.meta.events.register('before-send.sqs.SendMessage', add_trace_header)
        try:
            self.sqs.send_message(QueueUrl=url, MessageBody='from header')
            self.sqs.send_message(
                QueueUrl=url,
                MessageBody='own attribute',
                MessageSystemAttributes={
                    'AWSTraceHeader': {'DataType': 'String', 'StringValue': 'Root=1-own'}
                },
            )
        finally:
            self.sqs.meta.events.unregister('before-send.sqs.SendMessage', add_trace_header)
        messages = self.receive(url, AttributeNames=['AWSTraceHeader'])
        return {m['Body']: m.get('Attributes', {}).get('AWSTraceHeader') for m in messages}

    def attribute_characters(self):
        url = self.queue()
        self.sqs.send_message(
            QueueUrl=url,
            MessageBody='x',
            MessageAttributes={'attr.1\u00f8\u00df\u00e4': {'DataType': 'String', 'StringValue': 'Valida'}},
        )
        message = self.receive(url, MessageAttributeNames=['All'])[0]
        return {
            'internationalName': sorted(message.get('MessageAttributes', {})),
            'controlCharacters': error_of(
                lambda: self.sqs.send_message(
                    QueueUrl=url,
                    MessageBody='x',
                    MessageAttributes={'attr1': {'DataType': 'String', 'StringValue': 'Invalid-\b,\v'}},
                )
            ),
        }

    def fifo_first_in_flight(self):
        url = self.queue(fifo=True, ContentBasedDeduplication='true', VisibilityTimeout='30')
        for body in ('a1', 'a2', 'a3'):
            self.sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId='a')
        first = self.receive(url)
        # a2's timeout is extended; a1's own timeout lapses (ended at once).
        self.change(url, first[1]['ReceiptHandle'], 60)()
        self.change(url, first[0]['ReceiptHandle'], 0)()
        return {
            'first': [m['Body'] for m in first],
            'afterFirstLapses': [m['Body'] for m in self.receive(url)],
        }

    def fifo_zero_delay(self):
        url = self.queue(fifo=True, ContentBasedDeduplication='true', DelaySeconds='60')
        self.sqs.send_message(QueueUrl=url, MessageBody='zero', MessageGroupId='g', DelaySeconds=0)
        return {
            'received': len(self.receive(url)),
            'delayed': self.attributes(url)['ApproximateNumberOfMessagesDelayed'],
        }

    def purge_forgets_deduplication(self):
        url = self.queue(fifo=True)
        send = lambda body: self.sqs.send_message(  # noqa: E731
            QueueUrl=url, MessageBody=body, MessageGroupId='g', MessageDeduplicationId='d'
        )['MessageId']
        first = send('message-1')
        self.sqs.purge_queue(QueueUrl=url)
        return {'sameMessageIdAfterPurge': send('message-2') == first}

    def batch_answers(self):
        url = self.queue(MaximumMessageSize='1024')

        def lengths(output):
            return {
                'successful': len(output['Successful']) if 'Successful' in output else None,
                'failed': len(output['Failed']) if 'Failed' in output else None,
            }

        sent = self.sqs.send_message_batch(
            QueueUrl=url, Entries=[{'Id': 'a', 'MessageBody': 'a'}, {'Id': 'b', 'MessageBody': 'b'}]
        )
        refused = self.sqs.send_message_batch(QueueUrl=url, Entries=[{'Id': 'big', 'MessageBody': 'x' * 1025}])
        received = self.receive(url, VisibilityTimeout=30)
        handles = [{'Id': 'm%d' % i, 'ReceiptHandle': m['ReceiptHandle']} for i, m in enumerate(received)]
        unknown = [{'Id': 'unknown', 'ReceiptHandle': 'not-a-receipt-handle'}]

        def change(entries):
            entries = [dict(entry, VisibilityTimeout=30) for entry in entries]
            return self.sqs.change_message_visibility_batch(QueueUrl=url, Entries=entries)

        return {
            'sent': lengths(sent),
            'refused': lengths(refused),
            'changed': lengths(change(handles)),
            'changeRefused': lengths(change(unknown)),
            'deleted': lengths(self.sqs.delete_message_batch(QueueUrl=url, Entries=handles)),
            'deleteRefused': lengths(self.sqs.delete_message_batch(QueueUrl=url, Entries=unknown)),
        }


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    scenarios = Scenarios(sys.argv[1])
    print('PROTOCOL=%s' % scenarios.protocol)
    names = [
        'superseded_delete',
        'lapsed_or_superseded_change',
        'fifo_expired_delete',
        'fifo_batch_missing_group',
        'fifo_batch_missing_deduplication',
        'batch_sizes',
        'attribute_name_filters',
        'error_texts',
        'trace_header',
        'attribute_characters',
        'fifo_first_in_flight',
        'fifo_zero_delay',
        'purge_forgets_deduplication',
        'batch_answers',
    ]
    results = {}
    for name in names:
        try:
            results[name] = getattr(scenarios, name)()
        except Exception:  # noqa: BLE001 - reported to the test, which fails that scenario
            results[name] = {'crashed': traceback.format_exc()}
    print('RESULT %s' % json.dumps(results))


if __name__ == '__main__':
    main()
