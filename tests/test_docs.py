"""The README and docs/ stay true to the repository: links resolve, shown commands exist.

Checked: every relative link and image in README.md, docs/*.md and the package READMEs
names an existing file, and every `#anchor` into a Markdown file names one of its headings
(GitHub's slugs); every `nox -s NAME` shown in code is a session of noxfile.py; every
`codefu-*` command shown is a console script of a package; the README's test command is the
one .ci/run runs.
"""

from __future__ import annotations

import re
import shlex
from functools import cache
from pathlib import Path

import pytest
from repo import PACKAGES, ROOT, console_scripts, nox_sessions

PAGES = sorted(
    [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "packages").glob("*/README.md")]
)
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
INLINE = re.compile(r"(`+)(.+?)\1", re.DOTALL)
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def _rel(page: Path) -> str:
    return str(page.relative_to(ROOT))


def _prose(text: str) -> str:
    """The text outside fenced code blocks (links inside code are not links)."""
    return FENCE.sub("", text)


def _code(text: str) -> list[str]:
    """Fenced code blocks and inline code spans, each as its text."""
    blocks = FENCE.findall(text)
    spans = [span for _, span in INLINE.findall(FENCE.sub("", text))]
    return [*blocks, *spans]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    """Every heading anchor of a Markdown file, repeated headings numbered as GitHub does."""
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(_prose(page.read_text())):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return frozenset(found)


def test_slugs_match_github() -> None:
    assert slug("GPU memory plan and preflight") == "gpu-memory-plan-and-preflight"
    assert slug("veRL on CPU") == "verl-on-cpu"
    assert (
        slug("Isolation layers (`report.isolation`, e.g. `rlimits+uid+seccomp+landlock-v7`)")
        == "isolation-layers-reportisolation-eg-rlimitsuidseccomplandlock-v7"
    )
    assert slug("Several-answer problems: checker programs") == (
        "several-answer-problems-checker-programs"
    )


@pytest.mark.parametrize("page", PAGES, ids=_rel)
def test_links_and_images_resolve(page: Path) -> None:
    broken = []
    for target in LINK.findall(_prose(page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no file {file}")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {_rel(file)}")
    assert not broken, f"{_rel(page)}: " + "; ".join(broken)


def _nox_session_names(code: str) -> list[str]:
    """The session names of every `nox -s A B …` in a piece of code."""
    names = []
    for match in re.finditer(r"\bnox -s ((?:(?!\bnox -s ).)+)", code):
        try:
            words = shlex.split(match.group(1).replace("\\|", "|"))
        except ValueError:  # an unbalanced quote: a span cut inside a longer command
            words = match.group(1).split()
        for word in words:
            if word.startswith(("-", "[", "&", "|", ";", "#")):
                break
            names.append(word)
    return names


def test_session_names_are_parsed() -> None:
    assert _nox_session_names("nox -s prepare && nox -s train -- cluster=cpu") == [
        "prepare",
        "train",
    ]
    assert _nox_session_names("nox -s lint tests judge-tests") == ["lint", "tests", "judge-tests"]
    assert _nox_session_names("""nox -s "tests(package='trainer')" -- -n0""") == [
        "tests(package='trainer')"
    ]
    assert _nox_session_names("nox -s lock [-- --check]") == ["lock"]


def test_every_nox_session_shown_exists() -> None:
    sessions = nox_sessions()
    known = set(sessions) | {s.split("(")[0] for s in sessions}
    unknown = {
        f"{_rel(page)}: nox -s {name}"
        for page in PAGES
        for code in _code(page.read_text())
        for name in _nox_session_names(code)
        if name not in known
    }
    assert not unknown, sorted(unknown)


def test_every_command_shown_is_a_console_script() -> None:
    scripts = console_scripts() | {f"codefu-{p}" for p in PACKAGES}  # and distributions
    # A command starts a line of a code block, or an inline span with arguments, or follows
    # `$ `, `&& ` or `nox -s cli -- `; a bare `codefu-grpo` in prose is a name, not a command.
    command = re.compile(r"(?:^|\$ |&& |nox -s cli -- )(codefu-[a-z]+)(?:[ \n]|$)", re.MULTILINE)
    unknown = set()
    for page in PAGES:
        text = page.read_text()
        blocks = FENCE.findall(text)
        spans = [s for s in _code(text)[len(blocks) :] if " " in s.strip()]
        for code in [*blocks, *spans]:
            unknown |= {
                f"{_rel(page)}: {name}"
                for name in command.findall(code.strip())
                if name not in scripts
            }
    assert not unknown, sorted(unknown)


def test_the_readme_test_command_is_what_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    runs = re.findall(r"^(?:python3 -m )?(nox -s .+)$", ci, re.MULTILINE)
    assert len(runs) == 1, runs
    readme = (ROOT / "README.md").read_text()
    tests_section = readme.split("\n## The tests\n", 1)[1].split("\n## ", 1)[0]
    first_block = FENCE.search(tests_section)
    assert first_block, "README's 'The tests' shows no command"
    assert first_block.group(1).strip() == runs[0]


def test_the_readme_shows_both_main_commands_and_a_safe_install_on_its_first_screen() -> None:
    head = "\n".join((ROOT / "README.md").read_text().splitlines()[:40])
    assert "nox -s prepare && nox -s train -- cluster=cpu" in head
    assert "nox -s lint tests judge-tests" in head
    # nox and uv go into a virtual environment of their own, never the system Python.
    assert "python3 -m venv" in head and "python3 -m pip install" not in head
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python3 -m venv" in ci and not re.search(r"^python3 -m pip install", ci, re.M)
