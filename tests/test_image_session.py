"""`nox -s image`: x86-64 builds, and ECR errors told apart by their AWS error code.

The AWS CLI and Docker are stand-ins on PATH that record their arguments and answer as
the real ones do (the CLI exits 254 with `An error occurred (Code) when calling ...`).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from repo import ROOT

FAKE_AWS = """#!/bin/bash
echo "aws $*" >> "$CALLS"
case "$1 $2" in
  "ecr describe-repositories")
    [ -n "$DESCRIBE_ERROR" ] || exit 0
    echo "An error occurred ($DESCRIBE_ERROR) when calling the DescribeRepositories operation: \
$DESCRIBE_ERROR for $*" >&2
    exit 254 ;;
  "ecr create-repository")
    [ -n "$CREATE_ERROR" ] || exit 0
    echo "An error occurred ($CREATE_ERROR) when calling the CreateRepository operation: \
$CREATE_ERROR for $*" >&2
    exit 254 ;;
esac
exit 0
"""
FAKE_DOCKER = """#!/bin/bash
echo "docker $*" >> "$CALLS"
[ "$1" = info ] && exit 1  # no engine: nothing is built
exit 0
"""


def run_image(tmp_path: Path, *args: str, **errors: str) -> tuple[int, str, list[str]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, text in (("aws", FAKE_AWS), ("docker", FAKE_DOCKER)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    calls = tmp_path / "calls.txt"
    calls.write_text("")
    env = {
        "PATH": f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "CALLS": str(calls),
        "AWS_ACCOUNT_ID": "123456789012",
        "AWS_REGION": "eu-west-1",
        **errors,
    }
    proc = subprocess.run(
        [sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "-s", "image", "--", *args],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=120, check=False,
    )  # fmt: skip
    return proc.returncode, proc.stderr + proc.stdout, calls.read_text().splitlines()


def test_dry_run_builds_for_linux_amd64(tmp_path: Path) -> None:
    code, out, calls = run_image(tmp_path, "--dry-run", "push")
    assert code == 0, out
    builds = [line for line in out.splitlines() if line.startswith("docker build")]
    assert len(builds) == 2
    assert all("--platform linux/amd64" in line for line in builds)
    assert calls == []  # a dry run runs nothing


def test_missing_repositories_are_created_then_the_build_needs_an_engine(tmp_path: Path) -> None:
    code, out, calls = run_image(tmp_path, "push", DESCRIBE_ERROR="RepositoryNotFoundException")
    assert code != 0 and "No Docker engine" in out
    created = [c for c in calls if c.startswith("aws ecr create-repository")]
    assert [c.split()[-1] for c in created] == ["codefu-train", "codefu-judge"]
    assert not any(c.startswith("docker build") for c in calls)


def test_existing_repositories_are_left_alone(tmp_path: Path) -> None:
    code, out, calls = run_image(tmp_path, "push")
    assert code != 0 and "No Docker engine" in out
    assert not any("create-repository" in c for c in calls)


@pytest.mark.parametrize(
    "errors",
    [
        {"DESCRIBE_ERROR": "AccessDeniedException"},
        {"DESCRIBE_ERROR": "RepositoryNotFoundException", "CREATE_ERROR": "AccessDeniedException"},
    ],
    ids=["describe", "create"],
)
def test_any_other_aws_error_stops_with_its_message(tmp_path: Path, errors: dict[str, str]) -> None:
    code, out, calls = run_image(tmp_path, "push", **errors)
    assert code != 0
    assert "An error occurred (AccessDeniedException)" in out
    assert not any(c.startswith("docker") for c in calls)  # stopped before building
