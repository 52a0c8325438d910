"""codefu-train's command line: errors start nothing; dispatch per cluster kind."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from codefu_trainer.run.gpu import visible_gpu_count
from codefu_trainer.training.cli import main

from ..conftest import CONF


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["--config-dir", str(CONF), *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_unknown_cluster_option_lists_the_valid_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(["cluster=nonexistent", f"run.root_dir={tmp_path}"], capsys)
    assert code == 2
    assert "'nonexistent' is not an option of the config group 'cluster'" in err
    for option in ("cpu", "local", "sagemaker_hetero", "sagemaker_p4de", "sagemaker_p5"):
        assert option in err
    assert "Nothing was started" in err
    assert not any(tmp_path.iterdir())


def test_unknown_cluster_key_lists_the_valid_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(["cluster.bogus=1", f"run.root_dir={tmp_path}"], capsys)
    assert code == 2
    assert "'bogus' is not a key of cluster" in err
    for key in ("gpus_per_node", "kind", "name", "nnodes"):
        assert key in err
    # Only a cluster of kind sagemaker has the SageMaker settings.
    code, _, err = _run(["cluster=sagemaker_p4de", "cluster.bogus=1"], capsys)
    assert code == 2 and "sagemaker" in err.split("Valid keys there:")[1]
    assert not any(tmp_path.iterdir())


def test_sagemaker_settings_on_another_kind_are_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _run(["cluster=local", "cluster.sagemaker.dry_run=false"], capsys)
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert "cluster.sagemaker.dry_run=false: cluster.sagemaker.* are the settings" in line
    assert "cluster=local is of kind local" in line
    assert "cluster=sagemaker_hetero, cluster=sagemaker_p4de, cluster=sagemaker_p5" in line


def test_local_without_gpu_stops_before_anything_and_points_to_the_rehearsal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert visible_gpu_count() == 0
    code, _, err = _run(["cluster=local", f"run.root_dir={tmp_path}"], capsys)
    assert code == 3
    assert "has none" in err and "cluster=cpu" in err and "nox -s prepare" in err
    assert "Nothing was started" in err
    assert not any(tmp_path.iterdir())


def test_console_script_reports_no_gpu(tmp_path: Path) -> None:
    """The installed entry point, as `nox -s train -- cluster=local` runs it."""
    exe = Path(sys.executable).with_name("codefu-train")
    env = {
        "PATH": str(exe.parent) + ":/usr/bin:/bin",
        "CUDA_VISIBLE_DEVICES": "",
        "HOME": str(tmp_path),
    }
    proc = subprocess.run(
        [str(exe), "--config-dir", str(CONF), "cluster=local"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    assert "nox -s train -- cluster=cpu" in proc.stderr
    assert not (tmp_path / "runs").exists()


def test_cpu_without_prepared_data_says_to_run_prepare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(
        ["cluster=cpu", f"data.out_dir={tmp_path / 'none'}", f"run.dir={tmp_path / 'r'}"], capsys
    )
    assert code == 3
    assert "nox -s prepare" in err


def test_check_prints_both_configs(
    tmp_path: Path, gpu_sized_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(
        [
            "--check",
            "cluster=sagemaker_p5",
            f"run.dir={tmp_path}",
            f"data.out_dir={gpu_sized_data}",
        ],
        capsys,
    )
    assert code == 0, err
    assert "ml.p5.48xlarge" in out and "adv_estimator: grpo" in out
    assert "nothing started" in err


DryRun = Callable[..., tuple[dict[str, Any], str]]
IMAGE_OVERRIDE = (
    "cluster.sagemaker.image_uri=123.dkr.ecr.us-east-1.amazonaws.com/codefu-train:0.1.0"
)


@pytest.fixture
def sagemaker_dry_run(
    gpu_sized_data: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> DryRun:
    """`codefu-train cluster=sagemaker_p4de ...` without a role: the printed JSON, stderr."""
    monkeypatch.delenv("SAGEMAKER_ROLE_ARN", raising=False)

    def dry_run(run_dir: Path, *overrides: str) -> tuple[dict[str, Any], str]:
        data = f"data.out_dir={gpu_sized_data}"
        argv = ["cluster=sagemaker_p4de", IMAGE_OVERRIDE, data, f"run.dir={run_dir}", *overrides]
        code, out, err = _run(argv, capsys)
        assert code == 0, err
        assert "DRY RUN" in err
        return json.loads(out[out.index("{") :]), err

    return dry_run


def test_sagemaker_dry_run_prints_the_request_and_leaves_nothing_behind(
    tmp_path: Path, gpu_sized_data: Path, sagemaker_dry_run: DryRun
) -> None:
    run_dir = tmp_path / "run"
    printed, _ = sagemaker_dry_run(run_dir, "trainer.total_epochs=2")
    entry = printed["resolved_spec"]["entrypoint"]
    assert entry[:3] == ["codefu-train", "--config-dir", "."]
    assert "cluster=sagemaker_p4de" in entry and "trainer.total_epochs=2" in entry
    assert entry[-1] == "cluster.kind=local"
    assert printed["resolved_spec"]["input_channels"] == {"easy": str(gpu_sized_data / "easy")}
    assert printed["resolved_spec"]["instance_type"] == "ml.p4de.24xlarge"
    assert not run_dir.exists()  # a dry run leaves nothing behind


def test_a_dry_run_is_quiet_unless_verbose(
    tmp_path: Path,
    sagemaker_dry_run: DryRun,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The SDK's INFO lines and its warning about the unset role only with --verbose."""
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    caplog.set_level(logging.INFO)
    _, err = sagemaker_dry_run(cwd / "run")
    assert not [r for r in caplog.records if r.name.startswith("sagemaker")]
    assert "DRY RUN" in err and "No role: set SAGEMAKER_ROLE_ARN" in err
    assert list(cwd.iterdir()) == []  # no run directory, no runs/
    sagemaker_dry_run(cwd / "run", "--verbose")
    assert any("Could not verify permissions" in r.getMessage() for r in caplog.records)


