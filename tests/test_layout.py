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


# The sandbox's public face: what another package may import of it (the package itself, its
# registries' packages, the judging rules' vocabulary). Its runner, checker runner, judge
# internals and each member's module are its own.
SANDBOX_FACE = frozenset(
    {
        "codefu_sandbox",
        "codefu_sandbox.languages",
        "codefu_sandbox.graders",
        "codefu_sandbox.checkers",
        "codefu_sandbox.rules",
        "codefu_sandbox.registry",
    }
)


def _sandbox_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of each import of the sandbox in `path`'s code."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        found += [(node.lineno, name) for name in names if name.split(".")[0] == "codefu_sandbox"]
    return found


def test_other_packages_reach_the_sandbox_through_its_public_face() -> None:
    """codefu-data and codefu-trainer import only `SANDBOX_FACE` of the sandbox (prepare's
    checker validation included: `Judge.prepare_checker`, `Judge.check_output`)."""
    found = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for package in ("data", "trainer")
        for path in sorted((ROOT / "packages" / package / "src").rglob("*.py"))
        for line, module in _sandbox_imports(path)
        if module not in SANDBOX_FACE
    ]
    assert not found, "import these from codefu_sandbox (its public face):\n" + "\n".join(found)


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


def _plant(root: Path, files: Mapping[str, str]) -> None:
    """Write a planted module tree: path under `root` → text."""
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


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
    _plant(tmp_path, files)
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


# The floors inside the sandbox (docs/ARCHITECTURE.md, "Packages"), from the ground up: a
# module imports only modules on its own floor or below (its top-level module or package
# names its place); the package's face, `codefu_sandbox/__init__.py`, stands above them all.
SANDBOX_FLOORS: tuple[tuple[str, ...], ...] = (
    # plain records, decisions, the host, system call names, the registry idiom
    ("records", "models", "verdicts", "isolation", "uids", "syscalls", "registry"),
    ("cgroups", "process", "sandbox_binary", "run_server", "runner"),  # one process, confined
    ("languages",),  # building a source into a program
    ("checker_runner",),  # running a checker program
    ("checkers", "rules"),  # comparing an output; a statement's rules → checker parameters
    ("graders",),  # running and comparing a submission's tests
    ("request",),  # a ground truth under a run's policy → the judge's requests
    ("judge",),  # build once, grade, decide the report
    ("cli",),  # codefu-judge
)


def floor_violations(
    graph: Mapping[str, set[str]],
    package: str = "codefu_sandbox",
    floors: tuple[tuple[str, ...], ...] = SANDBOX_FLOORS,
) -> list[str]:
    """Each import in `package` that runs up a floor ("importer → imported (floor i → j)"),
    and each module of it on no floor ("module (on no floor)")."""
    level = {name: index for index, names in enumerate(floors) for name in names}
    found: list[str] = []

    def floor(module: str) -> int | None:
        place = module.removeprefix(package + ".").split(".")[0]
        return None if module == package else level.get(place, -1)

    for importer, imported in sorted(graph.items()):
        if not _within(importer, package) or (own := floor(importer)) is None:
            continue
        if own < 0:
            found.append(f"{importer} (on no floor)")
            continue
        for target in sorted(imported):
            other = floor(target) if _within(target, package) else None
            if other is not None and other > own:
                found.append(f"{importer} → {target} (floor {own + 1} → {other + 1})")
    return found


def test_the_sandbox_floors_hold() -> None:
    """No import in the sandbox runs up a floor, and every module stands on one."""
    graph = _import_graph(_source_modules())
    assert not floor_violations(graph), "\n".join(floor_violations(graph))


