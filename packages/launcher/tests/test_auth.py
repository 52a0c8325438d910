"""Ray token auth: every host derives the same token; on SageMaker from Parameter Store."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codefu_launcher.auth import (
    AUTH_MODE_ENV,
    AUTH_PARAMETER_ENV,
    AUTH_REGION_ENV,
    AUTH_SECRET_ENV,
    AuthError,
    auth_environment,
    derive_auth_token,
    store_job_secret,
)


@given(st.text(min_size=1, max_size=100))
def test_every_host_derives_the_same_token_and_never_the_secret(secret: str) -> None:
    env = {AUTH_SECRET_ENV: secret}
    a, b = auth_environment(env, 3), auth_environment(dict(env), 3)
    assert a == b
    assert a["RAY_AUTH_MODE"] == "token"
    assert len(a["RAY_AUTH_TOKEN"]) == 64 and a["RAY_AUTH_TOKEN"] != secret


def test_different_secrets_give_different_tokens() -> None:
    assert derive_auth_token("a") != derive_auth_token("b")


def test_multi_node_without_secret_is_refused_with_the_fix() -> None:
    with pytest.raises(AuthError, match=f"{AUTH_PARAMETER_ENV}.*{AUTH_SECRET_ENV}"):
        auth_environment({}, 2)


def test_single_node_without_secret_gets_a_random_token() -> None:
    a, b = auth_environment({}, 1), auth_environment({}, 1)
    assert a["RAY_AUTH_MODE"] == "token" and a["RAY_AUTH_TOKEN"] != b["RAY_AUTH_TOKEN"]


def test_auth_can_be_disabled_explicitly() -> None:
    assert auth_environment({AUTH_MODE_ENV: "disabled"}, 5) == {"RAY_AUTH_MODE": "disabled"}
    with pytest.raises(AuthError, match="token"):
        auth_environment({AUTH_MODE_ENV: "maybe"}, 1)


def test_hosts_read_the_submitted_secret_version_from_parameter_store(aws: None) -> None:
    import boto3

    session = boto3.Session()
    first_job = store_job_secret(session, "my-run")
    assert first_job == {
        AUTH_PARAMETER_ENV: "/codefu/ray-auth/my-run:1",
        AUTH_REGION_ENV: "us-east-1",
    }
    stored = boto3.client("ssm").get_parameter(Name="/codefu/ray-auth/my-run", WithDecryption=True)
    assert stored["Parameter"]["Type"] == "SecureString"
    secret = stored["Parameter"]["Value"]
    assert len(secret) == 64 and secret not in str(first_job)
    # Two hosts of the job, each with only the job environment, agree on the token.
    host_a, host_b = auth_environment(first_job, 2), auth_environment(dict(first_job), 2)
    assert (
        host_a == host_b == {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": derive_auth_token(secret)}
    )
    # Resubmitting the run writes a new version; hosts of the first job still read theirs.
    second_job = store_job_secret(session, "my-run")
    assert second_job[AUTH_PARAMETER_ENV] == "/codefu/ray-auth/my-run:2"
    assert auth_environment(first_job, 2) == host_a
    assert auth_environment(second_job, 2)["RAY_AUTH_TOKEN"] != host_a["RAY_AUTH_TOKEN"]


def test_an_unreadable_secret_stops_the_host_naming_the_permission(aws: None) -> None:
    from codefu_launcher.host import LaunchError
    from codefu_launcher.plan import PlanOptions, make_plan, parse_resource_config
    from codefu_launcher.run import Launcher, RunSettings

    env = {AUTH_PARAMETER_ENV: "/codefu/ray-auth/never-stored:1", AUTH_REGION_ENV: "us-east-1"}
    with pytest.raises(AuthError, match="ssm:GetParameter"):
        auth_environment(env, 2)
    rc = parse_resource_config({"current_host": "algo-1", "hosts": ["algo-1", "algo-2"]})
    plan = make_plan(rc, {}, PlanOptions(), cpu_count=1)
    with pytest.raises(LaunchError, match="never-stored"):
        Launcher(plan, ["true"], env, RunSettings())
