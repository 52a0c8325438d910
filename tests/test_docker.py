"""No Docker engine here: check the Dockerfiles against the repository and package pins."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from repo import PACKAGES, ROOT, load_toml

DOCKERFILES = sorted((ROOT / "docker").glob("*.Dockerfile"))
NOXFILE = (ROOT / "noxfile.py").read_text()


def _args(text: str) -> dict[str, str]:
    return dict(re.findall(r"^ARG (\w+)=(\S*)$", text, re.MULTILINE))


def _pinned_versions() -> dict[str, str]:
    """Exact `name==version` pins across the packages' dependencies and extras."""
    pins: dict[str, str] = {}
    for name in PACKAGES:
        project = load_toml(ROOT / "packages" / name / "pyproject.toml")["project"]
        reqs = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            reqs += extra
        for req in reqs:
            m = re.match(r"^([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?==([\w.+-]+)$", req)
            if m:
                pins[m.group(1).lower()] = m.group(2)
    return pins


def test_both_images_exist() -> None:
    assert {p.name for p in DOCKERFILES} == {"train.Dockerfile", "judge.Dockerfile"}


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_copied_paths_exist(dockerfile: Path) -> None:
    text = dockerfile.read_text()
    sources = [
        src
        for line in re.findall(r"^COPY (?!--from)(.+)$", text, re.MULTILINE)
        for src in line.split()[:-1]
    ]
    assert sources, "expected COPY instructions"
    for src in sources:
        assert (ROOT / src).exists(), f"{dockerfile.name} copies missing {src}"
    installed = re.findall(r"\./packages/(\w+)", text)
    for package in installed:
        assert (ROOT / "packages" / package / "pyproject.toml").is_file(), package


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_versions_match_package_metadata(dockerfile: Path) -> None:
    args = _args(dockerfile.read_text())
    pins = _pinned_versions()
    names = {
        "VERL_VERSION": "verl",
        "VLLM_VERSION": "vllm",
        "RAY_VERSION": "ray",
        "TRL_VERSION": "trl",
    }
    checked = 0
    for arg, dist in names.items():
        if arg in args:
            assert args[arg] == pins[dist], (
                f"{dockerfile.name}: {arg}={args[arg]} but packages pin {pins[dist]}"
            )
            checked += 1
    torch = re.search(r'^TORCH_VERSION = "([\w.]+)"$', NOXFILE, re.MULTILINE)
    assert torch and args["TORCH_VERSION"] == torch.group(1)
    version = load_toml(ROOT / "packages" / "trainer" / "pyproject.toml")["project"]["version"]
    assert args["CODEFU_VERSION"] == version
    assert checked >= 1


def test_training_image_has_what_sagemaker_and_the_judge_need() -> None:
    text = (ROOT / "docker" / "train.Dockerfile").read_text()
    for needed in (
        "bash",
        "python3-pip",
        "g++",
        "libseccomp",
        "efa_installer.sh",
        "vllm==",
        "verl==",
    ):
        assert needed in text, needed
