"""Code extraction: examples from real model output shapes and properties."""

from __future__ import annotations

import html
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codefu_trainer.reward.config import Extraction
from codefu_trainer.reward.extract import (
    Answer,
    answer_for,
    extract_answer,
    extract_code,
    fenced_blocks,
    livecodebench_code,
)

PROGRAM = '#include <bits/stdc++.h>\nint main() {\n    std::puts("hi");\n}'
PY = "import sys\nn = int(sys.stdin.readline())\nprint(n * 2)"
BOTH = ("cpp", "python")


@pytest.mark.parametrize("tag", ["cpp", "c++", "cc", "cxx", "C++", "CPP", "cpp17x"[:3]])
def test_tagged_fences(tag: str) -> None:
    text = f"Here it is:\n```{tag}\n{PROGRAM}\n```\nDone."
    assert extract_code(text) == PROGRAM


def test_reference_missed_cplusplus_fence() -> None:
    assert extract_code(f"```c++\n{PROGRAM}\n```") == PROGRAM


def test_last_tagged_block_wins_over_earlier_and_other_languages() -> None:
    text = (
        "First try:\n```cpp\nint main(){return 1;}\n```\n"
        f"Better:\n```cpp\n{PROGRAM}\n```\n"
        "Sample run:\n```text\n3\n1 2 3\n```\n"
        "In Python:\n```python\nprint(1)\n```\n"
    )
    assert extract_code(text) == PROGRAM


def test_unterminated_fence_runs_to_end() -> None:
    assert extract_code(f"Solution:\n```cpp\n{PROGRAM}\n") == PROGRAM


def test_code_tag_without_fence() -> None:
    assert extract_code(f"Answer: <code>\n{PROGRAM}\n</code> end") == PROGRAM


def test_code_tag_last_fence_inside_it() -> None:
    text = (
        f"```cpp\nint main(){{}}\n```\n<code>\n```\nignored draft\n```\n```cpp\n{PROGRAM}\n```\n"
        "</code>\n"
    )
    assert extract_code(text) == PROGRAM


def test_last_code_tag_wins_and_beats_later_fences() -> None:
    text = f"<code>int main(){{}}</code> then <code>{PROGRAM}</code>\n```cpp\nint x;\n```"
    assert extract_code(text) == PROGRAM


def test_unterminated_code_tag() -> None:
    assert extract_code(f"<code>\n{PROGRAM}") == PROGRAM


def test_html_escaped_code_tag_is_unescaped() -> None:
    escaped = PROGRAM.replace("<", "&lt;").replace(">", "&gt;")
    assert extract_code(f"<code>{escaped}</code>") == PROGRAM


def test_think_section_code_is_ignored_when_final_answer_exists() -> None:
    text = (
        "<think>\nMaybe:\n```cpp\nint main(){return 7;}\n```\nNo, wrong.\n</think>\n"
        f"Final:\n```cpp\n{PROGRAM}\n```"
    )
    assert extract_code(text) == PROGRAM


def test_think_without_open_tag_r1_style() -> None:
    text = f"Let me think.\n```cpp\nint main(){{return 7;}}\n```\n</think>\n```cpp\n{PROGRAM}\n```"
    assert extract_code(text) == PROGRAM


def test_final_answer_without_code_gives_none_even_if_reasoning_has_code() -> None:
    text = "<think>```cpp\nint main(){}\n```</think>\nI cannot solve this."
    assert extract_code(text) is None


def test_unclosed_think_is_not_an_answer() -> None:
    assert extract_code(f"<think>\nTrying:\n```cpp\n{PROGRAM}\n```\n and then") is None


def test_untagged_fence_with_main_is_last_resort() -> None:
    assert extract_code(f"```\n{PROGRAM}\n```") == PROGRAM
    assert extract_code("```\n3\n1 2 3\n```") is None


def test_tagged_beats_later_untagged() -> None:
    text = f"```cpp\n{PROGRAM}\n```\n```\nint main(){{return 2;}}\n```"
    assert extract_code(text) == PROGRAM


@pytest.mark.parametrize("text", [None, "", "no code here", "```cpp\n\n```", "<code> </code>"])
def test_no_code(text: str | None) -> None:
    assert extract_code(text) is None


