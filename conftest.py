"""Settings and fixtures shared by every package's test suite.

pytest loads this file for every suite: the root pyproject.toml holds pytest's settings, so
the repository root is the rootdir (and the default confcutdir) wherever pytest starts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests assert what a function returns, never how fast: CI machines are shared and
# noisy (a 200 ms example deadline failed a checker property on a loaded 2-core machine).
settings.register_profile("codefu", deadline=None)
settings.load_profile("codefu")

# Ray starts its worker processes at niceness 15 (its `worker_niceness`), so that on a judge
# node the raylet stays responsive beside busy workers. Here the tests' own processes and any
# neighbour run at niceness 0 and would get ~28x the CPU of the Ray cluster under test: on a
# loaded 2-core machine a judging of one small program then outlasted its 89 s deadline.
# Every Ray process the suite starts (ray.init, Cluster, the smoke's subprocesses) reads this,
# as the cluster a run starts on this machine does (codefu_trainer/run/local_ray.py).
os.environ.setdefault("RAY_worker_niceness", "0")

REAL_DATA_ENV = "CODEFU_REAL_DATA"
EASY = "codefu_easy"
SPLITS = ("train", "test")


@pytest.fixture(scope="session")
def real_data_dir() -> Path | None:
    """The real-data folder ($CODEFU_REAL_DATA, the repository's ../shared/data), or None
    when it is unset. Set but without codefu_easy/{train,test}.parquet fails the test: a
    wrong path must not turn the real-data tests into silent skips."""
    root = os.environ.get(REAL_DATA_ENV)
    if not root:
        return None
    missing = [str(Path(root) / EASY / f"{s}.parquet") for s in SPLITS]
    missing = [path for path in missing if not Path(path).is_file()]
    if missing:
        pytest.fail(
            f"{REAL_DATA_ENV}={root} lacks {', '.join(missing)}: point it at the folder "
            f"holding {EASY}/{{train,test}}.parquet (shared/data), or unset it."
        )
    return Path(root)


@pytest.fixture(scope="session")
def codefu_easy(real_data_dir: Path | None) -> Path:
    """$CODEFU_REAL_DATA/codefu_easy, the real CodeContests problems ({train,test}.parquet);
    the test skips when CODEFU_REAL_DATA is unset."""
    if real_data_dir is None:
        pytest.skip(
            f"{REAL_DATA_ENV} is unset: set it to a folder holding "
            f"{EASY}/{{train,test}}.parquet (real CodeContests problems) to run this"
        )
    return real_data_dir / EASY


Refused = Callable[[Callable[[Sequence[str]], int], Sequence[str], str, Path], None]


@pytest.fixture
def refused(capsys: pytest.CaptureFixture[str]) -> Refused:
    """`refused(main, argv, names, folder)`: the command `main(argv)` turns a bad input away
    as the README's exit codes say: exit 2, no traceback, a last stderr line naming the value
    (`names` in it) that is the only one (or follows argparse's usage line, for argparse's own
    refusals), and nothing new in `folder`."""

    def check(
        main: Callable[[Sequence[str]], int], argv: Sequence[str], names: str, folder: Path
    ) -> None:
        before = sorted(folder.rglob("*"))
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own refusals
            code = exc.code  # type: ignore[assignment]
        err = capsys.readouterr().err
        lines = [line for line in err.splitlines() if line.strip()]
        assert code == 2, err
        assert "Traceback" not in err
        assert lines and names in lines[-1], err
        assert len(lines) == 1 or (len(lines) > 1 and lines[0].startswith("usage:")), err
        assert sorted(folder.rglob("*")) == before

    return check