def test_sagemaker_dry_runs_of_one_run_name_share_checkpoints_and_carry_no_secret(
    tmp_path: Path, sagemaker_dry_run: DryRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Resubmitting a run.name resumes it: the same checkpoint URI; no secret anywhere."""
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)

    first, err = sagemaker_dry_run(tmp_path / "1", "run.name=exp-a")
    second, _ = sagemaker_dry_run(tmp_path / "2", "run.name=exp-a")
    other, _ = sagemaker_dry_run(tmp_path / "3", "run.name=b")
    for printed in (first, second, other):
        for env in (printed["request"]["Environment"], printed["resolved_spec"]["environment"]):
            assert not {"CODEFU_RAY_AUTH_SECRET", "RAY_AUTH_TOKEN"} & set(env)
            assert not [v for v in env.values() if re.fullmatch("[0-9a-f]{32,}", v)]
    bucket = "s3://sagemaker-us-west-2-<account>"
    assert first["request"]["CheckpointConfig"]["S3Uri"] == f"{bucket}/exp-a/checkpoints"
    assert second["request"]["CheckpointConfig"] == first["request"]["CheckpointConfig"]
    assert other["request"]["CheckpointConfig"]["S3Uri"] == f"{bucket}/b/checkpoints"
    assert first["request"]["RetryStrategy"] == {"MaximumRetryAttempts": 3}
    assert first["request"]["Environment"]["CODEFU_RAY_AUTH_PARAMETER"] == (
        "/codefu/ray-auth/exp-a:0"
    )
    assert "run.dir=/opt/ml/output/data/exp-a" in first["resolved_spec"]["entrypoint"]
    assert f"resumes from the newest checkpoint under {bucket}/exp-a/checkpoints" in err


def test_sagemaker_submission_without_role_says_what_to_set(
    tmp_path: Path,
    gpu_sized_data: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("SAGEMAKER_ROLE_ARN", raising=False)
    code, _, err = _run(
        [
            "cluster=sagemaker_hetero",
            "cluster.sagemaker.dry_run=false",
            IMAGE_OVERRIDE,
            f"data.out_dir={gpu_sized_data}",
            f"run.dir={tmp_path / 'run'}",
        ],
        capsys,
    )
    assert code == 3
    assert "SAGEMAKER_ROLE_ARN" in err and "Nothing was submitted" in err
