"""Extract the C++ answer from a model response.

Rules, in order:

1. Reasoning is not an answer. When the response has a ``</think>`` tag, only the text
   after the last one is searched. When it opens ``<think>`` and never closes it (a
   generation cut off while reasoning), the reasoning is dropped and only the text before
   ``<think>`` is searched, which usually means there is no code.
2. The last ``<code>…</code>`` block wins (an unterminated ``<code>`` runs to the end).
   Inside it, the last fenced block; with no fence, its whole content.
3. Else the last fenced block tagged ``cpp``, ``c++``, ``cc`` or ``cxx`` (any case). A
   fence that is never closed runs to the end of the text.
4. Else the last untagged fenced block that looks like a C++ program (has ``main``).

Returns the code stripped of surrounding blank space, or ``None`` when there is none.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

__all__ = ["CPP_TAGS", "FencedBlock", "extract_code", "fenced_blocks"]

CPP_TAGS = frozenset({"cpp", "c++", "cc", "cxx"})

_THINK_CLOSE = re.compile(r"</think\s*>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think\s*>", re.IGNORECASE)
_CODE_OPEN = re.compile(r"<code(?:\s[^>]*)?>", re.IGNORECASE)
_CODE_CLOSE = re.compile(r"</code\s*>", re.IGNORECASE)
# A fence line: up to 3 spaces of indent, 3+ backticks or tildes, then an info string.
_FENCE = re.compile(r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$")
_LOOKS_LIKE_PROGRAM = re.compile(r"\bmain\s*\(")


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


def _from_code_tag(answer: str) -> str | None:
    opens = list(_CODE_OPEN.finditer(answer))
    if not opens:
        return None
    start = opens[-1].end()
    close = _CODE_CLOSE.search(answer, start)
    content = answer[start : close.start()] if close is not None else answer[start:]
    blocks = fenced_blocks(content)
    if blocks:
        return _clean(blocks[-1].body)
    if "<" not in content and re.search(r"&(lt|gt|amp|quot|#\d+);", content):
        content = html.unescape(content)
    return _clean(content)


def extract_code(text: str | None) -> str | None:
    """The C++ code a response answers with, or ``None`` (rules in the module docstring)."""
    if not text:
        return None
    answer = _final_answer(text)
    if _CODE_OPEN.search(answer):
        code = _from_code_tag(answer)
        if code is not None:
            return code
    blocks = fenced_blocks(answer)
    for block in reversed(blocks):
        if block.tag in CPP_TAGS:
            code = _clean(block.body)
            if code is not None:
                return code
    for block in reversed(blocks):
        if block.tag == "" and _LOOKS_LIKE_PROGRAM.search(block.body):
            return _clean(block.body)
    return None
