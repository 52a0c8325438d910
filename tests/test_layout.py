"""The monorepo layout: four packages, one-way dependencies, the nox sessions users rely on."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from repo import PACKAGES, ROOT, nox_sessions

# Which local packages each package may import (docs/ARCHITECTURE.md: arrows point one way).
ALLOWED_IMPORTS = {
    "codefu_sandbox": set(),
    "codefu_data": {"codefu_sandbox"},
    "codefu_launcher": set(),
    "codefu_trainer": {"codefu_sandbox", "codefu_data", "codefu_launcher"},
}
CONSOLE_SCRIPTS = {
    "sandbox": {"codefu-judge"},
    "data": {"codefu-data"},
    "trainer": {"codefu-reward", "codefu-train", "codefu-eval"},
    "launcher": {"codefu-launcher"},
}
REQUIRED_SESSIONS = {
    "prepare",
    "train",
    "evaluate",
    "judge-tests",
    "tests",
    "lint",
    "bench",
    "build",
    "image",
    "lock",
    "cli",
}


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


def _source_modules() -> dict[str, Path]:
    """Every module of the four packages: dotted name → file."""
    modules: dict[str, Path] = {}
    for name, module in PACKAGES.items():
        src = ROOT / "packages" / name / "src"
        for path in (src / module).rglob("*.py"):
            parts = list(path.relative_to(src).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _module_edges(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Our modules that `name` imports anywhere in its file (function level and
    TYPE_CHECKING blocks included): `from pkg import mod` counts as importing `pkg.mod`."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    edges: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            edges |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                target = f"{base}.{alias.name}"
                if target in modules:
                    edges.add(target)
                elif base in modules:
                    edges.add(base)
    edges.discard(name)
    return edges


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component: list[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles_between_modules() -> None:
    modules = _source_modules()
    graph = {name: _module_edges(name, path, modules) for name, path in modules.items()}
    assert not _cycles(graph), f"import cycles: {_cycles(graph)}"


def test_the_cycle_check_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


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
