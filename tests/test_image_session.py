"""`nox -s image`: x86-64 builds, the local base's build arguments, the flags podman needs on
a host like this one, and ECR errors told apart by their AWS error code.

The AWS CLI and Docker are stand-ins on PATH that record their arguments and answer as
the real ones do (the CLI exits 254 with `An error occurred (Code) when calling ...`);
`--engine docker` keeps a podman installed here out of these runs.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from repo import ROOT

sys.path.insert(0, str(ROOT))
from tools import images

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
        [sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "-s", "image", "--",
         "--engine", "docker", *args],
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


NO_ENGINE = "No container engine to build with: Docker's engine does not answer"


def test_missing_repositories_are_created_then_the_build_needs_an_engine(tmp_path: Path) -> None:
    code, out, calls = run_image(tmp_path, "push", DESCRIBE_ERROR="RepositoryNotFoundException")
    assert code != 0 and NO_ENGINE in out
    created = [c for c in calls if c.startswith("aws ecr create-repository")]
    assert [c.split()[-1] for c in created] == [f"codefu-{name}" for name in images.IMAGES]
    assert not any(c.startswith("docker build") for c in calls)


def test_existing_repositories_are_left_alone(tmp_path: Path) -> None:
    code, out, calls = run_image(tmp_path, "push")
    assert code != 0 and NO_ENGINE in out
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


def test_a_local_base_build_installs_from_wheels_only(tmp_path: Path) -> None:
    code, out, calls = run_image(tmp_path, "--dry-run", "--local-base")
    assert code == 0, out
    builds = {
        line.split(" -f ", 1)[1].split()[0]: line
        for line in out.splitlines()
        if line.startswith("docker build")
    }
    assert builds.keys() == set(images.IMAGES.values())
    for line in builds.values():
        assert f"--build-arg BASE_IMAGE={images.base_tag()}" in line
        assert "--build-arg NO_INDEX=--no-index --build-context wheels=" in line
    train = builds[images.IMAGES["train"]]
    assert "-t codefu-train:" in train and "-cpu " in train
    assert "--build-arg PROFILE=cpu --build-arg TRAINER_EXTRAS=train,sagemaker-mlflow" in train
    assert calls == []


def test_images_built_on_the_local_base_are_not_pushed(tmp_path: Path) -> None:
    code, out, calls = run_image(tmp_path, "--local-base", "push")
    assert code != 0 and "push images built on their own bases" in out
    assert calls == []


def test_podman_gets_runc_and_cgroupfs_where_cgroups_are_hybrid_and_no_systemd_runs(
    tmp_path: Path,
) -> None:
    hybrid = tmp_path / "cgroup"
    hybrid.mkdir()
    unified = tmp_path / "unified"
    unified.mkdir()
    (unified / "cgroup.controllers").write_text("cpu memory\n")
    systemd = tmp_path / "systemd"
    options = images.podman_options(hybrid, systemd)
    assert options[-2:] == ("--cgroup-manager", "cgroupfs")
    assert ("--runtime" in options) == (shutil.which("runc") is not None)
    systemd.mkdir()
    assert images.podman_options(unified, systemd) == ()


def test_podman_limits_stay_within_this_hosts_hard_limits() -> None:
    flags = images.podman_limits()
    limits = dict(flag.split("=", 1) for flag in flags if flag != "--ulimit")
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if nofile != resource.RLIM_INFINITY and nofile < images.PODMAN_DEFAULT_LIMIT:
        assert limits["nofile"] == f"{nofile}:{nofile}"
    soft, hard = limits["nproc"].split(":")
    assert soft == hard and int(hard) <= images.PODMAN_NPROC


def test_the_local_base_comes_from_this_hosts_debian_mirror(tmp_path: Path) -> None:
    apt = tmp_path / "apt"
    (apt / "sources.list.d").mkdir(parents=True)
    assert images.debian_mirror(apt=apt) is None  # debootstrap's default then
    (apt / "sources.list").write_text(
        "# a comment\ndeb [arch=amd64] http://mirror.example/debian bookworm main contrib\n"
    )
    assert images.debian_mirror(apt=apt) == "http://mirror.example/debian"
    (apt / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://other.example/debian-security\nSuites: bookworm-security\n"
        "Components: main\n\n"
        "Types: deb\nURIs: http://other.example/debian\nSuites: bookworm bookworm-updates\n"
        "Components: main\n"
    )
    assert images.debian_mirror(apt=apt) == "http://other.example/debian"
