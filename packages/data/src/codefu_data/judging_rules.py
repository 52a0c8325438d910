"""Judging rules a Codeforces statement states about output comparison.

A statement often relaxes the exact comparison of the expected output: answer words may be
printed in any letter case ("You can print each letter in any case"), real numbers are
accepted within an error bound ("absolute or relative error does not exceed 10^{-6}"), or
several outputs are valid ("If there are multiple answers, print any", "in any order").
`rules_from_statement` reads these rules from the statement text into the judge's
`codefu_sandbox.rules.JudgingRules` (the judge owns their vocabulary); `truncated_output`
recognises the expected outputs that CodeContests cut off. Pure functions of text, no I/O.
"""

from __future__ import annotations

import math
import re

from codefu_sandbox.rules import JudgingRules

# ---------------------------------------------------------------------------------------------
# The rules


def rules_from_statement(statement: str) -> JudgingRules:
    """The judging rules a problem statement states (see the module docstring)."""
    doc = _Statement(statement)
    tolerance, mode = _tolerance(doc)
    any_answer = _any_answer_accepted(doc)
    order = _output_order_free(doc)
    return JudgingRules(
        any_case_words=_any_case_words(doc),
        float_tolerance=tolerance,
        tolerance_mode=mode,
        several_answers=any_answer or bool(order),
        any_order="" if any_answer else order,
    )


# ---------------------------------------------------------------------------------------------
# Statement layout: sections, sentences, example outputs

_HEADERS = frozenset(
    {"input", "output", "example", "examples", "note", "notes", "interaction", "hack format"}
)
_QUOTE_PAIRS = {'"': '"', "«": "»", "“": "”", "'": "'", "‘": "’", "„": "“"}
_QUOTED_WORD = re.compile(r"[\"«“'‘„]([A-Za-z]+)[\"»”'’“>]")  # «NO> is a real typo
_WORD = re.compile(r"[A-Za-z]+")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n")


class _Statement:
    """A statement split into its prose (examples left out), output part and example outputs.

    The output part is the "Output" section (or "Interaction" for interactive problems) of
    the statement; a statement without headers is all prose and all output part.
    """

    def __init__(self, text: str) -> None:
        lines = text.replace("\r\n", "\n").split("\n")
        prose: list[str] = []
        output: list[str] = []
        example_outputs: list[str] = []
        section = ""  # the current header, lower case
        in_examples = False
        example_part = ""
        for line in lines:
            head = line.strip().lower().rstrip(":")
            if head in _HEADERS:
                if head in ("example", "examples"):
                    in_examples = True
                    example_part = ""
                elif in_examples and head in ("input", "output"):
                    example_part = head
                else:
                    in_examples = False
                    section = head
                continue
            if in_examples:
                if example_part == "output":
                    example_outputs.append(line)
                continue
            prose.append(line)
            if section in ("output", "interaction"):
                output.append(line)
        self.prose = "\n".join(prose)
        self.has_output_section = bool(output)
        self.output = "\n".join(output) if output else self.prose
        self.example_tokens = [tok for line in example_outputs for tok in line.split()]

    def sentences(self, part: str) -> list[str]:
        """`part`'s sentences: split after . ! ? ; and at line breaks."""
        return [s.strip() for s in _SENTENCE_END.split(part) if s.strip()]


# ---------------------------------------------------------------------------------------------
# Float tolerance

_DASH = r"[-−–‐]"
_MANTISSA = r"(?:(?P<m>\d+(?:\.\d+)?)\s*(?:[*x×·⋅]|\\cdot|\\times)\s*)?"
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")
_TOLERANCE_FORMS = (
    # 10^{-6}, 10^{ - 6}, $10^{-6}$; 10^(-6); 10^-6; 10<sup>-6</sup>; 10⁻⁶
    _MANTISSA + r"10\s*\^\s*\{\s*" + _DASH + r"\s*(?P<k1>\d+)\s*\}",
    _MANTISSA + r"10\s*\^\s*\(\s*" + _DASH + r"\s*(?P<k2>\d+)\s*\)",
    _MANTISSA + r"10\s*\^\s*" + _DASH + r"\s*(?P<k3>\d+)",
    _MANTISSA + r"10\s*<sup>\s*" + _DASH + r"\s*(?P<k4>\d+)\s*</sup>",
    _MANTISSA + r"10\s*⁻\s*(?P<k5>[⁰¹²³⁴⁵⁶⁷⁸⁹]+)",
    # 10 - 6, 10  - 4, 10-6: the superscript lost in the dataset
    _MANTISSA + r"10\s*" + _DASH + r"\s*(?P<k6>\d+)",
    # 1e-6, 1E-06, 2.5e-7
    r"(?P<em>\d+(?:\.\d+)?)[eE]" + _DASH + r"(?P<ek>\d+)",
    # 0.000001
    r"(?P<dec>0\.\d*[1-9]\d*)",
)
_TOLERANCE_FULL = [re.compile(r"\$?\s*" + form + r"\s*\$?") for form in _TOLERANCE_FORMS]
# The same spellings inside a sentence (group names dropped: they repeat across forms).
_TOLERANCE_ANYWHERE = re.compile(
    "|".join("(?:" + re.sub(r"\(\?P<\w+>", "(?:", form) + ")" for form in _TOLERANCE_FORMS)
)
_MAX_EXPONENT = 30
_ERROR_SENTENCE = re.compile(
    r"\berrors?\b|\bprecision\b|\bdiffers?\b|\bdifference\b|\btolerance\b|\baccuracy\b",
    re.IGNORECASE,
)
_NOT_AN_ERROR_BOUND = re.compile(
    r"compil|run-?time error|error message|absolute value of|absolute difference",
    re.IGNORECASE,
)


