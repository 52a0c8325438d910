"""A language is named in its own module only (docs/ARCHITECTURE.md, "How to add a
language"): outside `codefu_sandbox/languages/`, no code in `packages/*/src` holds a
language's name, fence tag or suffix as a string (`== "cpp"`, `{"python": ...}`,
`("cpp", "python")`, `language: str = "cpp"`); it asks the registry. Likewise the data side
names no grader: `packages/data/src` holds no grader's name as a string (a row's grader
answers for itself, a format builds one with the grader's own `config`). Docstrings and
comments may name them; Hydra's yaml defaults are data."""

from __future__ import annotations

import ast
from pathlib import Path

from repo import ROOT

LANGUAGE_MODULES = ROOT / "packages" / "sandbox" / "src" / "codefu_sandbox" / "languages"
GRADER_MODULES = LANGUAGE_MODULES.parent / "graders"
DATA_SOURCES = ROOT / "packages" / "data" / "src"
# What names a language: the class attributes a language module declares.
NAMING_ATTRIBUTES = ("name", "fence_tags", "suffixes")
# Strings that are a language's name by chance: (file, string) → what they are.
NOT_LANGUAGES = {
    ("packages/sandbox/src/codefu_sandbox/sandbox_binary.py", "cc"): "the C compiler's command",
}


def language_names(
    folder: Path = LANGUAGE_MODULES, attributes: tuple[str, ...] = NAMING_ATTRIBUTES
) -> set[str]:
    """Every string a language module declares in `NAMING_ATTRIBUTES` of a class (or the
    modules of `folder` in `attributes`)."""
    names: set[str] = set()
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ClassDef):
                for statement in node.body:
                    if isinstance(statement, ast.Assign) and any(
                        isinstance(t, ast.Name) and t.id in attributes for t in statement.targets
                    ):
                        names |= {
                            c.value
                            for c in ast.walk(statement.value)
                            if isinstance(c, ast.Constant) and isinstance(c.value, str)
                        }
    return names


def language_literals(path: Path, names: set[str]) -> list[tuple[int, str]]:
    """Each string constant in `path`'s code (not a docstring) that is one of `names`:
    (line, the string)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    docstrings = {
        id(body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and (body := node.body)
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value in names
        and id(node) not in docstrings
    ]


def test_the_language_modules_declare_the_names() -> None:
    assert {"cpp", "c++", "cc", "cxx", ".cpp", "python", "py", "python3", ".py"} <= (
        language_names()
    )


def test_no_module_outside_the_language_modules_names_a_language() -> None:
    names = language_names()
    found = [
        f"{where}:{line}: {value!r}"
        for path in sorted((ROOT / "packages").glob("*/src/**/*.py"))
        if not path.is_relative_to(LANGUAGE_MODULES)
        for line, value in language_literals(path, names)
        if ((where := path.relative_to(ROOT).as_posix()), value) not in NOT_LANGUAGES
    ]
    assert not found, "ask codefu_sandbox.languages instead:\n" + "\n".join(found)


def test_the_data_side_names_no_grader() -> None:
    graders = language_names(GRADER_MODULES, ("name",))
    assert {"stdio", "call"} <= graders
    found = [
        f"{path.relative_to(ROOT).as_posix()}:{line}: {value!r}"
        for path in sorted(DATA_SOURCES.rglob("*.py"))
        for line, value in language_literals(path, graders)
    ]
    assert not found, "ask the row's grader (codefu_sandbox.GraderConfig) instead:\n" + "\n".join(
        found
    )


def test_the_check_finds_a_language_named_in_code(tmp_path: Path) -> None:
    """A comparison, a table key, a tuple, a default and a suffix are found; a docstring
    and a comment that name languages, and other strings, are not."""
    module = tmp_path / "planted.py"
    module.write_text(
        '"""Judges "cpp" and "python"."""\n'
        "def f(language: str = 'cpp') -> bool:  # \"python\" in a comment\n"
        '    """The "python" answer."""\n'
        '    factors = {"python": 2.0, "java": 1.0}\n'
        '    return language == "c++" or language in ("cpp", "py") or language.endswith(".py")\n'
    )
    names = {"cpp", "c++", "python", "py", ".py"}
    assert sorted(language_literals(module, names)) == [
        (2, "cpp"),
        (4, "python"),
        (5, ".py"),
        (5, "c++"),
        (5, "cpp"),
        (5, "py"),
    ]
