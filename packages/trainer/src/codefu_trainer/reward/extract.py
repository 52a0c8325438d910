"""Extract the answer, and its language, from a model response.

Rules, in order (``languages``: what the run accepts, in order; the first is its main one):

1. Reasoning is not an answer. When the response has a ``</think>`` tag, only the text
   after the last one is searched. When it opens ``<think>`` and never closes it (a
   generation cut off while reasoning), the reasoning is dropped and only the text before
   ``<think>`` is searched, which usually means there is no code.
2. The last ``<code>…</code>`` block wins (an unterminated ``<code>`` runs to the end).
   Inside it, the last fenced block; with no fence, its whole content. Its language is the
   one the fence's tag names (a judge language's ``fence_tags``), else the run's first
   language.
3. Else the last fenced block tagged in a language the run accepts (the languages'
   ``fence_tags``: ``cpp``, ``c++``, ``cc``, ``cxx`` → C++; ``python``, ``py``,
   ``python3`` → Python; any case). A fence that is never closed runs to the end of the text.
4. Else the last untagged fenced block that looks like a program in the run's first
   language (its ``program_pattern``: for C++ one that has ``main(``; for Python one that
   reads or writes, ``input(``, ``print(``, ``sys.stdin``/``sys.stdout``, ``open(0``), so
   that a block of sample input is not taken for code.
5. Else the last fenced block tagged in a language the run does not accept: returned with
   that language, for the reward to give the no-code reward with the reason (``LANGUAGE``).

The languages and what names and recognises them are the judge's registry
(``codefu_sandbox.languages``). For a run in the default language alone (C++) rules 1-4 are
the C++ rules as they always were.

``livecodebench_code`` is LiveCodeBench's rule instead (its ``extract_code`` for its chat
and reasoning model styles): the lines strictly between the last two lines that hold three
backticks anywhere, whatever their tag and wherever they are (reasoning included); the
empty string when fewer than two lines hold them. ``answer_for`` applies the rule a run
chooses (``reward.extraction``).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from codefu_sandbox.languages import DEFAULT_LANGUAGE, for_fence_tag, get
from codefu_trainer.reward.config import Extraction

__all__ = [
    "Answer",
    "FencedBlock",
    "answer_for",
    "extract_answer",
    "extract_code",
    "fenced_blocks",
    "livecodebench_code",
    "tag_language",
]

_THINK_CLOSE = re.compile(r"</think\s*>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think\s*>", re.IGNORECASE)
_CODE_OPEN = re.compile(r"<code(?:\s[^>]*)?>", re.IGNORECASE)
_CODE_CLOSE = re.compile(r"</code\s*>", re.IGNORECASE)
# A fence line: up to 3 spaces of indent, 3+ backticks or tildes, then an info string.
_FENCE = re.compile(r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$")


def tag_language(tag: str) -> str | None:
    """The judge language a fence's tag names (any case), None when none does."""
    found = for_fence_tag(tag)
    return found.name if found is not None else None


@dataclass(frozen=True)
class Answer:
    """The code a response answers with and its judge language (a registered name)."""

    code: str
    language: str


@dataclass(frozen=True)
class FencedBlock:
    """A fenced code block: its language tag (lower case, first word of the info string)."""

    tag: str
    body: str
    closed: bool


def fenced_blocks(text: str) -> list[FencedBlock]:
    """All fenced blocks of ``text`` in order; an unclosed last fence runs to the end."""
    blocks: list[FencedBlock] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if match is None:
            i += 1
            continue
        fence = match.group("fence")
        info = match.group("info").strip()
        tag = info.split()[0].lower() if info else ""
        body: list[str] = []
        j = i + 1
        closed = False
        while j < len(lines):
            close = _FENCE.match(lines[j])
            if (
                close is not None
                and close.group("fence")[0] == fence[0]
                and len(close.group("fence")) >= len(fence)
                and not close.group("info").strip()
            ):
                closed = True
                break
            body.append(lines[j])
            j += 1
        blocks.append(FencedBlock(tag=tag, body="\n".join(body), closed=closed))
        i = j + 1
    return blocks


