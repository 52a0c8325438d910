"""Print the third-party requirements of local packages, one a line, for an image's
dependency layer: `python3 docker/requirements.py sandbox "trainer[train]"`.

Reads only packages/<name>/pyproject.toml (their `dependencies` and the named extras),
following the local packages they require (`codefu-<name>[extras]`) and leaving those out,
so that a Dockerfile installs every third-party package before it copies the packages' code
and a change to the code reuses that layer. Versions come from the lock the install names
(`-c locks/<profile>.txt`). Standard library only: it runs on the base image's Python 3.11.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

LOCAL_PREFIX = "codefu-"
# A requirement's name and extras, as PEP 508 writes them: `name[extra,...]` then the rest.
REQUIREMENT = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?")


def normalize(name: str) -> str:
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse(spec: str) -> tuple[str, set[str]]:
    """`name[extra,...]` (a version or marker after it is ignored) → (name, extras)."""
    match = REQUIREMENT.match(spec)
    if match is None:
        raise ValueError(f"not a requirement: {spec!r}")
    extras = {e.strip() for e in (match.group(2) or "").split(",") if e.strip()}
    return normalize(match.group(1)), extras


def third_party(root: Path, wanted: list[str]) -> list[str]:
    """The third-party requirement lines of the `wanted` local packages (`name[extras]`, name
    the folder under packages/), their extras and the local packages they need, in order."""
    lines: list[str] = []
    done: set[tuple[str, str]] = set()
    todo = [parse(spec) for spec in wanted]
    while todo:
        folder, extras = todo.pop(0)
        pyproject = root / "packages" / folder / "pyproject.toml"
        if not pyproject.is_file():
            raise ValueError(f"no local package {folder!r}: {pyproject} does not exist")
        with pyproject.open("rb") as f:
            project = tomllib.load(f)["project"]
        optional = project.get("optional-dependencies", {})
        unknown = extras - optional.keys()
        if unknown:
            raise ValueError(f"{folder} has no extra {', '.join(sorted(unknown))}")
        for group in ("", *sorted(extras)):
            if (folder, group) in done:
                continue
            done.add((folder, group))
            for line in project.get("dependencies", []) if not group else optional[group]:
                name, needed = parse(line)
                if name.startswith(LOCAL_PREFIX):
                    todo.append((name.removeprefix(LOCAL_PREFIX), needed))
                elif line not in lines:
                    lines.append(line)
    return lines


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    try:
        lines = third_party(Path.cwd(), argv)
    except ValueError as exc:
        print(f"docker/requirements.py: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
