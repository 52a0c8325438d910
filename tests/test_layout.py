"""The monorepo layout: four packages, one-way dependencies, the nox sessions users rely on."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
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
    "smoke",
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


def _modules_under(src: Path, package: str) -> dict[str, Path]:
    """Every module of `package` in the source root `src`: dotted name → file."""
    modules: dict[str, Path] = {}
    for path in (src / package).rglob("*.py"):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _source_modules() -> dict[str, Path]:
    """Every module of the four packages: dotted name → file."""
    modules: dict[str, Path] = {}
    for name, module in PACKAGES.items():
        modules |= _modules_under(ROOT / "packages" / name / "src", module)
    return modules


def _import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    return {name: _module_edges(name, path, modules) for name, path in modules.items()}


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
    graph = _import_graph(_source_modules())
    assert not _cycles(graph), f"import cycles: {_cycles(graph)}"


def test_the_cycle_check_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


@dataclass(frozen=True)
class Layer:
    """No module outside `package` imports a module of it (function-level and
    TYPE_CHECKING imports included), except `entry_points`: importer → the modules of
    `package` it may import. `importers` narrows the rule to the modules under it."""

    package: str
    why: str
    importers: str = ""
    entry_points: Mapping[str, frozenset[str]] = field(default_factory=dict)


# The layers inside the trainer (docs/ARCHITECTURE.md, "Packages"): the reward at the bottom,
# the run layer (what training and evaluation share) above it, then evaluation, then training.
NO_TRAINING_STACK = "the reward never imports {}: a judge node has no training stack"
SHARED = "the run layer is what training and evaluation share: it imports neither"
LAYERS = (
    *(
        Layer(package, importers="codefu_trainer.reward", why=NO_TRAINING_STACK.format(package))
        for package in (
            "codefu_trainer.run",
            "codefu_trainer.evaluation",
            "codefu_trainer.training",
        )
    ),
    Layer("codefu_trainer.training", importers="codefu_trainer.run", why=SHARED),
    Layer("codefu_trainer.evaluation", importers="codefu_trainer.run", why=SHARED),
    Layer(
        "codefu_trainer.training",
        importers="codefu_trainer.evaluation",
        why="evaluation stands beside training: it imports the run layer and the reward only",
    ),
    Layer(
        "codefu_trainer.training.verl.cpu",
        why="veRL on CPU is reached only through its entry point and its settings, from its "
        "cluster kind and codefu-train's --smoke",
        entry_points={
            "codefu_trainer.training.clusters.cpu_verl": frozenset(
                {"codefu_trainer.training.verl.cpu.run", "codefu_trainer.training.verl.cpu.config"}
            ),
            "codefu_trainer.training.smoke.stages": frozenset(
                {"codefu_trainer.training.verl.cpu.run"}
            ),
        },
    ),
)

# The floors inside codefu_trainer.training (docs/ARCHITECTURE.md, "Packages"), top first: a
# room (a sub-package or a top-level module) imports only rooms on the floors below its own.
TRAINING = "codefu_trainer.training"
TRAINING_FLOORS: tuple[frozenset[str], ...] = (
    frozenset({"cli"}),
    frozenset({"smoke", "clusters"}),
    frozenset({"compose"}),
    frozenset({"verl"}),
    frozenset({"rehearsal", "planning", "sagemaker"}),
    frozenset({"report", "checkpoints", "curriculum", "phase_probe", "composed_run"}),
)


def _room(module: str, package: str) -> str | None:
    """The room of `module` inside `package`: the first name below it (None: outside it, or
    the package itself)."""
    if not module.startswith(package + "."):
        return None
    return module[len(package) + 1 :].split(".", maxsplit=1)[0]


def floor_violations(
    graph: Mapping[str, set[str]],
    floors: tuple[frozenset[str], ...] = TRAINING_FLOORS,
    package: str = TRAINING,
) -> list[str]:
    """Each import inside `package` that is not down a floor: "importer → imported (why)";
    a room on no floor is reported too."""
    level = {room: len(floors) - i for i, rooms in enumerate(floors) for room in rooms}
    found: list[str] = []
    for importer, imported in sorted(graph.items()):
        here = _room(importer, package)
        if here is None:
            continue
        if here not in level:
            found.append(f"{importer} (room {here!r} is on no floor of {package})")
            continue
        for target in sorted(imported):
            there = _room(target, package)
            if there is None or there == here or there not in level:
                continue
            if level[there] >= level[here]:
                found.append(
                    f"{importer} → {target} (floor {level[here]} imports floor {level[there]})"
                )
    return found


def layer_violations(
    graph: Mapping[str, set[str]], layers: tuple[Layer, ...] = LAYERS
) -> list[str]:
    """Each import that crosses a layer the wrong way: "importer → imported (why)"."""
    found: list[str] = []
    for layer in layers:
        for importer, imported in sorted(graph.items()):
            if _within(importer, layer.package):
                continue
            if layer.importers and not _within(importer, layer.importers):
                continue
            allowed = layer.entry_points.get(importer, frozenset())
            for target in sorted(imported):
                if _within(target, layer.package) and target not in allowed:
                    found.append(f"{importer} → {target} ({layer.why})")
    return found


def test_the_trainer_layers_hold() -> None:
    """The reward imports none of run, evaluation and training; the run layer imports neither
    evaluation nor training; evaluation never imports training; nothing but its cluster kind
    and the smoke imports veRL on CPU, and that only through its entry point and settings."""
    graph = _import_graph(_source_modules())
    assert not layer_violations(graph), "\n".join(layer_violations(graph))


def test_the_layer_check_finds_a_forbidden_import(tmp_path: Path) -> None:
    """A planted module tree with one import across each layer the wrong way (some inside a
    function, as moved code tends to have them): each is reported; the allowed imports
    (run → reward, evaluation → run and reward, training → all three, the cpu_verl kind →
    the CPU entry point and settings, within a package) are not."""
    files = {
        "codefu_trainer/__init__.py": "",
        "codefu_trainer/reward/__init__.py": "",
        "codefu_trainer/reward/metrics.py": (
            "def f():\n    from codefu_trainer.run.tracking import run_taking_params\n"
        ),
        "codefu_trainer/reward/rules.py": "from codefu_trainer.reward import metrics\n",
        "codefu_trainer/reward/service.py": (
            "import codefu_trainer.evaluation.run\nfrom codefu_trainer.training import cli\n"
        ),
        "codefu_trainer/run/__init__.py": "",
        "codefu_trainer/run/tracking.py": "from codefu_trainer.reward.rules import *\n",
        "codefu_trainer/run/config.py": (
            "from codefu_trainer.run import tracking\n"
            "def f():\n    from codefu_trainer.training.verl import main\n"
        ),
        "codefu_trainer/run/progress.py": "from codefu_trainer.evaluation.summary import x\n",
        "codefu_trainer/evaluation/__init__.py": "",
        "codefu_trainer/evaluation/summary.py": "",
        "codefu_trainer/evaluation/run.py": (
            "from codefu_trainer.run.config import TrainConfig\n"
            "from codefu_trainer.reward.service import RewardService\n"
            "from codefu_trainer.evaluation import summary\n"
            "def f():\n    from codefu_trainer.training.compose import ComposedRun\n"
        ),
        "codefu_trainer/training/__init__.py": "",
        "codefu_trainer/training/compose.py": "from codefu_trainer.run.config import x\n",
        "codefu_trainer/training/verl/__init__.py": "",
        "codefu_trainer/training/verl/main.py": (
            "from codefu_trainer.training.verl.cpu import run as cpu\n"
        ),
        "codefu_trainer/training/cli.py": (
            "from codefu_trainer.evaluation.run import evaluate\n"
            "from codefu_trainer.reward import rules\n"
            "import codefu_trainer.training.verl.cpu.patches\n"
        ),
        "codefu_trainer/training/clusters/__init__.py": "",
        "codefu_trainer/training/clusters/cpu_verl.py": (
            "from codefu_trainer.training.verl.cpu import run\n"
            "from codefu_trainer.training.verl.cpu.config import EXTENSION\n"
        ),
        "codefu_trainer/training/verl/cpu/__init__.py": "",
        "codefu_trainer/training/verl/cpu/run.py": "from . import patches\n",
        "codefu_trainer/training/verl/cpu/patches.py": "",
        "codefu_trainer/training/verl/cpu/config.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = _import_graph(_modules_under(tmp_path, "codefu_trainer"))
    assert sorted(v.split(" (")[0] for v in layer_violations(graph)) == [
        "codefu_trainer.evaluation.run → codefu_trainer.training.compose",
        "codefu_trainer.reward.metrics → codefu_trainer.run.tracking",
        "codefu_trainer.reward.service → codefu_trainer.evaluation.run",
        "codefu_trainer.reward.service → codefu_trainer.training.cli",
        "codefu_trainer.run.config → codefu_trainer.training.verl.main",
        "codefu_trainer.run.progress → codefu_trainer.evaluation.summary",
        "codefu_trainer.training.cli → codefu_trainer.training.verl.cpu.patches",
        "codefu_trainer.training.verl.main → codefu_trainer.training.verl.cpu.run",
    ]


def test_the_training_floors_hold() -> None:
    """Inside training/ every import runs down a floor: the plain records at the bottom, the
    cluster kinds and the smoke above composition, the CLI on top."""
    graph = _import_graph(_source_modules())
    assert not floor_violations(graph), "\n".join(floor_violations(graph))


def test_the_floor_check_finds_an_import_up_a_floor(tmp_path: Path) -> None:
    """A planted training/ tree: an import up a floor (inside a function), one across a floor
    and a room on no floor are reported; imports down a floor and within a room are not."""
    files = {
        "codefu_trainer/__init__.py": "",
        "codefu_trainer/run/__init__.py": "",
        "codefu_trainer/run/config.py": "",
        "codefu_trainer/training/__init__.py": "",
        "codefu_trainer/training/composed_run.py": "from codefu_trainer.run.config import x\n",
        "codefu_trainer/training/compose.py": (
            "from codefu_trainer.training.composed_run import ComposedRun\n"
            "from codefu_trainer.training.verl import config\n"
        ),
        "codefu_trainer/training/verl/__init__.py": "",
        "codefu_trainer/training/verl/config.py": "",
        "codefu_trainer/training/verl/trainer.py": (
            "from codefu_trainer.training.verl import config\n"
            "def f():\n    from codefu_trainer.training.smoke.probe import probe\n"
        ),
        "codefu_trainer/training/smoke/__init__.py": "",
        "codefu_trainer/training/smoke/probe.py": "",
        "codefu_trainer/training/smoke/stages.py": "from codefu_trainer.training import compose\n",
        "codefu_trainer/training/clusters/__init__.py": "",
        "codefu_trainer/training/clusters/local.py": (
            "from codefu_trainer.training.smoke import stages\n"
        ),
        "codefu_trainer/training/attic.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = _import_graph(_modules_under(tmp_path, "codefu_trainer"))
    assert [v.split(" (")[0] for v in floor_violations(graph)] == [
        "codefu_trainer.training.attic",
        "codefu_trainer.training.clusters.local → codefu_trainer.training.smoke.stages",
        "codefu_trainer.training.verl.trainer → codefu_trainer.training.smoke.probe",
    ]


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
