"""The monorepo layout: four packages, one-way dependencies, the nox sessions users rely on."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from repo import PACKAGES, ROOT, nox_sessions

# Which local packages each package may import (DESIGN §2: arrows point one way).
ALLOWED_IMPORTS = {
    "codefu_sandbox": set(),
    "codefu_data": {"codefu_sandbox"},
    "codefu_launcher": set(),
    "codefu_trainer": {"codefu_sandbox", "codefu_data", "codefu_launcher"},
}
CONSOLE_SCRIPTS = {
    "sandbox": {"codefu-judge"},
    "data": {"codefu-data"},
    "trainer": {"codefu-reward"},
    "launcher": {"codefu-launcher"},
}
REQUIRED_SESSIONS = {"prepare", "train", "judge-tests", "tests", "lint", "bench", "build", "image"}


def _requirement_name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower()


def test_each_package_has_src_layout_tests_and_hatchling(package_metadata: dict) -> None:
    for name, module in PACKAGES.items():
        base = ROOT / "packages" / name
        assert (base / "src" / module / "__init__.py").is_file(), name
        assert (base / "tests").is_dir(), name
        pyproject = (base / "pyproject.toml").read_text()
        assert 'build-backend = "hatchling.build"' in pyproject, name
        assert package_metadata[name]["name"] == f"codefu-{name}"


def test_console_scripts_are_declared_and_point_at_existing_modules(package_metadata: dict) -> None:
    for name, scripts in CONSOLE_SCRIPTS.items():
        declared: dict[str, str] = package_metadata[name].get("scripts", {})
        assert scripts <= declared.keys(), (name, declared)
        for target in declared.values():
            module = target.split(":")[0]
            path = ROOT / "packages" / name / "src" / Path(*module.split("."))
            assert path.with_suffix(".py").is_file() or (path / "__init__.py").is_file(), target


def test_internal_dependencies_point_one_way(package_metadata: dict) -> None:
    local = {f"codefu-{n}" for n in PACKAGES}
    for name, meta in package_metadata.items():
        deps: list[str] = list(meta.get("dependencies", []))
        for extra in meta.get("optional-dependencies", {}).values():
            deps += extra
        used = {_requirement_name(d) for d in deps} & local
        allowed = {m.replace("_", "-") for m in ALLOWED_IMPORTS[PACKAGES[name]]}
        assert used <= allowed, f"codefu-{name} depends on {used - allowed}"


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_source_imports_respect_the_dependency_direction() -> None:
    for name, module in PACKAGES.items():
        others = set(ALLOWED_IMPORTS) - {module}
        for path in (ROOT / "packages" / name / "src").rglob("*.py"):
            bad = (_imported_modules(path) & others) - ALLOWED_IMPORTS[module]
            assert not bad, f"{path.relative_to(ROOT)} imports {sorted(bad)}"


def test_nox_lists_the_sessions_users_rely_on() -> None:
    sessions = nox_sessions()
    names = {s.split("(")[0] for s in sessions}
    assert names >= REQUIRED_SESSIONS, REQUIRED_SESSIONS - names
    for package in PACKAGES:
        assert f"tests(package='{package}')" in sessions, sessions


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    match = re.search(r"^(?:python3 -m )?nox -s lint tests judge-tests$", ci, re.MULTILINE)
    assert match, "CI must run the README's test command"
    assert "nox -s lint tests judge-tests" in readme
