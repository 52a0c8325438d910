"""The languages the judge runs: one module each, one registry.

Built in: C++ (`cpp.py`, the default) and Python 3 (`python.py`). A language module
declares a `Language` (its name, how prompts, code fences and datasets name it, how an
untagged program in it looks, its default time factor, its executor: `base.py`). It joins
by one registration: `register(MyLanguage())` (in this process), or, from a package of its
own, an entry point in the group `codefu.languages` naming the `Language` instance (or its
class), loaded on the registry's first use in every process that has the package (the
reward's judge workers too):

    [project.entry-points."codefu.languages"]
    go = "my_package.go:LANGUAGE"

Every other module asks the registry (`LANGUAGES`, `get`, `language_of`, `for_suffix`,
`for_fence_tag`, `for_alias`, `default_time_factors`) and names no language.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from importlib.metadata import entry_points
from pathlib import Path

from codefu_sandbox.languages import cpp, python
from codefu_sandbox.languages.base import (
    BuildConfig,
    CheckerError,
    Executor,
    Language,
    Program,
)

ENTRY_POINT_GROUP = "codefu.languages"
# The language a submission, a checker program or a run is in when none is named.
DEFAULT_LANGUAGE = cpp.LANGUAGE.name


class Registry(Mapping[str, Language]):
    """The registered languages by name, in registration order (a live view: a language
    registered later is in it). Entry points are loaded on first use."""

    def __init__(self, *builtin: Language) -> None:
        self._languages: dict[str, Language] = {}
        self._entry_points_loaded = False
        self._loading = threading.Lock()
        for language in builtin:
            self.register(language)

    def _loaded(self) -> dict[str, Language]:
        if self._entry_points_loaded:
            return self._languages
        with self._loading:
            if self._entry_points_loaded:
                return self._languages
            self._entry_points_loaded = True
            for point in entry_points(group=ENTRY_POINT_GROUP):
                try:
                    found = point.load()
                    self.register(found() if isinstance(found, type) else found)
                except Exception as exc:
                    raise RuntimeError(
                        f"language entry point {point.name} = {point.value} ({ENTRY_POINT_GROUP})"
                        f" cannot be registered: {exc}; fix or uninstall the package declaring it"
                    ) from exc
        return self._languages

    def __getitem__(self, name: str) -> Language:
        return self._loaded()[name]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._loaded()

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._loaded()))

    def __len__(self) -> int:
        return len(self._loaded())

    def register(self, language: Language) -> None:
        """Add `language`; ValueError when its name, a suffix, a fence tag or an alias is
        another registered language's."""
        if not isinstance(language, Language):
            raise ValueError(f"register a Language instance, got {language!r}")
        for other in self._languages.values():
            taken = (
                {language.name} & {other.name}
                | set(language.suffixes) & set(other.suffixes)
                | set(language.fence_tags) & set(other.fence_tags)
                | set(language.aliases) & set(other.aliases)
            )
            if taken:
                raise ValueError(
                    f"language {language.name!r}: {', '.join(sorted(taken))} already "
                    f"name{'s' if len(taken) == 1 else ''} language {other.name!r}"
                )
        self._languages[language.name] = language

    def unregister(self, name: str) -> None:
        """Remove language `name` (ValueError for the default language or an unknown one)."""
        if name == DEFAULT_LANGUAGE:
            raise ValueError(f"the default language {name!r} cannot be unregistered")
        del self._languages[self.lookup(name).name]

    def lookup(self, name: str) -> Language:
        """The language called `name`; ValueError naming the languages otherwise."""
        if name not in self:
            raise ValueError(f"unknown language {name!r}: choose one of {', '.join(self)}")
        return self[name]

    def __repr__(self) -> str:
        return f"<languages {', '.join(self)}>"


LANGUAGES = Registry(cpp.LANGUAGE, python.LANGUAGE)
register = LANGUAGES.register
unregister = LANGUAGES.unregister
get = LANGUAGES.lookup


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
    "Registry",
    "check_language",
    "check_time_factors",
    "default_time_factors",
    "for_alias",
    "for_fence_tag",
    "for_suffix",
    "get",
    "language_of",
    "register",
    "unregister",
]
