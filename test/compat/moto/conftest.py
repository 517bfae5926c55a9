# Sluice's harness for moto's SNS tests (not part of moto): see NOTICE and docs/guide/sns.md#compatibility.
#
# moto's `sns_sqs_aws_verified` decorator asks STS for the caller's account to build the queue's ARN. Sluice
# serves SQS and SNS, not STS, so GetCallerIdentity is answered here, in the client, with the account Sluice
# was started with (`--account`, SLUICE_ACCOUNT here). Nothing else is intercepted: every SNS and SQS call
# goes to Sluice over HTTP.
import os

import boto3
from botocore.awsrequest import AWSResponse

ACCOUNT = os.environ.get("SLUICE_ACCOUNT", "123456789012")


def _caller_identity(**_kwargs):
    return (
        AWSResponse("http://sts.sluice.invalid/", 200, {}, None),
        {
            "Account": ACCOUNT,
            "Arn": f"arn:aws:iam::{ACCOUNT}:user/sluice",
            "UserId": "SLUICE",
            "ResponseMetadata": {"HTTPStatusCode": 200},
        },
    )


boto3.setup_default_session()
boto3.DEFAULT_SESSION.events.register("before-call.sts.GetCallerIdentity", _caller_identity)


# The tests listed in deselected.txt (with why) are left out; a line naming no collected test fails the run, so
# the list cannot go stale silently.
_LIST = os.path.join(os.path.dirname(__file__), "deselected.txt")


def _deselected():
    reasons = {}
    with open(_LIST, encoding="utf-8") as listing:
        for line in listing:
            line = line.strip()
            if line and not line.startswith("#"):
                node, _, reason = line.partition("#")
                reasons[node.strip()] = reason.strip()
    return reasons


def pytest_configure(config):
    config.addinivalue_line("markers", "aws_verified: moto's mark for tests it has run against AWS")


def pytest_collection_modifyitems(config, items):
    reasons = _deselected()
    keep, drop = [], []
    for item in items:
        (drop if item.nodeid in reasons else keep).append(item)
    unknown = set(reasons) - {item.nodeid for item in drop}
    if unknown and not config.getoption("keyword") and not config.getoption("markexpr"):
        raise RuntimeError(f"deselected.txt names tests that were not collected: {sorted(unknown)}")
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
