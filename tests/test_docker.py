"""The Dockerfiles against the repository and the locks, by their text: what no build here
runs (the CUDA base, EFA, flash-attn) is checked only this way; the judge image and the
training image's CPU part are also built and run (tests/images, `nox -s image-smoke`)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from repo import ROOT, lock_pins

sys.path.insert(0, str(ROOT))
from tools import images
from tools.bundle import INSTALLS


def _requirements_module() -> ModuleType:
    """docker/requirements.py, loaded by its path (an installed `docker` would shadow it)."""
    spec = importlib.util.spec_from_file_location("requirements", ROOT / "docker/requirements.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


third_party = _requirements_module().third_party

DOCKERFILES = sorted((ROOT / "docker").glob("*.Dockerfile"))
# Each image installs from one lock: the training image from the one its PROFILE names
# (cuda by default, cpu for its CPU part).
PROFILES = {"train.Dockerfile": "cuda", "judge.Dockerfile": "cpu"}
LOCK_OF_LINE = {"train.Dockerfile": ("locks/${PROFILE}.txt", "locks/cuda.txt")}


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
    locks = LOCK_OF_LINE.get(dockerfile.name, (f"locks/{PROFILES[dockerfile.name]}.txt",))
    lines = _install_lines(dockerfile.read_text())
    assert lines
    for line in lines:
        assert any(f"-c {lock}" in line for lock in locks), line
        assert not re.search(r"[=<>~]=|\$\{?\w*VERSION", line), f"a version beside the lock: {line}"
    versions = re.findall(r"^ARG (\w+_VERSION)=", dockerfile.read_text(), re.MULTILINE)
    # Versions of things outside Python's lock only.
    assert set(versions) <= {"PYTHON_VERSION", "EFA_INSTALLER_VERSION"}


def _requested_names(line: str) -> list[str]:
    """Registry packages an install command names (not options, their values, build
    arguments or paths)."""
    words = line.split(" install ", 1)[1].split()
    takes_value = {"-c", "--python", "-r", "--find-links"}
    return [
        w
        for i, w in enumerate(words)
        if not w.startswith(("-", ".", '"', "$")) and (i == 0 or words[i - 1] not in takes_value)
    ]


def test_every_name_the_images_install_is_in_its_lock() -> None:
    for dockerfile in DOCKERFILES:
        pins = lock_pins(PROFILES[dockerfile.name])
        for line in _install_lines(dockerfile.read_text()):
            for name in _requested_names(line):
                assert name in pins, f"{dockerfile.name} installs {name}, which the lock lacks"


def _requirements_call(text: str) -> list[str]:
    """The packages an image's dependency layer asks docker/requirements.py for."""
    joined = re.sub(r"\\\n\s*", " ", text)
    match = re.search(r"python3? docker/requirements\.py ([^>]+)>", joined)
    assert match, "the dependency layer comes from docker/requirements.py"
    return [word.strip('"') for word in match.group(1).split()]


def _arg(text: str, name: str) -> str:
    match = re.search(rf"^ARG {name}=(.*)$", text, re.MULTILINE)
    assert match, f"ARG {name}"
    return match.group(1).strip('"')


@pytest.mark.parametrize(
    ("image", "profile", "extras"),
    [
        ("train", "cuda", _arg((ROOT / "docker/train.Dockerfile").read_text(), "TRAINER_EXTRAS")),
        ("train", "cpu", images.TRAIN_CPU_ARGS["TRAINER_EXTRAS"]),
        ("judge", "cpu", ""),
    ],
    ids=["train-cuda", "train-cpu", "judge"],
)
def test_every_dependency_an_image_installs_is_pinned_by_its_lock(
    image: str, profile: str, extras: str
) -> None:
    wanted = [
        w.replace("${TRAINER_EXTRAS}", extras)
        for w in _requirements_call((ROOT / images.IMAGES[image]).read_text())
    ]
    lines = third_party(ROOT, wanted)
    assert lines and not any(line.startswith("codefu-") for line in lines)
    pins = lock_pins(profile)
    for line in lines:
        name = re.match(r"[A-Za-z0-9._-]+", line).group(0).lower()  # type: ignore[union-attr]
        assert name in pins, f"{image} ({profile}) installs {line}, which locks/{profile}.txt lacks"


def test_training_image_cuda_is_the_cuda_of_the_locked_torch() -> None:
    text = (ROOT / "docker" / "train.Dockerfile").read_text()
    base = re.search(r"^ARG BASE_IMAGE=nvidia/cuda:(\d+)\.(\d+)\.\d+-\S+$", text, re.M)
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
    judge_base = _arg(judge, "BASE_IMAGE")
    assert judge_base.startswith(f"python:{lock_python.group(1)}-")
    # The local base stands for it: the same Debian release, whose python3 is 3.11.
    assert judge_base.endswith(f"-{images.BASE_SUITE}") and images.BASE_SUITE == "bookworm"


def test_training_image_has_what_sagemaker_the_judge_and_attention_need() -> None:
    text = (ROOT / "docker" / "train.Dockerfile").read_text()
    for needed in ("bash", "python3-pip", "g++", "libseccomp", "efa_installer.sh"):
        assert needed in text, needed
    assert _arg(text, "TRAINER_EXTRAS") == "train,gpu,sagemaker-mlflow"
    assert _requirements_call(text) == [
        "sandbox", "data", "launcher[submit]", "trainer[${TRAINER_EXTRAS}]"
    ]  # fmt: skip
    assert "--no-build-isolation flash-attn" in text
    assert {"vllm", "verl", "flash-attn", "torch"} <= lock_pins("cuda").keys()


