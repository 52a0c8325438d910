"""The run shell's decisions: entrypoint environment, failure file, exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from codefu_launcher.auth import AUTH_SECRET_ENV
from codefu_launcher.host import LaunchError, exit_code_of, resolve_host
from codefu_launcher.pass_env import minimal_environment
from codefu_launcher.run import write_failure


def test_minimal_environment_is_an_allow_list() -> None:
    env = {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "SM_CHANNEL_TRAIN": "/opt/ml/input/data/train",
        "NCCL_DEBUG": "WARN",
        "FI_PROVIDER": "efa",
        "CODEFU_RUN": "1",
        AUTH_SECRET_ENV: "secret",
        "RAY_AUTH_TOKEN": "stale",
        "UNRELATED": "x",
        "MY_TOOL_SETTING": "y",
        "CODEFU_PASS_ENV": "MY_TOOL_SETTING, ",
    }
    out = minimal_environment(env, extra=["OTHER"])
    assert out == {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "SM_CHANNEL_TRAIN": "/opt/ml/input/data/train",
        "NCCL_DEBUG": "WARN",
        "FI_PROVIDER": "efa",
        "CODEFU_RUN": "1",
        "CODEFU_PASS_ENV": "MY_TOOL_SETTING, ",
        "MY_TOOL_SETTING": "y",
    }


def test_exit_codes() -> None:
    assert exit_code_of(0) == 0 and exit_code_of(3) == 3 and exit_code_of(-15) == 143


def test_failure_file_first_reason_wins(tmp_path: Path) -> None:
    path = tmp_path / "out" / "failure"
    write_failure(str(path), "first")
    write_failure(str(path), "second")
    assert path.read_text() == "first\n"


def test_resolve_retries_then_names_the_host() -> None:
    slept: list[float] = []
    with pytest.raises(LaunchError, match=r"no-such-host\.invalid"):
        resolve_host("no-such-host.invalid", timeout=3.0, sleep=slept.append)
    assert slept and slept == sorted(slept)  # backoff grows


def test_what_a_submission_sets_reaches_ray_and_the_entrypoint_but_no_secret(
    tmp_path: Path,
) -> None:
    """The job environment a submission builds, read by the launcher on a host."""
    from codefu_launcher.plan import PlanOptions, make_plan, parse_resource_config
    from codefu_launcher.run import Launcher, RunSettings
    from codefu_launcher.submit import JobSpec, job_environment

    user = {
        "RAY_DEDUP_LOGS": "0",
        "GLOO_SOCKET_IFNAME": "eth0",
        "RDMAV_FORK_SAFE": "1",
        "MY_TOOL_SETTING": "7",  # no known prefix: passes because the user set it
    }
    spec = JobSpec("j", "img", instance_type="ml.p4de.24xlarge", environment=user)
    job_env = {
        **job_environment(spec),
        "PATH": "/usr/bin",
        "SAGEMAKER_INTERNAL_THING": "x",  # the container's own: stays out
        AUTH_SECRET_ENV: "job-secret",
        "RAY_AUTH_TOKEN": "stale",
    }
    rc = parse_resource_config(
        {
            "current_host": "algo-1",
            "hosts": ["algo-1"],
            "instance_groups": [
                {
                    "instance_group_name": "homogeneousCluster",
                    "instance_type": "ml.p4de.24xlarge",
                    "hosts": ["algo-1"],
                }
            ],
        }
    )
    plan = make_plan(rc, job_env, PlanOptions(), cpu_count=4)
    launcher = Launcher(plan, ["x"], job_env, RunSettings(failure_file=str(tmp_path / "f")))
    for env in (launcher.base_env, launcher.ray_env()):
        assert {k: env[k] for k in user} == user
        assert env["FI_PROVIDER"] == "efa"  # the submission's NCCL/EFA defaults too
        assert AUTH_SECRET_ENV not in env and "SAGEMAKER_INTERNAL_THING" not in env
    assert launcher.ray_env()["RAY_AUTH_TOKEN"] != "stale"  # derived from the job secret
    assert "RAY_AUTH_TOKEN" not in launcher.base_env


def test_an_unpassed_name_is_logged_without_its_value(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from codefu_launcher.plan import PlanOptions, make_plan, parse_resource_config
    from codefu_launcher.run import Launcher, RunSettings

    rc = parse_resource_config(
        {
            "current_host": "algo-1",
            "hosts": ["algo-1"],
            "instance_groups": [
                {"instance_group_name": "g", "instance_type": "ml.c5.xlarge", "hosts": ["algo-1"]}
            ],
        }
    )
    env = {"PATH": "/bin", "ODD_SETTING": "value-123", "CODEFU_PASS_ENV": "LISTED_BUT_ABSENT"}
    plan = make_plan(rc, env, PlanOptions(), cpu_count=1)
    with caplog.at_level("INFO", logger="codefu_launcher"):
        Launcher(plan, ["x"], env, RunSettings(failure_file=str(tmp_path / "f")))
    assert "ODD_SETTING" in caplog.text and "value-123" not in caplog.text
    assert "LISTED_BUT_ABSENT" in caplog.text


def test_the_head_says_how_to_reach_its_dashboard() -> None:
    from codefu_launcher.plan import PlanOptions, make_plan, parse_resource_config
    from codefu_launcher.run import dashboard_hint

    groups = [
        {"instance_group_name": "judge", "instance_type": "ml.c7i.24xlarge", "hosts": ["algo-1"]},
        {"instance_group_name": "train", "instance_type": "ml.p4de.24xlarge", "hosts": ["algo-2"]},
    ]
    env = {"TRAINING_JOB_NAME": "codefu-grpo-hetero-1a2b3c-20261125030000"}
    for current in ("algo-1", "algo-2"):
        rc = parse_resource_config(
            {"current_host": current, "hosts": ["algo-1", "algo-2"], "instance_groups": groups}
        )
        options = PlanOptions(head_instance_group="train", dashboard_port=8300)
        plan = make_plan(rc, env, options, cpu_count=4)
        hint = dashboard_hint(plan, env)
        if current == "algo-1":  # a judge host: not the head here
            assert hint is None
        else:
            assert hint is not None
            assert (
                "--target sagemaker-training-job:codefu-grpo-hetero-1a2b3c-20261125030000_algo-2"
                in hint
            )
            assert '{"portNumber":["8300"],"localPortNumber":["8300"]}' in hint