def parse_tolerance(text: str) -> float | None:
    """One spelling of 10^-k (or m·10^-k) → its value; None if `text` is not one.

    Spellings: 10^{-6}, 10^-6, 10^{ - 6}, 10^(-6), $10^{-6}$, 10<sup>-6</sup>, 10⁻⁶,
    10 - 6 and 10-6 (the superscript lost), 1e-6, 0.000001, each optionally after a
    mantissa such as "2 · ". Only values in (0, 1) count; never raises.
    """
    try:
        if not isinstance(text, str) or len(text) > 100:
            return None
        stripped = text.strip()
        for pattern in _TOLERANCE_FULL:
            match = pattern.fullmatch(stripped)
            if match is not None:
                return _tolerance_value(match)
        return None
    except (ValueError, OverflowError, ArithmeticError):
        return None


def _tolerance_value(match: re.Match[str]) -> float | None:
    groups = match.groupdict()
    if groups.get("dec"):
        value = float(groups["dec"])
    else:
        digits = next(
            (groups[g] for g in ("k1", "k2", "k3", "k4", "k5", "k6", "ek") if groups.get(g)),
            None,
        )
        if digits is None:
            return None
        exponent = int(digits.translate(_SUPERSCRIPT))
        if not 1 <= exponent <= _MAX_EXPONENT:
            return None
        mantissa = groups.get("m") or groups.get("em") or "1"
        value = float(f"{mantissa}e-{exponent}")
    if not (math.isfinite(value) and 0 < value < 1):
        return None
    return value


def _tolerance(doc: _Statement) -> tuple[float | None, str]:
    """The first error bound stated in a sentence about error/precision, and its mode.

    The mode is what that sentence (or the next, which often holds the formal
    |a - b| / max(1, |b|) form) names; a bound that names neither absolute nor relative is
    read as Codeforces' usual checker, absolute or relative.
    """
    sentences = doc.sentences(doc.prose)
    for i, sentence in enumerate(sentences):
        if not _ERROR_SENTENCE.search(sentence):
            continue
        cleaned = _NOT_AN_ERROR_BOUND.sub(" ", sentence)
        if not _ERROR_SENTENCE.search(cleaned):
            continue
        for match in _TOLERANCE_ANYWHERE.finditer(cleaned):
            value = parse_tolerance(match.group(0))
            if value is None:
                continue
            context = (cleaned + " " + " ".join(sentences[i + 1 : i + 2])).lower()
            absolute = "absolute" in context
            relative = "relative" in context or re.search(r"max\s*\{?\s*\(\s*1", context)
            if relative and not absolute and "max" not in context:
                return value, "relative"
            if absolute and not relative:
                return value, "absolute"
            return value, "absolute_or_relative"
    return None, ""


# ---------------------------------------------------------------------------------------------
# Answer words printable in any letter case

