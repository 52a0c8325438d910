"""The one registry idiom of every axis the project extends: languages, graders and checkers
(here), source formats (codefu-data) and cluster kinds (codefu-trainer).

A `Registry` maps names to the members of one kind of thing. Its members are the entry
points of its group (`codefu.languages`, `codefu.graders`, `codefu.checkers`,
`codefu.formats`, `codefu.cluster_kinds`), the built-ins included: each package declares
its own in its pyproject.toml, and a package outside the repository adds one with the same
kind of line,

    [project.entry-points."codefu.graders"]
    interactive = "my_package.interactive:GRADER"

An entry point's name is its member's name. A member is imported when it is first named
(listing the registry imports them all), so a registry may sit below the modules it lists
(the cluster kinds: the run layer reads a kind's facts without importing training).
`register` adds one to this process only (a test, a notebook), `unregister` takes one out.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar

T = TypeVar("T")

__all__ = ["Registry"]


class Registry(Mapping[str, T], Generic[T]):
    """Named members of one kind (`what`, for messages), from the entry points of `group`
    and `register`; in order: the entry points by name, then those registered here.

    `name_of` gives a member's name. `accept` turns what an entry point loads (or what is
    registered) into a member, raising ValueError when it is none. `conflict` says what a
    new member would share with a registered one (names it claims beside its name), or
    None."""

    def __init__(
        self,
        what: str,
        group: str,
        name_of: Callable[[T], str],
        *,
        accept: Callable[[Any], T] | None = None,
        conflict: Callable[[T, T], str | None] | None = None,
    ) -> None:
        self.what = what
        self.group = group
        self._name_of = name_of
        self._accept = accept
        self._conflict = conflict
        self._points: dict[str, EntryPoint] | None = None
        self._members: dict[str, T] = {}
        self._added: list[str] = []  # registered in this process, in order
        self._removed: set[str] = set()  # entry points unregistered in this process
        self._lock = threading.RLock()

    # Names: known without importing any member ------------------------------------------

    def _entry_points(self) -> dict[str, EntryPoint]:
        if self._points is None:
            found: dict[str, EntryPoint] = {}
            for point in entry_points(group=self.group):
                other = found.get(point.name)
                if other is not None and other.value != point.value:
                    raise RuntimeError(
                        f"two packages declare the {self.what} {point.name!r} ({self.group}): "
                        f"{other.value} and {point.value}; uninstall one"
                    )
                found[point.name] = point
            self._points = dict(sorted(found.items()))
        return self._points

    def _names(self) -> list[str]:
        with self._lock:
            declared = [n for n in self._entry_points() if n not in self._removed]
            return [*declared, *(n for n in self._added if n not in declared)]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._names()

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    # Members: imported on first use -----------------------------------------------------

    def __getitem__(self, name: str) -> T:
        with self._lock:
            if name not in self._names():
                raise KeyError(name)
            found = self._members.get(name)
            if found is None:
                found = self._load(self._entry_points()[name])
                self._members[name] = found
            return found

    def _load(self, point: EntryPoint) -> T:
        try:
            member = self._member(point.load())
            if self._name_of(member) != point.name:
                raise ValueError(f"its member is named {self._name_of(member)!r}")
            self._check_conflicts(member)
        except Exception as exc:
            raise RuntimeError(
                f"{self.what} entry point {point.name} = {point.value} ({self.group}) cannot "
                f"be registered: {exc}; fix or uninstall the package declaring it"
            ) from exc
        return member

    def _member(self, found: Any) -> T:
        if self._accept is None:
            member: T = found
            return member
        return self._accept(found)

    def _check_conflicts(self, member: T) -> None:
        if self._conflict is None:
            return
        name = self._name_of(member)
        for other_name in self._names():
            if other_name == name:
                continue
            other = self._members.get(other_name)
            if other is None:
                continue  # checked when it loads
            shared = self._conflict(member, other)
            if shared:
                raise ValueError(
                    f"{self.what} {name!r}: {shared} already name{'' if ',' in shared else 's'} "
                    f"{self.what} {other_name!r}"
                )

    def lookup(self, name: str) -> T:
        """The member called `name`; ValueError naming the members otherwise."""
        if name not in self:
            raise ValueError(f"unknown {self.what} {name!r}: choose one of {', '.join(self)}")
        return self[name]

    def register(self, member: Any) -> T:
        """Add `member` in this process (ValueError when its name is taken, or it shares a
        name with another); returns it."""
        accepted = self._member(member)
        name = self._name_of(accepted)
        with self._lock:
            if name in self:
                raise ValueError(f"a {self.what} named {name!r} is already registered")
            if self._conflict is not None:
                for other in list(self._names()):
                    self[other]  # load it: a conflict with any member is refused
            self._check_conflicts(accepted)
            self._members[name] = accepted
            self._added.append(name)
            self._removed.discard(name)
        return accepted

    def unregister(self, name: str) -> None:
        """Remove `name` from this process's registry (ValueError when there is none)."""
        with self._lock:
            self.lookup(name)
            self._members.pop(name, None)
            if name in self._added:
                self._added.remove(name)
            else:
                self._removed.add(name)

    def __repr__(self) -> str:
        return f"<{self.what} registry ({self.group}): {', '.join(self)}>"
