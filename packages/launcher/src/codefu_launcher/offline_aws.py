"""An AWS stand-in for dry runs: a boto3 session whose calls are answered on this machine.

A dry run executes the real submission code (the SageMaker SDK's own request building,
uploads and all) against this session, so the request it prints cannot drift from the
one a real submission sends. Every call is answered through botocore's `before-call`
event (the mechanism of botocore's Stubber) before any request is built for the network;
a call this module does not know fails the dry run, naming it. The caller's account is
unknown offline: it is `STAND_IN_ACCOUNT`, shown as `<account>` by `with_placeholders`.
"""

from __future__ import annotations

import copy
from typing import Any

STAND_IN_ACCOUNT = "000000000000"
ACCOUNT_PLACEHOLDER = "<account>"


class NotSent(Exception):
    """CreateTrainingJob was reached: the dry run stops before a job would exist."""


class UnknownCall(RuntimeError):
    """The SDK made a call the stand-in does not answer (a newer SDK may do that)."""


# Minimal successful responses of the calls a submission makes, by service.Operation.
ANSWERS: dict[str, dict[str, Any]] = {
    "sts.GetCallerIdentity": {
        "Account": STAND_IN_ACCOUNT,
        "Arn": f"arn:aws:iam::{STAND_IN_ACCOUNT}:user/offline",
        "UserId": "offline",
    },
    "s3.ListBuckets": {"Buckets": []},
    "s3.HeadBucket": {},
    "s3.ListObjectsV2": {"KeyCount": 0},
    "s3.PutObject": {"ETag": '"offline"'},
    "s3.CreateMultipartUpload": {"UploadId": "offline"},
    "s3.UploadPart": {"ETag": '"offline"'},
    "s3.CompleteMultipartUpload": {},
    "ssm.PutParameter": {"Version": 0, "Tier": "Standard"},
}
# Calls answered "access denied": the SDK's role checks (it then proceeds, unverified).
DENIED = frozenset({"iam.GetRole", "iam.SimulatePrincipalPolicy"})


def offline_session(region: str) -> Any:
    """A boto3 Session with stand-in credentials whose every call is answered here."""
    import boto3
    from botocore.awsrequest import AWSResponse

    session = boto3.Session(
        aws_access_key_id="offline", aws_secret_access_key="offline", region_name=region
    )

    def answer(model: Any, **_: Any) -> tuple[Any, dict[str, Any]]:
        name = f"{model.service_model.service_name}.{model.name}"
        if name == "sagemaker.CreateTrainingJob":
            raise NotSent(name)
        if name in DENIED:
            error = {"Error": {"Code": "AccessDenied", "Message": "offline: no IAM access"}}
            return AWSResponse(None, 403, {}, None), error
        if name not in ANSWERS:
            raise UnknownCall(
                f"the dry run does not answer the AWS call {name}; the installed SageMaker "
                "SDK makes calls this launcher does not know (check its version)."
            )
        return AWSResponse(None, 200, {}, None), copy.deepcopy(ANSWERS[name])

    session.events.register("before-call.*.*", answer)
    return session


def with_placeholders(value: Any) -> Any:
    """`value` (JSON-like) with the stand-in account shown as `<account>`."""
    if isinstance(value, str):
        return value.replace(STAND_IN_ACCOUNT, ACCOUNT_PLACEHOLDER)
    if isinstance(value, dict):
        return {k: with_placeholders(v) for k, v in value.items()}
    if isinstance(value, list):
        return [with_placeholders(v) for v in value]
    return value
