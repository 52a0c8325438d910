"""CheckerConfig: a checker and its parameters, validated, to and from JSON dicts."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codefu_sandbox import CheckerConfig
from codefu_sandbox.checker_runner import CheckerError
from codefu_sandbox.checkers import bind, program
from codefu_sandbox.judge import checker_config
from codefu_sandbox.languages.cpp import with_testlib

rules = st.fixed_dictionaries(
    {},
    optional={
        "tolerance": st.sampled_from([1e-4, 1e-6, 1e-9, 0.0]),
        "tolerance_mode": st.sampled_from(["absolute", "relative", "absolute_or_relative"]),
        "real_numbers": st.booleans(),
        "any_case_words": st.lists(st.from_regex(r"[A-Za-z]{1,6}", fullmatch=True), max_size=4),
    },
)


@given(params=rules)
def test_to_dict_and_from_dict_round_trip_through_json(params: dict[str, object]) -> None:
    config = CheckerConfig("codecontests", params)
    data = json.loads(json.dumps(config.to_dict()))
    assert data == {"name": "codecontests", "params": params}
    again = CheckerConfig.from_dict(data)
    assert again == config and hash(again) == hash(config)


def test_defaults_and_params_left_out() -> None:
    assert CheckerConfig().to_dict() == {"name": "tokens", "params": {}}
    assert CheckerConfig.from_dict({"name": "yesno"}) == CheckerConfig("yesno")
    assert CheckerConfig.from_dict({"name": "yesno", "params": None}) == CheckerConfig("yesno")


def test_word_collections_become_json_lists() -> None:
    config = CheckerConfig("codecontests", {"any_case_words": ("YES", "NO")})
    assert config.to_dict()["params"] == {"any_case_words": ["YES", "NO"]}
    unordered = CheckerConfig("codecontests", {"any_case_words": {"NO", "YES"}})
    assert unordered.to_dict()["params"] == {"any_case_words": ["NO", "YES"]}


def test_params_are_copied() -> None:
    params: dict[str, object] = {"tolerance": 1e-4}
    config = CheckerConfig("codecontests", params)
    params["tolerance"] = 1.0
    assert config.params == {"tolerance": 1e-4}


def test_unknown_parameter_names_the_accepted_ones() -> None:
    with pytest.raises(ValueError, match="tolerance, tolerance_mode, real_numbers, any_case_words"):
        CheckerConfig("codecontests", {"tolerence": 1e-4})
    with pytest.raises(ValueError, match="precision"):
        CheckerConfig.from_dict({"name": "floats", "params": {"tolerance": 1e-4}})
    with pytest.raises(ValueError, match="its parameters are none"):
        CheckerConfig("yesno", {"any_case_words": ["YES"]})


def test_unknown_checker_names_the_choices() -> None:
    with pytest.raises(ValueError, match="codecontests"):
        CheckerConfig("codecontest")
    with pytest.raises(ValueError, match="unknown checker"):
        CheckerConfig.from_dict({"name": "no/such/checker"})


@pytest.mark.parametrize(
    "data",
    [
        {"params": {}},
        {"name": "tokens", "parms": {}},
        {"name": "codecontests", "params": [["tolerance", 1e-4]]},
        {"name": 3},
        ["codecontests"],
    ],
)
def test_malformed_dicts_are_refused(data: object) -> None:
    with pytest.raises(ValueError, match="checker"):
        CheckerConfig.from_dict(data)  # type: ignore[arg-type]


def test_an_external_checker_program_takes_only_a_timeout(tmp_path: Path) -> None:
    program = tmp_path / "check.sh"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(program.stat().st_mode | stat.S_IEXEC)
    assert CheckerConfig(str(program), {"timeout": 5}).params == {"timeout": 5}
    assert CheckerConfig(f"testlib:{program}").to_dict()["name"] == f"testlib:{program}"
    with pytest.raises(ValueError, match="timeout"):
        CheckerConfig(str(program), {"tolerance": 1e-4})
    with pytest.raises(ValueError, match="seconds > 0"):
        CheckerConfig(str(program), {"timeout": 0})


def test_the_judge_takes_a_name_with_params_or_a_config() -> None:
    config = CheckerConfig("codecontests", {"tolerance": 1e-4})
    assert checker_config("codecontests", {"tolerance": 1e-4}) == config
    assert checker_config(config) is config
    assert checker_config("tokens", None) == CheckerConfig()
    with pytest.raises(ValueError, match=r"CheckerConfig\.params"):
        checker_config(config, {"tolerance": 1e-3})
    with pytest.raises(ValueError, match="tolerance"):
        checker_config("codecontests", {"tolerence": 1e-4})


def test_a_checker_program_configuration_is_checked() -> None:
    config = CheckerConfig("program", {"source": "int main(){}", "language": "cpp"})
    assert CheckerConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match="language must be one of cpp, python"):
        CheckerConfig("program", {"source": "x", "language": "ruby"})
    with pytest.raises(ValueError, match="`source` must be"):
        CheckerConfig("program", {"language": "python"})
    with pytest.raises(ValueError, match="time_seconds must be > 0"):
        CheckerConfig("program", {"source": "x", "time_seconds": 0})
    with pytest.raises(ValueError, match="takes no parameter 'sandbox'"):
        CheckerConfig("program", {"source": "x", "sandbox": None})


def test_a_checker_program_never_runs_outside_the_sandbox() -> None:
    with pytest.raises(ValueError, match="only in the judge's sandbox"):
        program.check("1", "1", source="import sys\nsys.exit(0)\n", language="python")


def test_a_checker_program_is_configured_and_bound_as_any_checker() -> None:
    config = program.config("import sys\n", "python", time_seconds=2, memory_bytes=1 << 28)
    assert config == CheckerConfig(
        "program",
        {
            "source": "import sys\n",
            "language": "python",
            "time_seconds": 2.0,
            "memory_bytes": 1 << 28,
        },
    )
    assert "testlib" not in config.params  # no path: the source stands alone
    assert program.config("x", testlib="/t.h").params["testlib"] == "/t.h"
    bound = bind(config.name, config.params, sandbox=None, program="unused")
    assert bound.keywords == {**config.params, "sandbox": None}  # only what `check` takes
    with pytest.raises(ValueError, match="only in the judge's sandbox"):
        bound("1", "1", input="")


def test_testlib_h_is_the_users_copy(tmp_path: Path) -> None:
    source = '#include <cstdio>\n#include "testlib.h"\nint main() { return ok(); }\n'
    with pytest.raises(CheckerError, match=r"no testlib\.h was given"):
        with_testlib(source, "")
    with pytest.raises(CheckerError, match=r"testlib\.h not found"):
        with_testlib(source, tmp_path / "missing.h")
    header = tmp_path / "testlib.h"
    header.write_text("inline int ok() { return 0; }\n")
    inlined = with_testlib(source, header)
    assert "inline int ok()" in inlined and "testlib.h" not in inlined
    assert inlined.startswith("#include <cstdio>\n")
    plain = "int main() { return 0; }\n"
    assert with_testlib(plain, "") == plain  # no include: no header needed
