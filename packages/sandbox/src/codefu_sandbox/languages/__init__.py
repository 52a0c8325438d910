"""The languages the judge runs: one module each, one registry.

Built in: C++ (`cpp.py`, the default) and Python 3 (`python.py`). A language module
declares a `Language` (its name, how prompts, code fences and datasets name it, how an
untagged program in it looks, its default time factor, its executor: `base.py`). It joins
the registry (`codefu_sandbox.registry.Registry`, the idiom of every registry) by one entry
point in the group `codefu.languages` naming the `Language` instance (or its class), as the
built-ins do in codefu-sandbox's pyproject.toml, loaded in every process that has the
package (the reward's judge workers too); `register(MyLanguage())` adds one to this process:

    [project.entry-points."codefu.languages"]
    go = "my_package.go:LANGUAGE"

Every other module asks the registry (`LANGUAGES`, `get`, `language_of`, `for_suffix`,
`for_fence_tag`, `for_alias`, `default_time_factors`) and names no language.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from codefu_sandbox.languages import cpp
from codefu_sandbox.languages.base import (
    BuildConfig,
    CheckerError,
    Executor,
    Language,
    Program,
)
from codefu_sandbox.registry import Registry

ENTRY_POINT_GROUP = "codefu.languages"
# The language a submission, a checker program or a run is in when none is named.
DEFAULT_LANGUAGE = cpp.LANGUAGE.name


def _language(found: Any) -> Language:
    """A `Language` from what a registration names: an instance, or its class."""
    language = found() if isinstance(found, type) and issubclass(found, Language) else found
    if not isinstance(language, Language):
        raise ValueError(f"register a Language instance, got {found!r}")
    return language


def _shared(language: Language, other: Language) -> str | None:
    """The names `language` claims that already name `other` (name, suffixes, fence tags,
    dataset aliases), or None."""
    taken = (
        {language.name} & {other.name}
        | set(language.suffixes) & set(other.suffixes)
        | set(language.fence_tags) & set(other.fence_tags)
        | set(language.aliases) & set(other.aliases)
    )
    return ", ".join(sorted(taken)) or None


def language_registry() -> Registry[Language]:
    """A registry of the languages of the group `codefu.languages` (`LANGUAGES` is the
    process's)."""
    return Registry(
        "language",
        ENTRY_POINT_GROUP,
        lambda language: language.name,
        accept=_language,
        conflict=_shared,
    )


LANGUAGES = language_registry()
register = LANGUAGES.register
get = LANGUAGES.lookup


def unregister(name: str) -> None:
    """Remove language `name` (ValueError for the default language or an unknown one)."""
    if name == DEFAULT_LANGUAGE:
        raise ValueError(f"the default language {name!r} cannot be unregistered")
    LANGUAGES.unregister(name)


def check_language(name: str) -> str:
    """`name` when the judge has a language so called, else ValueError naming them."""
    return get(name).name


def for_suffix(suffix: str) -> Language | None:
    """The language whose sources have this suffix (".py", any case), None when none."""
    suffix = suffix.lower()
    return next((lang for lang in LANGUAGES.values() if suffix in lang.suffixes), None)


def language_of(path: Path) -> str:
    """The language a source file's suffix names (the default language for any other)."""
    found = for_suffix(path.suffix)
    return found.name if found is not None else DEFAULT_LANGUAGE


def for_fence_tag(tag: str) -> Language | None:
    """The language a code fence's tag names (any case), None when none does."""
    tag = tag.lower()
    return next((lang for lang in LANGUAGES.values() if tag in lang.fence_tags), None)


def for_alias(label: str) -> Language | None:
    """The language a dataset's label names (CodeContests' "CPP", "PYTHON3"), or None."""
    return next((lang for lang in LANGUAGES.values() if label in lang.aliases), None)


def default_time_factors() -> dict[str, float]:
    """Each language's default factor on a problem's time limit."""
    return {name: language.time_factor for name, language in LANGUAGES.items()}


def check_time_factors(factors: Mapping[str, float]) -> dict[str, float]:
    """The per-language time factors with the defaults filled in; ValueError for an
    unknown language or a factor that is not a number > 0."""
    for language, factor in factors.items():
        check_language(language)
        if isinstance(factor, bool) or not isinstance(factor, int | float) or not factor > 0:
            raise ValueError(f"time factor for {language} must be a number > 0, got {factor!r}")
    return {**default_time_factors(), **{k: float(v) for k, v in factors.items()}}


__all__ = [
    "DEFAULT_LANGUAGE",
    "ENTRY_POINT_GROUP",
    "LANGUAGES",
    "BuildConfig",
    "CheckerError",
    "Executor",
    "Language",
    "Program",
    "check_language",
    "check_time_factors",
    "default_time_factors",
    "for_alias",
    "for_fence_tag",
    "for_suffix",
    "get",
    "language_of",
    "language_registry",
    "register",
    "unregister",
]