def test_the_floor_check_finds_an_import_up_a_floor(tmp_path: Path) -> None:
    """A planted sandbox with an import up a floor from each level (some inside a function)
    and a module on no floor: each is reported; imports down and within a floor are not."""
    files = {
        "codefu_sandbox/__init__.py": "from codefu_sandbox.judge import Judge\n",
        "codefu_sandbox/records.py": "",
        "codefu_sandbox/verdicts.py": (
            "from codefu_sandbox.records import RunOutcome\n"
            "def f():\n    from codefu_sandbox.runner import Runner\n"
        ),
        "codefu_sandbox/runner.py": "from codefu_sandbox import process, records\n",
        "codefu_sandbox/process.py": "import codefu_sandbox.languages\n",
        "codefu_sandbox/languages/__init__.py": "from codefu_sandbox.languages import cpp\n",
        "codefu_sandbox/languages/cpp.py": (
            "from codefu_sandbox.runner import Runner\n"
            "from codefu_sandbox.checker_runner import CheckerError\n"
        ),
        "codefu_sandbox/checker_runner.py": "from codefu_sandbox.languages import cpp\n",
        "codefu_sandbox/graders/__init__.py": "",
        "codefu_sandbox/graders/stdio.py": (
            "from codefu_sandbox.checker_runner import x\nfrom codefu_sandbox import judge\n"
        ),
        "codefu_sandbox/judge.py": "from codefu_sandbox.graders import stdio\n",
        "codefu_sandbox/helpers.py": "",
    }
    _plant(tmp_path, files)
    graph = _import_graph(_modules_under(tmp_path, "codefu_sandbox"))
    assert floor_violations(graph) == [
        "codefu_sandbox.graders.stdio → codefu_sandbox.judge (floor 6 → 8)",
        "codefu_sandbox.helpers (on no floor)",
        "codefu_sandbox.languages.cpp → codefu_sandbox.checker_runner (floor 3 → 4)",
        "codefu_sandbox.process → codefu_sandbox.languages (floor 2 → 3)",
        "codefu_sandbox.verdicts → codefu_sandbox.runner (floor 1 → 2)",
    ]


# The floors inside the trainer's training/ (docs/ARCHITECTURE.md, "Packages"), from the
# ground up: a room (a sub-package or a top-level module) imports only rooms on its own floor
# or below; the package's face, `training/__init__.py`, stands above them all.
TRAINING_FLOORS: tuple[tuple[str, ...], ...] = (
    ("composed_run", "phase_probe", "curriculum", "checkpoints", "report"),  # plain records
    ("rehearsal", "planning", "sagemaker"),  # the CPU rehearsal, the GPU preflight, a job spec
    ("verl",),  # veRL: stage 2, its trainer process; veRL on CPU
    ("compose",),  # both stages of a run
    ("clusters", "smoke"),  # the cluster kinds; codefu-train --smoke
    ("cli",),  # codefu-train
)


def test_the_training_floors_hold() -> None:
    """Inside training/ no import runs up a floor, and every room stands on one: the plain
    records at the bottom, the cluster kinds and the smoke above composition, the CLI on top."""
    graph = _import_graph(_source_modules())
    found = floor_violations(graph, "codefu_trainer.training", TRAINING_FLOORS)
    assert not found, "\n".join(found)


def test_the_floor_check_finds_an_import_up_a_training_floor(tmp_path: Path) -> None:
    """A planted training/ tree: imports up a floor (one inside a function, as the production
    trainer once imported the smoke's probe) and a room on no floor are reported; imports
    down a floor and within a room are not."""
    DOWN = "from codefu_trainer.training import compose\n"
    _plant(
        tmp_path,
        {
            "codefu_trainer/__init__.py": "",
            "codefu_trainer/run/__init__.py": "",
            "codefu_trainer/run/config.py": "",
            "codefu_trainer/training/__init__.py": "",
            "codefu_trainer/training/composed_run.py": "from codefu_trainer.run.config import x\n",
            "codefu_trainer/training/compose.py": (
                "from codefu_trainer.training.composed_run import ComposedRun\n"
                "from codefu_trainer.training.verl import config\n"
                "def f():\n    from codefu_trainer.training.clusters import local\n"
            ),
            "codefu_trainer/training/verl/__init__.py": "",
            "codefu_trainer/training/verl/config.py": "",
            "codefu_trainer/training/verl/trainer.py": (
                "from codefu_trainer.training.verl import config\n"
                "def f():\n    from codefu_trainer.training.smoke.probe import probe\n"
            ),
            "codefu_trainer/training/smoke/__init__.py": "",
            "codefu_trainer/training/smoke/probe.py": "",
            "codefu_trainer/training/smoke/stages.py": DOWN,
            "codefu_trainer/training/clusters/__init__.py": "",
            "codefu_trainer/training/clusters/local.py": DOWN,
            "codefu_trainer/training/attic.py": "",
        },
    )
    graph = _import_graph(_modules_under(tmp_path, "codefu_trainer"))
    assert floor_violations(graph, "codefu_trainer.training", TRAINING_FLOORS) == [
        "codefu_trainer.training.attic (on no floor)",
        "codefu_trainer.training.compose → codefu_trainer.training.clusters.local (floor 4 → 5)",
        "codefu_trainer.training.verl.trainer → codefu_trainer.training.smoke.probe (floor 3 → 5)",
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
