"""Every documented command leaves `git status` clean: what it writes inside the clone is
ignored by git (runs/, data/, dist/, .nox/).

Checked on the paths the commands write by default and on every relative output path the
README and docs/ show (`data.out_dir=`, `run.dir=`, `eval.out=`, `--out`).
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from repo import ROOT
from test_docs import PAGES, _code

# Where the commands write by default: prepare, train and smoke (run dirs, their logs),
# evaluate, report, build, the nox environments.
DEFAULT_OUTPUTS = (
    "data/processed/easy/train.parquet",
    "data/processed/manifest.json",
    "runs/codefu-grpo-20261128-101500/codefu-train.log",
    "runs/codefu-smoke-20261128-101500/smoke/table.txt",
    "runs/eval/model-easy-test/summary.json",
    "runs/report-0123abcd/learning.png",
    "dist/codefu_trainer-0.1.0-py3-none-any.whl",
    ".nox/training/bin/python",
    "outputs/2026-11-28/10-15-00/.hydra/config.yaml",
)
OUTPUT = re.compile(r"(?:\bdata\.out_dir=|\brun\.dir=|\beval\.out=|--out )([^\s'\"\\`]+)")


def documented_outputs() -> set[str]:
    found = set()
    for page in PAGES:
        for code in _code(page.read_text()):
            for shown in OUTPUT.findall(code):
                path = shown.rstrip(".,;)]")
                # Absolute paths, variables, placeholders (`<run>`, `SCORES.jsonl`) aside.
                if path and not path.startswith(("/", "~", "$", "<", "s3:")) and path[0].islower():
                    found.add(path)
    return found


def test_outputs_are_found_in_the_docs() -> None:
    assert {"data/processed-python", "runs/attention.json"} <= documented_outputs()


def test_what_documented_commands_write_is_ignored_by_git() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout of the repository")
    paths = sorted({*DEFAULT_OUTPUTS, *documented_outputs()})
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", "--verbose", "--non-matching", *paths],
        cwd=ROOT, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    not_ignored = [line.split("\t", 1)[1] for line in done.stdout.splitlines() if line[:2] == "::"]
    assert not not_ignored, f"written by documented commands but not ignored: {not_ignored}"
