"""The CPU twin of the GPU path's install bundle (`nox -s bundle -- --profile cpu`,
docs/bundle.md), installed with no package index beside a fresh venv whose base is torch
alone: uv's `--no-index --find-links` and uv offline (the contract of the `pip install
--no-index --find-links` the bundle's README gives, in about a third of pip's time on 2 cores);
then `codefu-train --help`, `import verl, ray`. A file of its own so that pytest-xdist runs it
beside the smoke archive's test (test_bundle.py).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from repo import ROOT, fresh_torch_env, lock_pins, run


@pytest.mark.slow
def test_the_cpu_bundle_installs_offline_beside_a_torch_base_and_runs(tmp_path: Path) -> None:
    uv = shutil.which("uv")
    assert uv, "uv is installed with the repository tests (nox -s tests)"
    bundle = tmp_path / "bundle"
    nox_env = {k: v for k, v in os.environ.items() if not k.startswith("NOX")}
    # Its own nox environment folder: the smoke archive's test (test_bundle.py) runs the same
    # session at the same time, and a session's staging folder lives in its environment.
    done = run(
        sys.executable, "-m", "nox", "-f", str(ROOT / "noxfile.py"),
        "--envdir", str(tmp_path / "nox"), "-s", "bundle", "--",
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
    python = fresh_torch_env(uv, venv)
    offline = {**os.environ, "UV_OFFLINE": "1"}
    offline = {
        k: v
        for k, v in offline.items()
        if not k.startswith(("UV_FIND_LINKS", "UV_INDEX", "UV_EXTRA_INDEX"))
    }
    installed = run(
        uv, "pip", "install", "--quiet", "--python", python, "--no-index", "--find-links",
        str(bundle), "-r", str(bundle / "requirements.txt"), env=offline,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr

    helped = run(str(venv / "bin" / "codefu-train"), "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: codefu-train"), helped.stderr
    imported = run(
        python,
        "-c",
        "import verl, ray, torch; print(verl.__version__, ray.__version__, torch.__version__)",
    )
    assert imported.returncode == 0, imported.stderr
    pins = lock_pins("cpu")
    assert imported.stdout.split() == [pins["verl"], pins["ray"], pins["torch"]]
