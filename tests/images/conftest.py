"""Fixtures of the judge image's tests: the image (its tag from CODEFU_JUDGE_IMAGE, which
`CODEFU_JUDGE_TESTS=image nox -s judge-tests` sets after building it; without it every test
here skips and says why), the engine and a memory cgroup directory for one container."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tools import images


@pytest.fixture(scope="session")
def sum_cpp() -> str:
    """A C++ program that prints a + b (accepted on the tests here)."""
    return (
        "#include <cstdio>\n"
        'int main(){long long a,b;scanf("%lld %lld",&a,&b);printf("%lld\\n",a+b);}\n'
    )


@pytest.fixture(scope="session")
def tag() -> str:
    found = os.environ.get("CODEFU_JUDGE_IMAGE", "")
    if not found:
        pytest.skip(
            "CODEFU_JUDGE_IMAGE is unset: `CODEFU_JUDGE_TESTS=image nox -s judge-tests` builds "
            "the judge image and runs these where podman or Docker and root are (.ci/run does "
            "where it can install podman; docs/images.md)"
        )
    return found


@pytest.fixture(scope="session")
def engine(tag: str) -> images.Engine:
    found = images.find_engine()
    assert found is not None, images.no_engine()
    return found


@pytest.fixture
def cgroup(tag: str) -> Iterator[Path]:
    with images.judge_cgroup() as path:
        yield path


RunImage = Callable[[Sequence[str], Sequence[str]], subprocess.CompletedProcess[str]]


@pytest.fixture(scope="session")
def judge_cache(tag: str) -> list[str]:
    """The judge's cache (its precompiled header, built programs) kept between these tests'
    containers, as a judge host keeps it: a mount of the image's CODEFU_CACHE_DIR."""
    path = images.CACHE / "judge-cache"
    path.mkdir(parents=True, exist_ok=True)
    return ["-v", f"{path}:/var/cache/codefu"]


@pytest.fixture(scope="session")
def run_image(engine: images.Engine, tag: str, judge_cache: list[str]) -> RunImage:
    """`run_image(options, command)`: `command` in a fresh container of the image, run with
    `options` (and the judge's cache), its output captured."""

    def run(options: Sequence[str], command: Sequence[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            engine.command("run", "--rm", *options, *judge_cache, tag, *command),
            capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip

    return run


@pytest.fixture
def privileges(cgroup: Path, judge_cache: list[str]) -> list[str]:
    """A judge container's least privileges (with a cgroup directory of its own) and the
    judge's cache."""
    return [*images.judge_container_args(cgroup), *judge_cache]
