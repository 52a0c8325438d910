"""Shared fixtures: an offline AWS account (moto) with fake credentials."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

REGION = "us-east-1"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every boto3 call of the test is served by moto in this process."""
    moto = pytest.importorskip("moto")
    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
        "SAGEMAKER_VALIDATE_ROLE": "false",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.delenv("SAGEMAKER_ROLE_ARN", raising=False)
    with moto.mock_aws():
        yield
