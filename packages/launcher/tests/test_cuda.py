"""The host driver check: CUDA's minimum driver, forward compatibility, the messages."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from codefu_launcher import cuda
from codefu_launcher.cuda import (
    CudaError,
    cuda_environment,
    image_cuda_version,
    parse_driver_version,
    probe_cuda,
)

PROC_535 = (
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024\n"
    "GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04)\n"
)
PROC_OPEN_580 = (
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build\n"
)
IMAGE_ENV = {"CUDA_VERSION": "13.0.2", "LD_LIBRARY_PATH": "/opt/amazon/efa/lib"}


def test_driver_versions_are_read_from_the_kernel_module_and_nvidia_smi() -> None:
    assert parse_driver_version(PROC_535) == (535, 183, 1)
    assert parse_driver_version(PROC_OPEN_580) == (580, 95, 5)
    assert parse_driver_version("570.133.20\n") == (570, 133, 20)
    assert parse_driver_version("") is None
    assert image_cuda_version(IMAGE_ENV) == (13, 0)
    assert image_cuda_version({}) is None


def compat_dir(tmp_path: Path) -> str:
    d = tmp_path / "compat"
    d.mkdir()
    (d / "libcuda.so.580.95.05").write_bytes(b"")
    return str(d)


def test_a_new_enough_driver_changes_nothing(tmp_path: Path) -> None:
    def never(env: Mapping[str, str]) -> tuple[int, str]:
        raise AssertionError("no probe needed")

    d = compat_dir(tmp_path)
    assert cuda_environment(IMAGE_ENV, 8, (580, 65, 6), d, never) == {}
    assert cuda_environment(IMAGE_ENV, 0, (470, 1), d, never) == {}  # CPU host: no check
    assert cuda_environment({}, 8, (470, 1), d, never) == {}  # not a CUDA image


def test_an_older_driver_uses_forward_compatibility_when_cuda_then_works(
    tmp_path: Path,
) -> None:
    seen: list[str] = []

    def works(env: Mapping[str, str]) -> tuple[int, str]:
        seen.append(env["LD_LIBRARY_PATH"])
        return 0, "cuInit 0"

    d = compat_dir(tmp_path)
    changed = cuda_environment(IMAGE_ENV, 8, (535, 183, 1), d, works)
    assert changed == {"LD_LIBRARY_PATH": f"{d}:/opt/amazon/efa/lib"}
    assert seen == [changed["LD_LIBRARY_PATH"]]  # probed with exactly that path


def test_forward_compatibility_refused_by_the_driver_stops_with_what_to_do(
    tmp_path: Path,
) -> None:
    d = compat_dir(tmp_path)
    with pytest.raises(CudaError) as err:
        cuda_environment(IMAGE_ENV, 8, (470, 256, 2), d, lambda env: (804, "cuInit 804"))
    text = str(err.value)
    assert "470.256.2" in text and "CUDA 13.0" in text and ">= 580" in text
    assert "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE" in text


def test_an_image_without_compat_libraries_says_how_to_rebuild(tmp_path: Path) -> None:
    with pytest.raises(CudaError, match="cuda-compat-13-0"):
        cuda_environment(IMAGE_ENV, 8, (535, 1), str(tmp_path / "none"), lambda env: (0, ""))


def test_a_gpu_host_without_a_driver_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cuda, "host_driver_version", lambda: None)
    with pytest.raises(CudaError, match="no NVIDIA driver is loaded"):
        cuda_environment(IMAGE_ENV, 8, None, compat_dir(tmp_path), lambda env: (0, ""))


def test_the_probe_reports_cuinit_or_a_missing_libcuda(tmp_path: Path) -> None:
    """The real probe, in a fresh interpreter: cuInit's code, or -1 without libcuda."""
    fake = tmp_path / "lib"
    fake.mkdir()
    code, output = probe_cuda({"LD_LIBRARY_PATH": str(fake), "PATH": "/usr/bin:/bin"})
    if code == cuda.LIBCUDA_MISSING:
        assert output.startswith("load ")
    else:  # a machine with an NVIDIA driver: cuInit answered
        assert output == f"cuInit {code}"


def test_the_launcher_fails_the_job_naming_the_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codefu_launcher.plan import PlanOptions, make_plan, parse_resource_config
    from codefu_launcher.run import Launcher, RunSettings

    monkeypatch.setattr(cuda, "host_driver_version", lambda: (470, 256, 2))
    monkeypatch.setattr(cuda, "COMPAT_DIR", str(tmp_path / "none"))
    rc = parse_resource_config(
        {
            "current_host": "algo-1",
            "hosts": ["algo-1"],
            "instance_groups": [
                {
                    "instance_group_name": "g",
                    "instance_type": "ml.p4de.24xlarge",
                    "hosts": ["algo-1"],
                }
            ],
        }
    )
    env = {**IMAGE_ENV, "SM_NUM_GPUS": "8", "PATH": "/usr/bin:/bin"}
    plan = make_plan(rc, env, PlanOptions(), cpu_count=2)
    failure = tmp_path / "failure"
    launcher = Launcher(plan, ["never-run"], env, RunSettings(failure_file=str(failure)))
    assert launcher.run() == 1
    text = failure.read_text()
    assert text.startswith("codefu-launcher: algo-1: The host's NVIDIA driver 470.256.2")
    assert "cuda-compat-13-0" in text
