from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codefu_data.config import DEFAULT_INSTRUCTIONS, PromptConfig, check_template
from codefu_data.prompts import (
    build_messages,
    choose_instruction,
    format_memory_limit,
    format_time_limit,
)

STATEMENT = "Given n, print n squared.\n\nInput\n\nOne integer n.\n\nOutput\n\nOne integer."


def test_default_prompt_is_codefu_style_with_limits() -> None:
    msgs = build_messages(
        PromptConfig(),
        name="1_A. Square",
        description=STATEMENT,
        time_limit_seconds=2.0,
        memory_bytes=256_000_000,
    )
    assert [m["role"] for m in msgs] == ["user"]
    assert list(msgs[0]) == ["content", "role"]
    content = msgs[0]["content"]
    assert "<think>" in content and "<code>" in content and "C++" in content
    assert "Problem:\n" + STATEMENT in content
    assert "Time limit per test: 2 seconds" in content
    assert "Memory limit per test: 256 megabytes" in content
    assert "<|im_start|>" not in content  # the tokenizer's chat template adds the markers


def test_python_prompts_ask_for_python_and_cpp_stays_byte_identical() -> None:
    cfg = PromptConfig(persona_probability=0.5)

    def content(name: str, **language: str) -> str:
        msgs = build_messages(
            cfg,
            name=name,
            description=STATEMENT,
            time_limit_seconds=2.0,
            memory_bytes=256_000_000,
            **language,
        )
        return msgs[0]["content"]

    for name in [f"{i}_A. Square" for i in range(40)]:
        cpp = content(name)
        assert cpp == content(name, language="cpp")
        python = content(name, language="python")
        assert "C++" in cpp and "C++" not in python
        # The same instruction and persona, naming Python 3 instead.
        assert python == cpp.replace("C++", "Python 3")
    assert all("C++" in i for i in DEFAULT_INSTRUCTIONS)
    # One default C++ prompt, byte for byte as before Python prompts existed.
    assert content("2_A. Square") == (
        "In your role as an algorithmic problem-solver, here's a programming problem to solve "
        "in C++. Share your reasoning in <think> tags and your code in <code> tags.\n\n"
        f"Problem:\n{STATEMENT}\n\nTime limit per test: 2 seconds\n"
        "Memory limit per test: 256 megabytes"
    )


def test_limit_formatting() -> None:
    assert format_time_limit(1.0) == "1 second"
    assert format_time_limit(0.5) == "0.5 seconds"
    assert format_memory_limit(64_000_000) == "64 megabytes"
    assert format_memory_limit(1 << 28) == "256 MiB"


@given(st.text(min_size=1, max_size=40), st.integers(min_value=0, max_value=5))
def test_instruction_choice_is_deterministic(name: str, seed: int) -> None:
    cfg = PromptConfig(seed=seed)
    first = choose_instruction(cfg, name)
    assert first == choose_instruction(cfg, name)
    assert any(first.endswith(i[1:]) for i in DEFAULT_INSTRUCTIONS)


def test_personas_and_system_message_are_configurable() -> None:
    never = PromptConfig(persona_probability=0.0)
    always = PromptConfig(persona_probability=1.0, personas=["As a tester"], system="Be brief.")
    names = [f"p{i}" for i in range(30)]
    assert all(choose_instruction(never, n) in DEFAULT_INSTRUCTIONS for n in names)
    assert all(choose_instruction(always, n).startswith("As a tester, ") for n in names)
    msgs = build_messages(
        always, name="x", description=STATEMENT, time_limit_seconds=1, memory_bytes=10**6
    )
    assert msgs[0] == {"content": "Be brief.", "role": "system"}
    assert len({choose_instruction(PromptConfig(), n) for n in names}) > 3


def test_custom_template_and_its_checks() -> None:
    cfg = PromptConfig(
        template="[{name}] {description} ({time_limit}, {memory_limit})", instructions=["x"]
    )
    msgs = build_messages(
        cfg, name="N", description=STATEMENT, time_limit_seconds=3, memory_bytes=512_000_000
    )
    assert msgs[0]["content"] == f"[N] {STATEMENT} (3 seconds, 512 megabytes)"
    with pytest.raises(ValueError, match="unknown field"):
        check_template("{description} {rating}")
    with pytest.raises(ValueError, match="must contain"):
        check_template("{instruction}")
    with pytest.raises(ValueError, match="format string"):
        check_template("{description} {")
