"""Checker programs from the data: file names, folders, columns, configuration."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from codefu_data.checkers import (
    Checker,
    checker_config,
    checker_file_stem,
    checker_from_column,
    checker_from_folder,
    detect_language,
    verdict_table,
)
from codefu_data.config import CheckersConfig, DataConfig, check_checkers
from codefu_data.prepare import prepare
from codefu_data.schema import CHECKER_PARAMS_TYPE, CHECKER_TYPE
from codefu_sandbox import CheckerConfig
from codefu_sandbox.checkers import PROGRAM, accepted_params


def test_file_stems_of_real_names() -> None:
    assert checker_file_stem("1056_A. Determine Line") == "1056_A. Determine Line"
    assert checker_file_stem("727_A. Transformation: from A to B") == (
        "727_A. Transformation_ from A to B"
    )
    assert checker_file_stem("1_A. a/b?") == "1_A. a_b_"
    assert checker_file_stem("..hidden") == "hidden"


@given(st.text(min_size=1, max_size=40))
def test_a_file_stem_is_one_portable_file_name(name: str) -> None:
    stem = checker_file_stem(name)
    assert stem and not stem.startswith(".")
    assert not set(stem) & set('/\\<>:"|?*') and all(ord(c) >= 32 for c in stem)


def test_a_folder_holds_one_checker_per_problem(tmp_path: Path) -> None:
    name = "727_A. Transformation: from A to B"
    assert checker_from_folder(tmp_path, name) is None
    (tmp_path / f"{checker_file_stem(name)}.py").write_text("import sys\nsys.exit(0)\n")
    assert checker_from_folder(tmp_path, name) == Checker("python", "import sys\nsys.exit(0)\n")
    (tmp_path / f"{checker_file_stem(name)}.cpp").write_text("int main() {}\n")
    with pytest.raises(ValueError, match="keep one"):
        checker_from_folder(tmp_path, name)


def test_a_column_value_and_its_language() -> None:
    assert checker_from_column(None, "auto") is None
    assert checker_from_column("  \n", "auto") is None
    cpp = '#include "testlib.h"\nint main() {}\n'
    assert checker_from_column(cpp, "auto") == Checker("cpp", cpp)
    assert checker_from_column("print(1)\n", "auto") == Checker("python", "print(1)\n")
    assert checker_from_column("print(1)\n", "cpp") == Checker("cpp", "print(1)\n")
    assert detect_language("  #  include <bits/stdc++.h>\n") == "cpp"
    assert detect_language("# include nothing: a Python comment\n") == "python"
    # A Python checker with a main() is Python: it parses as Python and includes no header.
    assert detect_language("import sys\ndef main():\n    sys.exit(0)\nmain()\n") == "python"


def test_checker_settings_are_checked(tmp_path: Path) -> None:
    check_checkers(CheckersConfig())
    with pytest.raises(ValueError, match="language"):
        check_checkers(CheckersConfig(language="ruby"))
    with pytest.raises(ValueError, match="not a directory"):
        check_checkers(CheckersConfig(folder=str(tmp_path / "missing")))
    with pytest.raises(ValueError, match="copy of testlib"):
        check_checkers(CheckersConfig(testlib=str(tmp_path / "testlib.h")))
    with pytest.raises(ValueError, match="min_tnr"):
        check_checkers(CheckersConfig(min_tnr=1.5))


def test_the_ground_truth_stores_the_checkers_own_configuration() -> None:
    """What prepare writes is `CheckerConfig.to_dict()`, and reads back as the same config;
    the stored fields are the program checker's parameters but the testlib.h path."""
    cfg = CheckersConfig(time_seconds=3, memory_bytes=64 << 20)
    config = checker_config(Checker("python", "import sys\nsys.exit(0)\n"), "print(1)\n", cfg)
    [stored] = pa.array([config.to_dict()], CHECKER_TYPE).to_pylist()
    assert stored == config.to_dict()
    assert CheckerConfig.from_dict(stored) == config
    assert config.params["source"] == "print(1)\n"  # the source judged (testlib.h inlined)
    assert [f.name for f in CHECKER_PARAMS_TYPE] == [
        name for name in accepted_params(PROGRAM) if name != "testlib"
    ]


def test_the_printed_table_has_every_problem() -> None:
    text = verdict_table(
        {
            "b": {"verdict": "kept", "tpr": 1.0, "tnr": 1.0, "accepted_programs": 2,
                  "incorrect_programs": 1},
            "a": {"verdict": "checker_accepts_incorrect_program", "tpr": 1.0, "tnr": 0.0,
                  "accepted_programs": 1, "incorrect_programs": 1},
        }
    )  # fmt: skip
    lines = text.splitlines()
    assert lines[0].split() == ["problem", "verdict", "TPR", "TNR", "accepted", "incorrect"]
    assert lines[1].split() == ["a", "checker_accepts_incorrect_program", "1.00", "0.00", "1", "1"]
    assert lines[2].split()[:2] == ["b", "kept"]


def test_editing_a_checker_makes_the_output_out_of_date(tmp_path: Path) -> None:
    folder = tmp_path / "checkers"
    folder.mkdir()
    cfg = DataConfig(
        source="sample", out_dir=str(tmp_path / "out"), checkers=CheckersConfig(folder=str(folder))
    )
    first = prepare(cfg, progress=False, log=lambda _: None)
    assert not first.skipped and first.manifest["checkers"] == {}
    assert prepare(cfg, progress=False, log=lambda _: None).skipped
    (folder / "some problem.py").write_text("import sys\nsys.exit(0)\n")
    assert not prepare(cfg, progress=False, log=lambda _: None).skipped
