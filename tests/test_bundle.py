"""The offline install bundle (`nox -s bundle`, docs/bundle.md).

The end-to-end test makes the CPU twin of the GPU path's bundle for this machine (CPython
3.11, manylinux x86-64) without torch, as a training image's base environment holds it, and
installs it into a fresh venv with no package index: the base there is torch alone, installed
from the `+cpu` wheel the suites install (pip's configured wheel folder, through uv's cache).
The bundle install uses uv's `--no-index --find-links` with uv offline: the contract of the
`pip install --no-index --find-links` the bundle's README gives, in about a third of pip's
time on 2 cores (docs/bundle.md says what was checked with pip by hand). Then the commands
run: `codefu-train --help`, `import verl, ray`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from repo import ROOT, lock_pins

sys.path.insert(0, str(ROOT))
from noxfile import find_links_args
from tools.bundle import (
    excluded_by_base,
    parse_base,
    parse_resolution,
    target_tags,
    wheel_fits,
)


def test_a_freeze_file_and_names_give_the_base_environment() -> None:
    lines = [
        "# pip freeze of the base image",
        "-e git+https://example.invalid/x#egg=x",
        "torch==2.11.0+cu130",
        "Transformers @ file:///wheels/transformers-5.9.0-py3-none-any.whl",
        "nvidia_nccl_cu13===2.28.3",
        "ray[default]",
        "",
    ]
    assert parse_base(lines) == {
        "torch": "2.11.0+cu130",
        "transformers": None,
        "nvidia-nccl-cu13": "2.28.3",
        "ray": None,
    }
    with pytest.raises(ValueError, match="neither a requirement name"):
        parse_base(["./local/folder"])


def test_what_only_the_base_needs_is_left_out_and_shared_needs_stay() -> None:
    resolution = """\
filelock==3.20.0
    # via
    #   huggingface-hub
    #   torch
huggingface-hub==1.2.0
    # via codefu-trainer (packages/trainer/pyproject.toml)
ninja==1.13.0
    # via -r bundle.in
nvidia-cublas==13.1.0
    # via
    #   nvidia-cudnn-cu13
    #   torch
nvidia-cudnn-cu13==9.15.1
    # via torch
torch==2.11.0
    # via vllm
vllm==0.24.0
    # via codefu-trainer
"""
    pins, needed_by = parse_resolution(resolution)
    assert pins["torch"] == "2.11.0" and needed_by["nvidia-cublas"] == {
        "nvidia-cudnn-cu13",
        "torch",
    }
    excluded = excluded_by_base(pins, needed_by, {"torch": None, "numpy": "2.0"})
    assert excluded == {
        "torch": "in the base environment",
        "nvidia-cudnn-cu13": "needed only by torch",
        "nvidia-cublas": "needed only by nvidia-cudnn-cu13, torch",
    }


def test_target_tags_take_older_manylinux_wheels_and_only_the_target_python() -> None:
    tags = target_tags("3.12", "manylinux_2_28_x86_64")
    assert wheel_fits("numpy-2.3.5-cp312-cp312-manylinux_2_27_x86_64.whl", tags)
    assert wheel_fits("pyyaml-6.0.3-cp312-cp312-manylinux2014_x86_64.whl", tags)
    assert wheel_fits("vllm-0.24.0-cp38-abi3-manylinux_2_28_x86_64.whl", tags)
    assert wheel_fits("six-1.17.0-py2.py3-none-any.whl", tags)
    assert not wheel_fits("numpy-2.3.5-cp311-cp311-manylinux_2_28_x86_64.whl", tags)
    assert not wheel_fits("x-1.0-cp312-cp312-manylinux_2_34_x86_64.whl", tags)
    assert not wheel_fits("x-1.0-cp312-cp312-manylinux_2_28_aarch64.whl", tags)
    assert not wheel_fits("x-1.0-cp312-cp312-linux_x86_64.whl", tags)
    # A wheel given with --wheels was built on a host like the target: its local tag is taken.
    there = target_tags("3.12", "manylinux_2_28_x86_64", built_there=True)
    assert wheel_fits("flash_attn-2.8.3-cp312-cp312-linux_x86_64.whl", there)
    assert not wheel_fits("flash_attn-2.8.3-cp311-cp311-linux_x86_64.whl", there)
    assert not wheel_fits("flash_attn-2.8.3-cp312-cp312-linux_aarch64.whl", there)


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, capture_output=True, text=True, timeout=600, check=False, cwd=ROOT, env=env
    )


@pytest.mark.slow
def test_the_cpu_bundle_installs_offline_beside_a_torch_base_and_runs(tmp_path: Path) -> None:
    uv = shutil.which("uv")
    assert uv, "uv is installed with the repository tests (nox -s tests)"
    bundle = tmp_path / "bundle"
    nox_env = {k: v for k, v in os.environ.items() if not k.startswith("NOX")}
    done = _run(
        sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "-s", "bundle", "--",
        "--profile", "cpu", "--exclude", "torch", "--out", str(bundle), env=nox_env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert manifest["excluded"]["torch"] == "in the base environment"
    assert manifest["missing"] == {} and manifest["from_source"] == {}
    files = set(manifest["files"])
    assert files == {p.name for p in bundle.iterdir()} - {
        "manifest.json",
        "README.md",
        "requirements.txt",
    }
    assert not [f for f in files if f.startswith("torch-")]
    assert all(
        any(f.startswith(f"codefu_{p}-") for f in files)
        for p in ("sandbox", "data", "trainer", "launcher")
    )
    readme = (bundle / "README.md").read_text()
    assert "pip install --no-index --find-links DIR -r DIR/requirements.txt" in readme
    for text in (readme, (bundle / "manifest.json").read_text()):
        assert "://" not in text, "the bundle's notes must not name package index hosts"

    venv = tmp_path / "fresh"
    python = str(venv / "bin" / "python")
    assert _run(uv, "venv", "--quiet", "--python", "3.11", str(venv)).returncode == 0
    torch_pin = f"torch=={lock_pins('cpu')['torch']}"
    base = _run(uv, "pip", "install", "--quiet", "--python", python, torch_pin,
                "-c", str(ROOT / "locks" / "cpu.txt"), *find_links_args("cpu"))  # fmt: skip
    assert base.returncode == 0, base.stderr
    offline = {**os.environ, "UV_OFFLINE": "1"}
    offline = {
        k: v
        for k, v in offline.items()
        if not k.startswith(("UV_FIND_LINKS", "UV_INDEX", "UV_EXTRA_INDEX"))
    }
    installed = _run(
        uv, "pip", "install", "--quiet", "--python", python, "--no-index", "--find-links",
        str(bundle), "-r", str(bundle / "requirements.txt"), env=offline,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr

    helped = _run(str(venv / "bin" / "codefu-train"), "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: codefu-train"), helped.stderr
    imported = _run(
        python,
        "-c",
        "import verl, ray, torch; print(verl.__version__, ray.__version__, torch.__version__)",
    )
    assert imported.returncode == 0, imported.stderr
    pins = lock_pins("cpu")
    assert imported.stdout.split() == [pins["verl"], pins["ray"], pins["torch"]]
