"""The offline install bundle (`nox -s bundle`, docs/bundle.md).

The end-to-end test makes the smoke archive (`--profile smoke`) for this machine (CPython 3.11,
manylinux x86-64) and a fresh venv whose base is torch alone, as a GPU host's base environment
holds it (the `+cpu` wheel the suites install, from pip's configured wheel folder through uv's
cache), unpacks it with no package index, then runs one GRPO step of veRL's trainer on the CPU
from it with every import recorded (tests/smoke_bundle/): none of the parts it removed from Ray
is imported. The CPU bundle's test is test_bundle_cpu.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import pytest
from repo import ROOT, fresh_torch_env, lock_pins, run

sys.path.insert(0, str(ROOT))
from tools.bundle import (
    RAY_UI,
    RAY_UNUSED,
    UNUSED,
    left_out,
    parse_base,
    parse_resolution,
    preferred_versions,
    target_tags,
    trim_ray,
    wheel_fits,
)

HERE = Path(__file__).resolve().parent


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
    excluded, carried = left_out(pins, needed_by, {"torch": None, "numpy": "2.0"})
    assert excluded == {
        "torch": "in the base environment",
        "nvidia-cudnn-cu13": "needed only by torch",
        "nvidia-cublas": "needed only by nvidia-cudnn-cu13, torch",
    }
    assert carried == {}


def test_a_base_version_the_resolution_cannot_keep_is_carried_with_what_it_needs() -> None:
    """A GPU host's transformers 5.17 where veRL needs < 5.11: the bundle carries the
    resolved one; the base's torch (its local version aside) and vllm's own needs stay out."""
    pins = {"torch": "2.11.0", "transformers": "5.9.0", "tokenizers": "0.22.2", "verl": "0.9.1"}
    needed_by = {
        "torch": {"verl"},
        "transformers": {"verl"},
        "tokenizers": {"transformers"},
        "verl": set(),
    }
    base = {"torch": "2.11.0+cu130", "transformers": "5.17.0", "tokenizers": "0.22.2"}
    excluded, carried = left_out(pins, needed_by, base)
    assert excluded == {"torch": "in the base environment", "tokenizers": "in the base environment"}
    assert carried == {"transformers": "the base has 5.17.0; the resolution needs 5.9.0"}
    # The resolution prefers the base's versions (no local parts: an index has none), then the
    # lock's.
    assert preferred_versions({"torch": "2.11.0", "ray": "2.60.0"}, base) == {
        "torch": "2.11.0",
        "ray": "2.60.0",
        "transformers": "5.17.0",
        "tokenizers": "0.22.2",
    }


def test_trimming_ray_removes_the_unused_parts_and_keeps_the_dashboard_folders(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    for part in (*RAY_UNUSED, "ray/_private", f"{RAY_UI}/static/js"):
        (site / part).mkdir(parents=True)
        (site / part / "x.py").write_text("")
    (site / RAY_UI / "index.html").write_text("<html>")
    removed = trim_ray(site)
    assert set(removed) == {*RAY_UNUSED, RAY_UI}
    assert not any((site / part).exists() for part in RAY_UNUSED)
    assert (site / "ray/_private/x.py").is_file()
    assert (site / RAY_UI / "static/js").is_dir()
    assert not [p for p in (site / RAY_UI).rglob("*") if p.is_file()]
    assert trim_ray(tmp_path / "no-ray") == {}
    (site / "ray/jars").mkdir()
    (site / "ray/jars/ray_dist.jar").write_text("")
    for part in RAY_UNUSED:
        (site / part).mkdir(parents=True, exist_ok=True)
    (site / "ray/llm").rmdir()  # a Ray without one of them: the list must be updated
    with pytest.raises(FileNotFoundError, match="ray/llm"):
        trim_ray(site)


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


# The modules of the parts trim_ray removes ("ray/rllib" → "ray.rllib").
RAY_UNUSED_MODULES = tuple(part.replace("/", ".") for part in RAY_UNUSED if part != "ray/jars")


def _audited_imports(folder: Path) -> dict[str, set[str]]:
    """Module name → how the audit saw it looked up ("import", "probe"), over every process."""
    seen: dict[str, set[str]] = {}
    for record in folder.glob("*.txt"):
        for line in record.read_text().splitlines():
            name, _, kind = line.partition(" ")
            seen.setdefault(name, set()).add(kind)
    return seen


@pytest.mark.slow
@pytest.mark.timeout(3000)
def test_the_smoke_archive_runs_a_verl_step_beside_a_torch_base(tmp_path: Path) -> None:
    uv = shutil.which("uv")
    assert uv, "uv is installed with the repository tests (nox -s tests)"
    took: dict[str, float] = {}
    start = time.monotonic()
    python = fresh_torch_env(uv, tmp_path / "base")
    frozen = run(uv, "pip", "freeze", "--python", python)
    assert frozen.returncode == 0 and "torch==" in frozen.stdout, frozen.stderr
    (tmp_path / "base.txt").write_text(frozen.stdout)
    took["torch base"] = time.monotonic() - start

    # The archive for this machine's Python and platform (3.11, manylinux_2_28_x86_64); xz's
    # fastest preset: the size is docs/bundle.md's business, not this test's.
    start = time.monotonic()
    out = tmp_path / "out"
    nox_env = {k: v for k, v in os.environ.items() if not k.startswith("NOX")}
    done = run(
        sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"), "-s", "bundle", "--",
        "--profile", "smoke", "--exclude-from", str(tmp_path / "base.txt"), "--xz-preset", "0",
        "--out", str(out), env=nox_env, timeout=1500,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-4000:]
    took["bundle"] = time.monotonic() - start
    name = "codefu-smoke-cp311-manylinux_2_28_x86_64.tar.xz"
    assert sorted(p.name for p in out.iterdir()) == [name, f"{name}.sha256"]
    with (out / name).open("rb") as f:
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    assert (out / f"{name}.sha256").read_text() == f"{digest}  {name}\n"

    start = time.monotonic()
    with tarfile.open(out / name) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    took["unpack"] = time.monotonic() - start
    root = tmp_path / "unpacked" / "codefu-smoke"
    site = root / "site"
    manifest = json.loads((root / "manifest.json").read_text())
    readme = (root / "README.md").read_text()
    assert "codefu-smoke/codefu-train --smoke" in readme and f"sha256sum -c {name}.sha256" in readme
    for text in (readme, json.dumps(manifest)):
        assert "://" not in text, "the archive's notes must not name package index hosts"
    assert manifest["excluded"]["torch"] == "in the base environment"
    assert set(manifest["ray_removed"]) == {*RAY_UNUSED, RAY_UI}
    assert not [part for part in RAY_UNUSED if (site / part).exists()]
    assert not [p for p in (site / RAY_UI).rglob("*") if p.is_file()]
    installed = {
        re.sub(r"[-_.]+", "-", p.name.split("-")[0]).lower() for p in site.glob("*.dist-info")
    }
    assert {"verl", "ray", "transformers", "tokenizers", "codefu-trainer"} <= installed
    assert not installed & {"torch", *UNUSED["smoke"]}
    assert manifest["versions"]["transformers"] == lock_pins("cuda")["transformers"]

    # One GRPO step of veRL's trainer on this CPU from the unpacked archive, offline, the
    # dashboard on (as a GPU run starts it), every process's imports recorded.
    audit = tmp_path / "audit"
    audit.mkdir()
    ray_tmp = Path(tempfile.mkdtemp(prefix="cf-bundle-", dir="/tmp"))  # short socket paths
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("UV_", "PIP_", "NOX", "PYTHON", "VIRTUAL_ENV", "RAY_ADDRESS"))
    }
    env |= {
        "PYTHONPATH": f"{site}:{HERE / 'smoke_bundle'}",
        "CODEFU_IMPORT_AUDIT": str(audit),
        "CUDA_VISIBLE_DEVICES": "",
        "HF_HUB_OFFLINE": "1",
        "RAY_TMPDIR": str(ray_tmp),
    }
    absent = run(
        python, "-c", "import importlib.metadata as m, sys\n"
        "for name in sys.argv[1:]:\n"
        "    try: m.distribution(name); print(name)\n"
        "    except m.PackageNotFoundError: pass", *UNUSED["smoke"], env=env,
    )  # fmt: skip
    assert absent.returncode == 0 and absent.stdout == "", absent.stdout + absent.stderr
    data = tmp_path / "data"
    start = time.monotonic()
    prepared = run(python, "-m", "codefu_data.cli", "prepare", "--source", "sample", "--out",
                    str(data), "--no-progress", env=env)  # fmt: skip
    assert prepared.returncode == 0, prepared.stderr[-3000:]
    try:
        step = run(
            python, "-m", "codefu_trainer.training.cli",  # its start-up check asks for veRL
            "--config-dir", str(root / "conf"), "cluster=cpu_verl", f"data.out_dir={data}",
            f"run.dir={tmp_path / 'run'}", "run.tracking.mlflow=false", "rehearsal.steps=1",
            "rehearsal.warmup_steps=0", f"rehearsal.cache_dir={tmp_path / 'warm'}",
            "rehearsal.prompts_per_step=1", "rehearsal.num_generations=4",
            "run.export_final=false", "++ray_kwargs.ray_init.include_dashboard=true",
            env=env, timeout=2000,
        )  # fmt: skip
    finally:
        shutil.rmtree(ray_tmp, ignore_errors=True)
    took["data and one veRL step"] = time.monotonic() - start
    print("test_the_smoke_archive: seconds", {k: round(v) for k, v in took.items()})
    assert step.returncode == 0, step.stdout[-6000:] + step.stderr[-3000:]
    # veRL's own step line goes to the run's log (the console shows the project's lines).
    log = (tmp_path / "run" / "codefu-train.log").read_text(errors="replace")
    assert re.search(r"step:1 - .*critic/score/mean:", log), log[-3000:]
    assert "codefu-train: step 1/1 judged" in step.stdout, step.stdout[-3000:]

    seen = _audited_imports(audit)
    assert len(list(audit.glob("*.txt"))) >= 5, "the audit saw the run's Ray processes"
    assert any(n.startswith("verl.trainer") for n in seen), "the audit saw veRL's trainer"
    assert any(n.startswith("ray.dashboard.modules") for n in seen), "the dashboard ran"
    dropped = sorted(
        n for n in seen if any(n == m or n.startswith(m + ".") for m in RAY_UNUSED_MODULES)
    )
    assert dropped == [], dropped
