"""Prompts: a problem statement and its limits → chat messages, from a configurable template.

A call-based problem (a function's return value is judged: LiveCodeBench's functional
problems, TACO/APPS with `fn_name`) adds to its statement what to write: the function to
complete, that it returns its answer rather than printing it, and the starter code in a
code block of the prompts' language (`data.language`).

`data.prompt.style` other than `codefu` is LiveCodeBench's prompt for a model style
(`livecodebench_prompts`): the statement as the row gives it and its starter code, nothing
else of the settings.
"""

from __future__ import annotations

import hashlib

from codefu_data.config import CODEFU_PROMPTS, PromptConfig
from codefu_data.livecodebench_prompts import livecodebench_messages
from codefu_sandbox.languages import DEFAULT_LANGUAGE, get


def format_time_limit(seconds: float) -> str:
    """1.0 → '1 second', 2.5 → '2.5 seconds'."""
    text = f"{seconds:g}"
    return f"{text} second" if text == "1" else f"{text} seconds"


def format_memory_limit(memory_bytes: int) -> str:
    """CodeContests limits are in 10^6-byte megabytes: 256000000 → '256 megabytes'."""
    if memory_bytes % (1 << 20) == 0 and memory_bytes % 1_000_000 != 0:
        return f"{memory_bytes // (1 << 20)} MiB"
    return f"{memory_bytes / 1_000_000:g} megabytes"


def _unit(seed: int, name: str, salt: str) -> float:
    """A deterministic number in [0, 1) from the problem name (same on every machine)."""
    digest = hashlib.sha256(f"{seed}\x00{salt}\x00{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def choose_instruction(cfg: PromptConfig, name: str, language: str = DEFAULT_LANGUAGE) -> str:
    """The instruction for problem `name`: deterministic, optionally with a persona prefix,
    asking for `language`. The instructions name the default language (C++); for another
    language that name is replaced by its `display_name` ("Python 3")."""
    instruction = cfg.instructions[
        int(_unit(cfg.seed, name, "instruction") * len(cfg.instructions))
    ]
    asked = get(language)
    if asked.name != DEFAULT_LANGUAGE:
        instruction = instruction.replace(get(DEFAULT_LANGUAGE).display_name, asked.display_name)
    if cfg.personas and _unit(cfg.seed, name, "persona?") < cfg.persona_probability:
        persona = cfg.personas[int(_unit(cfg.seed, name, "persona") * len(cfg.personas))]
        instruction = f"{persona}, {instruction[:1].lower()}{instruction[1:]}"
    return instruction


def call_format(fn_name: str, starter_code: str, language: str) -> str:
    """What a call-based problem's answer must be, and its starter code (if any) in a code
    block of `language`."""
    text = (
        f"Answer format: complete the function `{fn_name}` (a method of class `Solution` when "
        "the starter code declares one). The tests call it with their arguments and compare "
        "the value it returns: return the answer; do not read the input or print the answer."
    )
    if starter_code.strip():
        text += f"\n\nStarter code:\n```{language}\n{starter_code.rstrip()}\n```"
    return text


def build_messages(
    cfg: PromptConfig,
    *,
    name: str,
    description: str,
    time_limit_seconds: float,
    memory_bytes: int,
    language: str = DEFAULT_LANGUAGE,
    call: str | None = None,
    starter_code: str | None = None,
) -> list[dict[str, str]]:
    """Chat messages (`[{"content", "role"}]`, the key order of the processed schema) asking
    for an answer in `language` (`data.language`). `call`: the function a call-based
    problem's answer defines (its `starter_code` then follows the statement; a problem read
    back from a prepared prompt has it in its statement already: `starter_code` None).
    LiveCodeBench's styles (`cfg.style`) take the statement and starter code as they are."""
    if cfg.style != CODEFU_PROMPTS:
        return livecodebench_messages(cfg.style, description, starter_code or "")
    statement = description.strip()
    if call is not None and starter_code is not None:
        statement += "\n\n" + call_format(call, starter_code, language)
    content = cfg.template.format(
        instruction=choose_instruction(cfg, name, language),
        description=statement,
        time_limit=format_time_limit(time_limit_seconds),
        memory_limit=format_memory_limit(memory_bytes),
        name=name,
    )
    messages = [{"content": content, "role": "user"}]
    if cfg.system:
        messages.insert(0, {"content": cfg.system, "role": "system"})
    return messages
