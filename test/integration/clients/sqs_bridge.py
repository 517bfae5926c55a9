#!/usr/bin/env python3
"""One boto3 client, driven a call at a time over stdin and stdout, so a test can check one behaviour at
a time without paying boto3's start-up for every call.

Usage: sqs_bridge.py ENDPOINT

Prints `PROTOCOL=<query|json>` first. Then reads lines of JSON, {"action": "CreateQueue", "input": {...}}
with the API's member names, and answers each with one line: {"output": {...}} (ResponseMetadata left
out) or {"error": {"code": ..., "message": ..., "status": ...}}, as the client exposes the error.

Debian's botocore 1.29 predates the message move-task actions (2023). They are added to a copy of its
own SQS model (through AWS_DATA_PATH, botocore's documented way to extend its models), in the Query
shapes AWS's model gives them, so the same client serializes and parses them as it does the rest.
Python 3.9 syntax.
"""

import json
import os
import sys
import tempfile

MOVE_TASK_SHAPES = {
    'BridgeMoveTaskString': {'type': 'string'},
    'BridgeMoveTaskInteger': {'type': 'integer'},
    'BridgeMoveTaskLong': {'type': 'long'},
    'StartMessageMoveTaskRequest': {
        'type': 'structure',
        'required': ['SourceArn'],
        'members': {
            'SourceArn': {'shape': 'BridgeMoveTaskString'},
            'DestinationArn': {'shape': 'BridgeMoveTaskString'},
            'MaxNumberOfMessagesPerSecond': {'shape': 'BridgeMoveTaskInteger'},
        },
    },
    'StartMessageMoveTaskResult': {
        'type': 'structure',
        'members': {'TaskHandle': {'shape': 'BridgeMoveTaskString'}},
    },
    'CancelMessageMoveTaskRequest': {
        'type': 'structure',
        'required': ['TaskHandle'],
        'members': {'TaskHandle': {'shape': 'BridgeMoveTaskString'}},
    },
    'CancelMessageMoveTaskResult': {
        'type': 'structure',
        'members': {'ApproximateNumberOfMessagesMoved': {'shape': 'BridgeMoveTaskLong'}},
    },
    'ListMessageMoveTasksRequest': {
        'type': 'structure',
        'required': ['SourceArn'],
        'members': {
            'SourceArn': {'shape': 'BridgeMoveTaskString'},
            'MaxResults': {'shape': 'BridgeMoveTaskInteger'},
        },
    },
    'ListMessageMoveTasksResultEntry': {
        'type': 'structure',
        'members': {
            'TaskHandle': {'shape': 'BridgeMoveTaskString'},
            'Status': {'shape': 'BridgeMoveTaskString'},
            'SourceArn': {'shape': 'BridgeMoveTaskString'},
            'DestinationArn': {'shape': 'BridgeMoveTaskString'},
            'MaxNumberOfMessagesPerSecond': {'shape': 'BridgeMoveTaskInteger'},
            'ApproximateNumberOfMessagesMoved': {'shape': 'BridgeMoveTaskLong'},
            'ApproximateNumberOfMessagesToMove': {'shape': 'BridgeMoveTaskLong'},
            'FailureReason': {'shape': 'BridgeMoveTaskString'},
            'StartedTimestamp': {'shape': 'BridgeMoveTaskLong'},
        },
    },
    'ListMessageMoveTasksResultEntryList': {
        'type': 'list',
        'member': {'shape': 'ListMessageMoveTasksResultEntry', 'locationName': 'ListMessageMoveTasksResultEntry'},
        'flattened': True,
    },
    'ListMessageMoveTasksResult': {
        'type': 'structure',
        'members': {
            'Results': {
                'shape': 'ListMessageMoveTasksResultEntryList',
                'locationName': 'ListMessageMoveTasksResultEntry',
            },
        },
    },
}


def with_move_tasks():
    """Points botocore at a copy of its SQS model with the move-task operations, if it lacks them."""
    import botocore

    version = '2012-11-05'
    source = os.path.join(os.path.dirname(botocore.__file__), 'data', 'sqs', version, 'service-2.json')
    if not os.path.exists(source):
        return  # a newer botocore, whose (compressed) model has them
    with open(source, encoding='utf-8') as f:
        model = json.load(f)
    if 'StartMessageMoveTask' in model['operations'] or model['metadata'].get('protocol') != 'query':
        return
    for name in ('StartMessageMoveTask', 'CancelMessageMoveTask', 'ListMessageMoveTasks'):
        model['operations'][name] = {
            'name': name,
            'http': {'method': 'POST', 'requestUri': '/'},
            'input': {'shape': name + 'Request'},
            'output': {'shape': name + 'Result', 'resultWrapper': name + 'Result'},
        }
    model['shapes'].update(MOVE_TASK_SHAPES)
    root = tempfile.mkdtemp(prefix='sqs-bridge-model-')
    target = os.path.join(root, 'sqs', version)
    os.makedirs(target)
    with open(os.path.join(target, 'service-2.json'), 'w', encoding='utf-8') as f:
        json.dump(model, f)
    os.environ['AWS_DATA_PATH'] = root


def main():
    endpoint = sys.argv[1]
    with_move_tasks()
    import boto3
    from botocore import xform_name
    from botocore.config import Config
    from botocore.exceptions import ClientError, ParamValidationError

    sqs = boto3.client('sqs', endpoint_url=endpoint, config=Config(retries={'max_attempts': 1}))
    protocol = sqs.meta.service_model.protocol
    print('PROTOCOL=%s' % ('json' if protocol == 'json' else 'query'), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            output = getattr(sqs, xform_name(request['action']))(**request['input'])
            output.pop('ResponseMetadata', None)
            answer = {'output': output}
        except ClientError as e:
            error = e.response.get('Error', {})
            answer = {
                'error': {
                    'code': error.get('Code'),
                    'message': error.get('Message'),
                    'status': e.response.get('ResponseMetadata', {}).get('HTTPStatusCode'),
                }
            }
        except ParamValidationError as e:
            answer = {'error': {'code': 'ParamValidationError', 'message': str(e), 'status': None}}
        print(json.dumps(answer, default=str), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