def _final_answer(text: str) -> str:
    """The part of the response that can hold the answer (drops reasoning)."""
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        return text[closes[-1].end() :]
    opened = _THINK_OPEN.search(text)
    if opened is not None:
        return text[: opened.start()]
    return text


def _clean(code: str) -> str | None:
    code = code.strip("\n").rstrip()
    # Keep the first line's indentation relative to the rest, but drop leading blank lines.
    return code if code.strip() else None


def _from_code_tag(answer: str, default: str) -> Answer | None:
    opens = list(_CODE_OPEN.finditer(answer))
    if not opens:
        return None
    start = opens[-1].end()
    close = _CODE_CLOSE.search(answer, start)
    content = answer[start : close.start()] if close is not None else answer[start:]
    blocks = fenced_blocks(content)
    if blocks:
        code = _clean(blocks[-1].body)
        language = tag_language(blocks[-1].tag) or default
        return Answer(code, language) if code is not None else None
    if "<" not in content and re.search(r"&(lt|gt|amp|quot|#\d+);", content):
        content = html.unescape(content)
    code = _clean(content)
    return Answer(code, default) if code is not None else None


def _last_tagged(
    blocks: list[FencedBlock], accepted: bool, languages: tuple[str, ...]
) -> Answer | None:
    """The last non-empty block tagged in a language the run accepts (or, with
    ``accepted=False``, in a known language it does not accept)."""
    for block in reversed(blocks):
        language = tag_language(block.tag)
        if language is not None and (language in languages) == accepted:
            code = _clean(block.body)
            if code is not None:
                return Answer(code, language)
    return None


def extract_answer(
    text: str | None, languages: tuple[str, ...] = (DEFAULT_LANGUAGE,)
) -> Answer | None:
    """The code a response answers with and its language, or ``None`` (rules in the module
    docstring). The language is outside ``languages`` only when rule 5 found it."""
    if not text:
        return None
    if not languages:
        raise ValueError("languages is empty: name the languages the run accepts (e.g. cpp)")
    default = languages[0]
    first = get(default)
    answer = _final_answer(text)
    if _CODE_OPEN.search(answer):
        found = _from_code_tag(answer, default)
        if found is not None:
            return found
    blocks = fenced_blocks(answer)
    found = _last_tagged(blocks, True, languages)
    if found is not None:
        return found
    for block in reversed(blocks):
        if block.tag == "" and first.looks_like_program(block.body):
            code = _clean(block.body)
            if code is not None:
                return Answer(code, default)
    return _last_tagged(blocks, False, languages)


def extract_code(text: str | None) -> str | None:
    """The code in the default language (C++) a response answers with, or ``None`` (the
    rules 1-4 of a run in that language alone)."""
    found = extract_answer(text, (DEFAULT_LANGUAGE,))
    return found.code if found is not None and found.language == DEFAULT_LANGUAGE else None


LIVECODEBENCH_FENCE = "```"


def livecodebench_code(text: str) -> str:
    """LiveCodeBench's extraction: the lines between the last two lines holding a fence
    (three backticks anywhere in the line), joined by newlines; "" with fewer than two."""
    lines = text.split("\n")
    fences = [i for i, line in enumerate(lines) if LIVECODEBENCH_FENCE in line]
    if len(fences) < 2:
        return ""
    return "\n".join(lines[fences[-2] + 1 : fences[-1]])


def answer_for(
    text: str | None, languages: tuple[str, ...], extraction: Extraction
) -> Answer | None:
    """The code a response answers with under `extraction` (``reward.extraction``): this
    project's rules (`extract_answer`), or LiveCodeBench's (`livecodebench_code`) or the
    response as it is (``none``), both then in the run's first language. ``None`` when
    there is no code (an empty or blank one)."""
    if extraction is Extraction.codefu:
        return extract_answer(text, languages)
    if not languages:
        raise ValueError("languages is empty: name the languages the run accepts (e.g. python)")
    code = text or ""
    if extraction is Extraction.livecodebench:
        code = livecodebench_code(code)
    return Answer(code, languages[0]) if code.strip() else None
