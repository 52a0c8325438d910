"""No Docker engine here: check the Dockerfiles against the repository and the locks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from repo import ROOT, lock_pins

DOCKERFILES = sorted((ROOT / "docker").glob("*.Dockerfile"))
# Each image installs from one lock.
PROFILES = {"train.Dockerfile": "cuda", "judge.Dockerfile": "cpu"}


def _install_lines(text: str) -> list[str]:
    """The `pip install` / `uv pip install` commands of a Dockerfile, continuations joined."""
    joined = re.sub(r"\\\n\s*", " ", text)
    return re.findall(r"(?:uv )?pip install [^&\n]*", joined)


def test_both_images_exist() -> None:
    assert {p.name for p in DOCKERFILES} == set(PROFILES)


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_copied_paths_exist(dockerfile: Path) -> None:
    text = dockerfile.read_text()
    sources = [
        src
        for line in re.findall(r"^COPY (?!--from)(.+)$", text, re.MULTILINE)
        for src in line.split()[:-1]
    ]
    assert sources, "expected COPY instructions"
    assert "locks/" in sources
    for src in sources:
        assert (ROOT / src).exists(), f"{dockerfile.name} copies missing {src}"
    installed = re.findall(r"\./packages/(\w+)", text)
    for package in installed:
        assert (ROOT / "packages" / package / "pyproject.toml").is_file(), package


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_every_install_is_pinned_by_the_lock_and_repeats_no_version(dockerfile: Path) -> None:
    profile = PROFILES[dockerfile.name]
    lines = _install_lines(dockerfile.read_text())
    assert lines
    for line in lines:
        assert f"-c locks/{profile}.txt" in line, line
        assert not re.search(r"[=<>~]=|\$\{?\w*VERSION", line), f"a version beside the lock: {line}"
    versions = re.findall(r"^ARG (\w+_VERSION)=", dockerfile.read_text(), re.MULTILINE)
    # Versions of things outside Python's lock only.
    assert set(versions) <= {"PYTHON_VERSION", "EFA_INSTALLER_VERSION"}


def _requested_names(line: str) -> list[str]:
    """Registry packages an install command names (not options, their values, or paths)."""
    words = line.split(" install ", 1)[1].split()
    takes_value = {"-c", "--python"}
    return [
        w
        for i, w in enumerate(words)
        if not w.startswith(("-", ".", '"')) and (i == 0 or words[i - 1] not in takes_value)
    ]


def test_every_name_the_images_install_is_in_its_lock() -> None:
    for dockerfile in DOCKERFILES:
        pins = lock_pins(PROFILES[dockerfile.name])
        for line in _install_lines(dockerfile.read_text()):
            for name in _requested_names(line):
                assert name in pins, f"{dockerfile.name} installs {name}, which the lock lacks"


def test_training_image_cuda_is_the_cuda_of_the_locked_torch() -> None:
    text = (ROOT / "docker" / "train.Dockerfile").read_text()
    base = re.search(r"^FROM nvidia/cuda:(\d+)\.(\d+)\.\d+-\S+$", text, re.MULTILINE)
    assert base, "the training image builds on an nvidia/cuda image"
    # torch's CUDA runtime comes from the cuda-toolkit wheel it pins.
    toolkit = lock_pins("cuda")["cuda-toolkit"].split(".")
    assert (base.group(1), base.group(2)) == (toolkit[0], toolkit[1])
    assert "devel" in base.group(0), "flash-attn is compiled with the image's nvcc"


def test_python_of_the_images_is_the_python_of_the_locks() -> None:
    lock_python = re.search(r'^PYTHON = "([\d.]+)"$', (ROOT / "noxfile.py").read_text(), re.M)
    assert lock_python
    train = (ROOT / "docker" / "train.Dockerfile").read_text()
    judge = (ROOT / "docker" / "judge.Dockerfile").read_text()
    assert f"ARG PYTHON_VERSION={lock_python.group(1)}\n" in train
    assert f"FROM python:{lock_python.group(1)}-" in judge


def test_training_image_has_what_sagemaker_the_judge_and_attention_need() -> None:
    text = (ROOT / "docker" / "train.Dockerfile").read_text()
    for needed in ("bash", "python3-pip", "g++", "libseccomp", "efa_installer.sh"):
        assert needed in text, needed
    assert '"./packages/trainer[train,gpu,sagemaker-mlflow]"' in text
    assert "--no-build-isolation flash-attn" in text
    assert {"vllm", "verl", "flash-attn", "torch"} <= lock_pins("cuda").keys()


def test_judge_image_installs_the_reward_side_without_the_training_stack() -> None:
    text = (ROOT / "docker" / "judge.Dockerfile").read_text()
    (line,) = _install_lines(text)
    assert "./packages/trainer " in line + " " and "./packages/trainer[" not in line
    assert "torch" not in line