def test_longer_fence_can_contain_shorter() -> None:
    body = "int main() {\n  // ```\n  return 0;\n}"
    assert fenced_blocks(f"````cpp\n{body}\n````")[0].body == body


# Languages ----------------------------------------------------------------------------


@pytest.mark.parametrize("tag", ["python", "py", "python3", "Python", "PY", "Python3"])
def test_python_tags_name_python(tag: str) -> None:
    text = f"Here:\n```{tag}\n{PY}\n```\nDone."
    assert extract_answer(text, BOTH) == Answer(PY, "python")
    assert extract_answer(text, ("python",)) == Answer(PY, "python")


@pytest.mark.parametrize("tag", ["cpp", "c++", "cc", "cxx"])
def test_cpp_tags_name_cpp_in_any_run(tag: str) -> None:
    text = f"```{tag}\n{PROGRAM}\n```"
    assert extract_answer(text) == Answer(PROGRAM, "cpp")
    assert extract_answer(text, ("python", "cpp")) == Answer(PROGRAM, "cpp")


def test_the_last_block_in_an_accepted_language_wins() -> None:
    text = f"```cpp\n{PROGRAM}\n```\nOr in Python:\n```python\n{PY}\n```"
    assert extract_answer(text, BOTH) == Answer(PY, "python")
    # A C++-only run keeps its C++ answer: a later Python block changes nothing.
    assert extract_answer(text) == Answer(PROGRAM, "cpp")
    assert extract_code(text) == PROGRAM
    assert extract_answer(text, ("python",)) == Answer(PY, "python")


def test_a_block_only_in_a_refused_language_is_returned_with_it() -> None:
    text = f"Solution:\n```python\n{PY}\n```"
    assert extract_answer(text) == Answer(PY, "python")  # the reward refuses it: LANGUAGE
    assert extract_code(text) is None
    assert extract_answer(f"```cpp\n{PROGRAM}\n```", ("python",)) == Answer(PROGRAM, "cpp")


def test_untagged_program_in_the_first_language_beats_a_refused_block() -> None:
    text = f"```python\n{PY}\n```\n```\n{PROGRAM}\n```"
    assert extract_answer(text) == Answer(PROGRAM, "cpp")


def test_code_tag_is_in_the_first_language_unless_its_fence_names_one() -> None:
    assert extract_answer(f"<code>\n{PY}\n</code>", ("python",)) == Answer(PY, "python")
    assert extract_answer(f"<code>\n{PY}\n</code>", ("python", "cpp")) == Answer(PY, "python")
    assert extract_answer(f"<code>\n{PROGRAM}\n</code>", BOTH) == Answer(PROGRAM, "cpp")
    fenced = f"<code>\n```python\n{PY}\n```\n</code>"
    assert extract_answer(fenced, BOTH) == Answer(PY, "python")
    assert extract_answer(fenced) == Answer(PY, "python")  # refused by a C++-only run
    untagged = f"<code>\n```\n{PY}\n```\n</code>"
    assert extract_answer(untagged, ("python",)) == Answer(PY, "python")
    assert extract_answer(untagged) == Answer(PY, "cpp")  # C++ as always (a compile error)


def test_untagged_fence_in_a_python_run_must_read_or_write() -> None:
    assert extract_answer(f"```\n{PY}\n```", ("python",)) == Answer(PY, "python")
    assert extract_answer("```\n3\n1 2 3\n```", ("python",)) is None
    for body in ("a = input()\nx = 1", "import sys\nsys.stdout.write('1')", "d = open(0).read()"):
        assert extract_answer(f"```\n{body}\n```", ("python",)) == Answer(body, "python")
    # The run's first language decides: C++ first wants main(, whatever else it accepts.
    assert extract_answer(f"```\n{PY}\n```", BOTH) is None


def test_no_languages_is_an_error() -> None:
    with pytest.raises(ValueError, match="languages is empty"):
        extract_answer("```cpp\nint main(){}\n```", ())


# Properties ---------------------------------------------------------------------------

_SAFE = string.ascii_letters + string.digits + " \t\n;{}()+-*/=#\"'.,:"
prose = st.text(alphabet=_SAFE.replace("\n", " "), max_size=60)
code_line = st.text(alphabet=_SAFE.replace("\n", ""), min_size=1, max_size=40).filter(
    lambda s: s.strip() != ""
)
code_body = st.lists(code_line, min_size=1, max_size=8).map("\n".join)
tags = st.sampled_from(["cpp", "c++", "cc", "CPP", "C++", "cxx"])