_CASE_PHRASES = re.compile(
    r"""
      \bin\s+(?:any|an?\s+arbitrary|arbitrary)\s+(?:letter\s+)?(?:case|register)\b
    | \bcase[-\s]?insensitive\b
    | \bcase\s+(?:of\s+(?:each|every|the|all|any)\s+(?:letters?|characters?)\s+)?
        (?:does\s+not|doesn't|do\s+not|don't)\s+matter
    | \b(?:letters?|characters?)'?\s+case\s+(?:does\s+not|doesn't)\s+matter
    | \b(?:upper|lower)(?:[-\s]?case)?-?\s+or\s+(?:in\s+)?(?:upper|lower)[-\s]?case\b
    | \b(?:upper|lower)\s+or\s+(?:upper|lower)\s+case\b
    | \bchoose\s+the\s+case\b
    """,
    re.IGNORECASE | re.VERBOSE,
)
# Before the phrase, the sentence must be about printed letters: "You can print each letter
# in any case", "print DA in any register", not "In any case, the minimum ... equals 2".
_CASE_SUBJECT = re.compile(
    r"\b(?:print|output|letters?|characters?|answers?|words?|strings?|respon\w*|yes|no)\b|[\"«“']",
    re.IGNORECASE,
)
_OUTPUT_TERMS = re.compile(r"\b(?:print\w*|output\w*|answers?|respon\w*)\b", re.IGNORECASE)
_INPUT_TERMS = re.compile(r"\b(?:input|given|consists?|consisting)\b", re.IGNORECASE)


def _case_sentences(doc: _Statement) -> list[str]:
    """Sentences that allow printing answer letters in any case.

    In the output part any such sentence counts; elsewhere only one that speaks of printing
    or answers and not of the input (the letters' case of input strings is no output rule).
    """
    found: list[str] = []
    output_sentences = set(doc.sentences(doc.output))
    for sentence in doc.sentences(doc.prose):
        match = _CASE_PHRASES.search(sentence)
        if match is None:
            continue
        # "in any case" must follow its subject; the other phrases may precede it
        # ("Output is case-insensitive", "The case of each letter does not matter").
        before_only = match.group(0).lower().startswith("in ")
        if not _CASE_SUBJECT.search(sentence[: match.start()] if before_only else sentence):
            continue
        in_output = sentence in output_sentences and doc.has_output_section
        if not in_output and (not _OUTPUT_TERMS.search(sentence) or _INPUT_TERMS.search(sentence)):
            continue
        found.append(sentence)
    return found


def _any_case_words(doc: _Statement) -> tuple[str, ...]:
    """Answer words the statement lets a program print in any letter case.

    Once a sentence allows any case (see `_case_sentences`), the answer words are the
    words quoted in the output part or in that sentence ("YES", «NO», 'White') and the
    unquoted words there that the example outputs print ("print DA ... NET", "print Yes").
    Case variants ("yEs, yes, Yes and YES") collapse to the first spelling met.

    If the statement allows any case but names no word this way, the words are the
    alphabetic tokens of its example outputs (the jury's own answer words, e.g. "NO" for a
    "Your response is case-insensitive" problem); with no example either, no word at all,
    so comparison stays exact: never is every token made case-insensitive.
    """
    case_sentences = _case_sentences(doc)
    if not case_sentences:
        return ()
    example_words = {tok.casefold() for tok in doc.example_tokens if _WORD.fullmatch(tok)}
    text = doc.output + "\n" + "\n".join(case_sentences)
    chosen: dict[str, str] = {}  # casefold -> first spelling
    quoted_spans: list[tuple[int, int]] = []
    for match in _QUOTED_WORD.finditer(text):
        word = match.group(1)
        if len(word) < 2 and word.casefold() not in example_words:
            continue  # a quoted letter such as 'a' is about strings, not an answer word
        quoted_spans.append(match.span())
        chosen.setdefault(word.casefold(), word)
    unquoted: dict[str, str] = {}
    for match in _WORD.finditer(text):
        word = match.group(0)
        if any(a <= match.start() < b for a, b in quoted_spans):
            continue
        key = word.casefold()
        # the first spelling with a capital: "print NO" over "there are no such ..."
        if len(word) >= 2 and key in example_words and unquoted.get(key, "a").islower():
            unquoted[key] = word
    for key, word in unquoted.items():
        chosen.setdefault(key, word)
    if not chosen:
        for tok in doc.example_tokens:
            if _WORD.fullmatch(tok):
                chosen.setdefault(tok.casefold(), tok)
    return tuple(sorted(chosen.values()))


# ---------------------------------------------------------------------------------------------
# Several valid outputs

