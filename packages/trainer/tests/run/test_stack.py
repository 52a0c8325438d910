"""The start-up check asks for what the run uses, and names what installs a missing piece."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codefu_trainer.run.compose import PrerequisiteError
from codefu_trainer.run.overrides import split_overrides
from codefu_trainer.run.stack import MLFLOW, TRL, VERL, missing, require, training_stack
from codefu_trainer.training.clusters.registry import cluster_of, train_config

from ..conftest import CONF

# A Python start-up hook that hides a distribution and its modules, as an environment
# without it would: sys.meta_path's path finder without them.
HIDE = textwrap.dedent(
    """
    import importlib.machinery, os, re, sys

    HIDDEN = set(os.environ["CODEFU_TEST_HIDE"].split(","))

    class Hiding:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in HIDDEN:
                return None
            return importlib.machinery.PathFinder.find_spec(name, path, target)

        def find_distributions(self, *args, **kwargs):
            for dist in importlib.machinery.PathFinder.find_distributions(*args, **kwargs):
                if re.sub(r"[-_.]+", "-", dist.metadata["Name"] or "").lower() not in HIDDEN:
                    yield dist

        def invalidate_caches(self):
            importlib.machinery.PathFinder.invalidate_caches()

    sys.meta_path[:] = [
        Hiding() if f is importlib.machinery.PathFinder else f for f in sys.meta_path
    ]
    """
)


def needs(*overrides: str) -> tuple[str, ...]:
    cfg = train_config(CONF, split_overrides(overrides)[0])
    return cluster_of(cfg).needs(cfg)


def test_each_kind_asks_for_what_its_run_imports() -> None:
    quiet = "run.tracking.mlflow=false"
    assert needs("cluster=cpu_verl", quiet) == VERL
    assert needs("cluster=local", quiet) == VERL
    assert set(needs("cluster=cpu", quiet)) == {"verl", "ray", *TRL}
    assert set(needs("cluster=cpu")) == {"verl", "ray", *TRL, *MLFLOW}  # tracking on
    assert "mlflow" in needs("cluster=local")
    assert "mlflow" not in needs("cluster=sagemaker_p4de")  # the job's hosts track
    assert "trl" not in needs("cluster=cpu_verl") and "trl" not in needs("cluster=local")
    assert set(needs("cluster=local")) <= {n.lower() for n in training_stack()} | {"ray"}


def test_a_missing_distribution_is_named_with_what_installs_it() -> None:
    assert missing(["verl", "codefu-no-such-distribution"]) == ["codefu-no-such-distribution"]
    with pytest.raises(PrerequisiteError) as one:
        require(["verl", "codefu-no-such-distribution"], "smoke")
    line = str(one.value)
    assert "missing codefu-no-such-distribution)" in line
    assert "pip install 'codefu-no-such-distribution'" in line
    assert "pip install 'codefu-trainer[train]'" in line and "`nox -s smoke`" in line
    require(VERL, "train")  # installed here: nothing to say


def run_hiding(hidden: str, *argv: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`codefu-train ARGV` in a process where the distributions `hidden` are not installed."""
    (tmp_path / "sitecustomize.py").write_text(HIDE)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
        "CODEFU_TEST_HIDE": hidden,
    }
    code = "import sys; from codefu_trainer.training.cli import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, "--config-dir", str(CONF), *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_without_mlflow_the_smoke_starts_and_a_tracked_run_says_what_to_install(
    tmp_path: Path,
) -> None:
    """Where mlflow is not installed (hidden from this process, modules and distribution):
    the smoke gets past the start-up check (here to its own refusal of a cluster it does not
    run on, before anything is written), a run with tracking off too, and a run that tracks
    names mlflow with its requirement."""
    smoke = run_hiding("mlflow", "--smoke", "cluster=sagemaker_p4de", tmp_path=tmp_path)
    assert smoke.returncode == 2, smoke.stderr
    assert "the smoke runs on this machine" in smoke.stderr
    off = run_hiding(
        "mlflow",
        "cluster=cpu_verl",
        "run.tracking.mlflow=false",
        "data.out_dir=/nonexistent",
        tmp_path=tmp_path,
    )
    assert off.returncode == 3 and "No prepared data" in off.stderr, off.stderr
    tracked = run_hiding("mlflow", "cluster=cpu_verl", "--check", tmp_path=tmp_path)
    assert tracked.returncode == 3, tracked.stderr
    (line,) = tracked.stderr.splitlines()
    assert "the training stack is not installed (missing mlflow): pip install 'mlflow>=3'" in line