@settings(max_examples=150, deadline=None)
@given(before=prose, after=prose, body=code_body, tag=tags)
def test_property_single_block_round_trips(before: str, after: str, body: str, tag: str) -> None:
    text = f"{before}\n```{tag}\n{body}\n```\n{after}"
    assert extract_code(text) == body.strip("\n").rstrip()


@settings(max_examples=150, deadline=None)
@given(first=code_body, last=code_body, mid=prose, tag=tags, closed=st.booleans())
def test_property_last_block_wins(first: str, last: str, mid: str, tag: str, closed: bool) -> None:
    text = f"```cpp\n{first}\n```\n{mid}\n```{tag}\n{last}\n" + ("```\n" if closed else "")
    assert extract_code(text) == last.strip("\n").rstrip()


@settings(max_examples=150, deadline=None)
@given(draft=code_body, final=code_body, talk=prose)
def test_property_reasoning_never_leaks(draft: str, final: str, talk: str) -> None:
    text = f"<think>{talk}\n```cpp\n{draft}\n```\n</think>\n{talk}\n```cpp\n{final}\n```"
    assert extract_code(text) == final.strip("\n").rstrip()
    assert extract_code(f"<think>{talk}\n```cpp\n{draft}\n```\n</think>\n{talk}") is None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("`~<>/codethink+pc\n ab{}"))) | st.text())
def test_property_total_and_from_input(text: str) -> None:
    code = extract_code(text)
    assert code is None or (code.strip() != "" and (code in text or code in html.unescape(text)))


@settings(max_examples=150, deadline=None)
@given(before=prose, cpp=code_body, python=code_body, python_first=st.booleans())
def test_property_python_blocks_never_change_a_cpp_only_answer(
    before: str, cpp: str, python: str, python_first: bool
) -> None:
    cpp_block = f"```cpp\n{cpp}\n```\n"
    py_block = f"```python\n{python}\n```\n"
    blocks = py_block + cpp_block if python_first else cpp_block + py_block
    expected = cpp.strip("\n").rstrip()
    assert extract_answer(f"{before}\n{blocks}") == Answer(expected, "cpp")
    both = extract_answer(f"{before}\n{blocks}", BOTH)
    assert both == (
        Answer(expected, "cpp") if python_first else Answer(python.strip("\n").rstrip(), "python")
    )


def test_livecodebench_takes_the_lines_between_the_last_two_fence_lines() -> None:
    """Its extract_code for its chat and reasoning styles: any line holding three backticks
    counts, whatever its tag, inside <think> or not; fewer than two: no code."""
    draft, final = "print(1)", "print(2)"
    assert livecodebench_code(f"```python\n{draft}\n```\nthen\n```\n{final}\n```\n") == final
    assert livecodebench_code(f"<think>\n```py\n{final}\n```\n</think>\ndone") == final
    # The code, then an example in a block of its own: the example is taken.
    assert livecodebench_code(f"```python\n{final}\n```\nInput:\n```\n3\n```") == "3"
    # A fence indented in a list keeps its indentation; a fence inside a line counts.
    assert livecodebench_code(f"1. code:\n   ```python\n   {final}\n   ```") == f"   {final}"
    assert livecodebench_code(f"x = '```'\n{final}\nend ```") == final
    assert livecodebench_code("no fence at all") == ""
    assert livecodebench_code(f"```python\n{final}") == ""
    assert livecodebench_code("```\n```") == ""


def test_answer_for_applies_the_runs_extraction() -> None:
    text = f"<think>\n```python\n{PY}\n```\n</think>\nAbove."
    assert answer_for(text, BOTH, Extraction.codefu) is None  # reasoning is not an answer
    assert answer_for(text, ("python",), Extraction.livecodebench) == Answer(PY, "python")
    assert answer_for(PY, ("python",), Extraction.none) == Answer(PY, "python")
    assert answer_for("  \n", ("python",), Extraction.none) is None
    assert answer_for("no code", ("python",), Extraction.livecodebench) is None