# "If you cannot find any such pair", "do not print any": not "If the answer is not unique, print"
_NEGATION_BEFORE = re.compile(
    r"(?:\bnot|n't|\bcannot|\bnever|\bunable\s+to)\s+(?:(?:be|to|able|even)\s+)*$",
    re.IGNORECASE,
)
_ANY_VERB = re.compile(
    r"\b(?:print|output|find|write)(?:\s+and\s+(?:print|output))?\s+"
    r"(?:(?:out|one|also|just|only)\s+)?any\b"
    r"(?!\s+(?:extra|other|more|additional|spaces?|letters?|characters?|leading|trailing|further)\b)",
    re.IGNORECASE,
)
_ANY_ACCEPTED = re.compile(
    r"""
      \bany\s+of\s+(?:them|these|those|the\s+\w+)\b[^.]*?
        \b(?:is|are|will\s+be|can\s+be)\s+(?:also\s+)?(?:correct|accepted|valid|acceptable|found)
    | \bany\s+(?:such|suitable|valid|correct)\s+\w+\s+if\s+(?:there\s+are\s+)?
        (?:many|multiple|several)
    | \b(?:answer|solution)s?\s+(?:is|are)\s*(?:not|n't)\s+(?:necessarily\s+)?unique
    | \b(?:answer|solution)\s+(?:may|might|can)\s+(?:not|n't)\s+be\s+unique
    | \bnot\s+unique\b.*\bany\b
    | \b(?:print|output)\b[^.—]{0,60}—\s*any\b
    | \bexamples\s+\(not\s+all\)\s+of\s+correct\s+answers
    | \ball\s+possible\s+correct\s+answers\b
    | \bmany\s+different\s+answers\b
    """,
    re.IGNORECASE | re.VERBOSE,
)
_AND_ANY = re.compile(r"\b(?:and|or)\s+any\s+(?:valid|suitable|correct)\b", re.IGNORECASE)
_ORDER_FREE = re.compile(
    r"\bin\s+(?:any|an?\s+arbitrary|arbitrary)\s+order\b"
    r"|\border\s+(?:of\s+(?:the\s+)?\w+\s+)?(?:does\s+not|doesn't)\s+matter\b",
    re.IGNORECASE,
)
_ONE_LINE = re.compile(
    r"\b(?:each|every|the|a|one|same|first|second|third|next|that)\s+lines?\b"
    r"|\bin\s+the\s+lines\b",
    re.IGNORECASE,
)
_OUTPUT_VERB = re.compile(r"\b(?:print\w*|output\w*)\b", re.IGNORECASE)
_NOT_OUTPUT_ORDER = re.compile(
    r"\b(?:given|input|distinct\s+integers\s+from\s+1\s+to|permutation)\b", re.IGNORECASE
)


def _any_answer_accepted(doc: _Statement) -> bool:
    """The statement says any of several outputs is accepted ("print any of them", ...)."""
    for sentence in doc.sentences(doc.output) if doc.has_output_section else ():
        if _AND_ANY.search(sentence):  # '* or "YES" and any valid triple a, b and c'
            return True
    for sentence in doc.sentences(doc.prose):
        for match in _ANY_VERB.finditer(sentence):
            if not _NEGATION_BEFORE.search(sentence[: match.start()]):
                return True
        if _ANY_ACCEPTED.search(sentence):
            return True
    return False


def _output_order_free(doc: _Statement) -> str:
    """How the statement lets the output's items come in any order: "" not at all.

    "You may print the indices in any order", or, in the output part, "b_1, …, b_k can be
    in any order" / "The order of packets doesn't matter"; not "the spells can be used in
    any order" nor "the numbers are given in arbitrary order". "line" when the sentence
    speaks of a line ("In each line, the two names can be printed in any order", "In the
    second line print k integers in any order"): the order within each line; else "all".
    """
    output_sentences = set(doc.sentences(doc.output)) if doc.has_output_section else set()
    for sentence in doc.sentences(doc.prose):
        if not _ORDER_FREE.search(sentence) or _NOT_OUTPUT_ORDER.search(sentence):
            continue
        if _OUTPUT_VERB.search(sentence) or sentence in output_sentences:
            return "line" if _ONE_LINE.search(sentence) else "all"
    return ""


# ---------------------------------------------------------------------------------------------
# Truncated expected outputs

# CodeContests cut long expected outputs to 511 characters, counting a line break as two (it
# was cut escaped), and appended "...": every cut-off output of the codefu_easy set is one.
_CUT_LENGTH = 511
_ELLIPSIS = "..."


def truncated_output(expected: str) -> bool:
    """True for an expected output that the dataset visibly cut off ("… 17 18...").

    The cut: the output ends with "..." (nothing after), and the text before it is at most
    511 characters long but at least 511 when each line break counts twice. An answer that
    legitimately ends in dots (a grid of '.', "GOTO Vasilisa.") is not of that length, and a
    grid whose equal-length rows all end in dots is never counted.
    """
    if not expected.endswith(_ELLIPSIS):
        return False
    body = expected[: -len(_ELLIPSIS)]
    breaks = body.count("\n") + body.count("\r")
    if not len(body) <= _CUT_LENGTH <= len(body) + breaks:
        return False
    rows = expected.split("\n")
    dot_grid = len(rows) >= 2 and len({len(r) for r in rows}) == 1 and set(rows[-1]) == {"."}
    return not dot_grid
