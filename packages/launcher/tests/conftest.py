"""Shared fixtures: an AWS account served by moto, a machine with no network at all, and the
network-namespace hosts of the end-to-end tests (netns_cluster.py)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
        wait_for_sdk_telemetry()


def wait_for_sdk_telemetry() -> None:
    """Let the SageMaker SDK's usage-telemetry threads (one per submission) finish."""
    for thread in threading.enumerate():
        if thread.name == "sagemaker-telemetry":
            thread.join(timeout=30)


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No AWS configuration, and no connection may be opened (the SDK's telemetry included)."""
    for key in ("SAGEMAKER_ROLE_ARN", "AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(key, raising=False)
    wait_for_sdk_telemetry()  # earlier tests' threads are not this test's connections
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_REGION", "eu-west-1")  # boto3 itself reads AWS_DEFAULT_REGION only
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    attempts: list[Any] = []

    def no_connection(sock: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise OSError("offline test: no connections")

    def no_lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
        attempts.append(host)
        raise socket.gaierror("offline test: no name lookups")

    monkeypatch.setattr(socket.socket, "connect", no_connection)
    monkeypatch.setattr(socket, "getaddrinfo", no_lookup)
    yield
    wait_for_sdk_telemetry()
    assert attempts == [], "the dry run tried to connect"


@pytest.fixture(scope="module")
def hosts() -> Iterator[Any]:
    """The network-namespace hosts of the end-to-end tests (netns_cluster.py), per module."""
    from .netns_cluster import namespaces

    yield from namespaces()


@pytest.fixture
def job(hosts: Any) -> Iterator[Any]:
    """A job over those hosts (netns_cluster.Job)."""
    from .netns_cluster import job_on

    yield from job_on(hosts)
