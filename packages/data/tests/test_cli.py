"""The `codefu-data` command line (in process, and once as a real console script)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codefu_data.cli import main

REPO_CONF = Path(__file__).resolve().parents[3] / "conf"


def test_prepare_prints_a_summary_and_skips_an_unchanged_rerun(
    raw_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert (
        main(["prepare", "--source", str(raw_dir), "--out", str(out), "--no-progress", "data=hard"])
        == 0
    )
    printed = capsys.readouterr()
    assert "training tier: hard" in printed.out
    assert "tier" in printed.out and "kept" in printed.out and "no_private_tests" in printed.out
    assert "read 120 problems" in printed.out
    assert (out / "hard" / "train.parquet").is_file() and (out / "manifest.json").is_file()
    assert main(["prepare", "--source", str(raw_dir), "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr()
    assert "up to date" in printed.out + printed.err


def test_errors_exit_2_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            ["prepare", "--source", str(tmp_path / "missing" / "dir"), "--out", str(tmp_path / "o")]
        )
        == 2
    )
    assert "unknown source" in capsys.readouterr().err
    assert main(["prepare", "--out", str(tmp_path / "o"), "data.tierz=easy"]) == 2
    err = capsys.readouterr().err
    assert "tierz" in err and "Valid keys" in err
    assert not (tmp_path / "o").exists()


def test_console_script_help() -> None:
    beside = Path(sys.executable).parent / "codefu-data"
    exe = str(beside) if beside.is_file() else shutil.which("codefu-data")
    if exe is None:
        pytest.skip("codefu-data console script not installed")
    done = subprocess.run(
        [exe, "prepare", "--help"], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0
    assert (
        "--config-dir" in done.stdout and "--source" in done.stdout and "data=hard" in done.stdout
    )


@pytest.mark.skipif(
    not (REPO_CONF / "prepare.yaml").is_file(), reason="repository conf/ not present"
)
def test_config_dir_as_nox_passes_it(raw_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    code = main(
        [
            "prepare",
            "--config-dir",
            str(REPO_CONF),
            "--no-progress",
            f"data.source={raw_dir}",
            f"data.out_dir={out}",
        ]
    )
    assert code == 0
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["easy", "expert", "hard"]