def _stages(text: str) -> dict[str, str]:
    """Each named stage of a Dockerfile → its text."""
    parts = re.split(r"^FROM ", text, flags=re.MULTILINE)[1:]
    return {
        m.group(1): part for part in parts if (m := re.match(r"\S+ AS (\S+)", part.splitlines()[0]))
    }


def test_the_cpu_part_of_the_training_image_is_the_same_file_less_its_cuda_stages() -> None:
    """One Dockerfile: PROFILE picks the `-cuda` or `-cpu` stage at each fork; the CPU ones
    are empty, so the CPU build runs every other step the CUDA build runs."""
    text = (ROOT / "docker" / "train.Dockerfile").read_text()
    stages = _stages(text)
    assert _arg(text, "PROFILE") == "cuda"
    forks = re.findall(r"^FROM \S+-\$\{PROFILE\}", text, re.MULTILINE)
    assert len(forks) == 2  # after the system packages, after the dependencies
    cuda_only = {name for name in stages if name.endswith("-cuda")}
    assert cuda_only == {"system-cuda", "dependencies-cuda"}
    for name in cuda_only:
        cpu = stages[name.replace("-cuda", "-cpu")].splitlines()
        steps = [line for line in cpu[1:] if line.strip() and not line.startswith("#")]
        assert steps == [], f"{name.replace('-cuda', '-cpu')} must add nothing: {steps}"
    cuda_text = "".join(stages[name] for name in cuda_only)
    parts = re.split(r"^FROM ", text, flags=re.MULTILINE)
    rest = [part for part in parts if part not in stages.values() or part not in cuda_text]
    steps = [line for part in rest for line in part.splitlines() if not line.startswith("#")]
    for needed in ("cuda-compat-13-0", "efa_installer.sh", "flash-attn"):
        assert needed in cuda_text and not any(needed in line for line in steps), needed
    # The CPU part's build arguments are the CUDA defaults less vLLM's `gpu` extra.
    cpu_extras = images.TRAIN_CPU_ARGS["TRAINER_EXTRAS"].split(",")
    assert images.TRAIN_CPU_ARGS["PROFILE"] == "cpu"
    assert cpu_extras == [e for e in _arg(text, "TRAINER_EXTRAS").split(",") if e != "gpu"]


def test_the_wheels_an_image_builds_from_are_the_bundle_of_what_it_installs() -> None:
    """`--local-base` builds install from `nox -s bundle -- --profile P --image-tools`."""
    judge = _requirements_call((ROOT / "docker" / "judge.Dockerfile").read_text())
    assert tuple(judge) == INSTALLS[images.BUNDLE_PROFILE["judge"]]
    train = _requirements_call((ROOT / "docker" / "train.Dockerfile").read_text())
    extras = images.TRAIN_CPU_ARGS["TRAINER_EXTRAS"]
    assert tuple(w.replace("${TRAINER_EXTRAS}", extras) for w in train) == INSTALLS["cpu"]
    assert images.BUNDLE_PROFILE["train"] == "cpu"


def test_judge_image_installs_the_reward_side_without_the_training_stack() -> None:
    text = (ROOT / "docker" / "judge.Dockerfile").read_text()
    assert _requirements_call(text) == ["sandbox", "data", "launcher", "trainer"]
    lines = third_party(ROOT, _requirements_call(text))
    names = {re.match(r"[A-Za-z0-9._-]+", line).group(0) for line in lines}  # type: ignore[union-attr]
    assert not names & {"torch", "verl", "transformers", "vllm", "trl"}
    packages = next(line for line in _install_lines(text) if "--no-deps" in line)
    assert "./packages/trainer " in packages + " " and "./packages/trainer[" not in packages


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_dependencies_are_installed_before_the_packages_code_is_copied(dockerfile: Path) -> None:
    """A change to the code rebuilds only the layers after `COPY packages/`."""
    text = dockerfile.read_text()
    copy_code = text.index("COPY packages/ packages/")
    assert text.index("docker/requirements.py sandbox") < copy_code
    assert all(
        "--no-deps" in line or "flash-attn" in line or " uv" in line.split("-c", 1)[0]
        for line in _install_lines(text[copy_code:])
    )
    for copied in re.findall(r"^COPY (\S+) ", text[:copy_code], re.MULTILINE):
        assert copied in ("locks/", "docker/requirements.py") or copied.endswith("pyproject.toml")


def test_the_build_context_is_only_what_the_dockerfiles_copy() -> None:
    ignore = (ROOT / ".dockerignore").read_text().split()
    assert ignore[ignore.index("*") :][:1] == ["*"]
    allowed = {line[1:] for line in ignore if line.startswith("!")}
    for dockerfile in DOCKERFILES:
        for line in re.findall(r"^COPY (?!--from)(.+)$", dockerfile.read_text(), re.MULTILINE):
            for source in line.split()[:-1]:
                assert any(source.startswith(a) for a in allowed), source
    assert "packages/*/tests/" in ignore


def test_requirements_follow_local_packages_and_their_extras(tmp_path: Path) -> None:
    lines = third_party(ROOT, ["trainer[test]"])
    assert "sagemaker-train==1.27.0" in lines  # codefu-launcher[submit], through trainer[test]
    assert "ray[default]==2.60.0" in lines and lines.count("ray[default]==2.60.0") == 1
    assert not any(line.startswith("codefu-") for line in lines)
    script = [sys.executable, str(ROOT / "docker" / "requirements.py")]
    wrong = subprocess.run(
        [*script, "trainer[nope]"], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert wrong.returncode == 2 and "trainer has no extra nope" in wrong.stderr
    missing = subprocess.run(
        [*script, "sandbox"], capture_output=True, text=True, cwd=tmp_path, check=False
    )
    assert missing.returncode == 2 and "no local package 'sandbox'" in missing.stderr
