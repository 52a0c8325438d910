"""Task runner for the CodeFu trainer monorepo.

`nox -l` lists the sessions. Arguments after `--` go to the tool a session wraps:
Hydra overrides for `prepare` and `train`, pytest arguments for `tests` and
`judge-tests`, benchmark names for `bench`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import nox

ROOT = Path(__file__).resolve().parent
PYTHON = "3.11"
PACKAGES = ("sandbox", "data", "trainer", "launcher")
# Local packages each package needs installed beside it (dependencies point one way).
LOCAL_DEPS: dict[str, tuple[str, ...]] = {
    "sandbox": (),
    "data": ("sandbox",),
    "launcher": (),
    "trainer": ("sandbox", "data", "launcher"),
}
# Suites whose dependencies pull torch (veRL): torch is installed first, CPU build without CUDA.
NEEDS_TORCH = {"data", "trainer"}
TORCH_VERSION = "2.13.0"
SUITE_TIMEOUT = "900"  # pytest-timeout per test: nothing may hang CI

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["lint", "tests", "judge-tests"]
nox.options.error_on_missing_interpreters = True
# uv must use the interpreters on this machine, never download one.
os.environ.setdefault("UV_PYTHON_DOWNLOADS", "never")
# nox points TMPDIR into the session's virtualenv; Ray puts its sockets under its temp dir,
# and AF_UNIX paths longer than 107 bytes make every Ray start fail.
os.environ.setdefault("RAY_TMPDIR", "/tmp")


def _pyproject(path: Path) -> dict:
    with path.open("rb") as f:
        return tomllib.load(f)


def package_version(package: str) -> str:
    """The version in packages/<package>/pyproject.toml."""
    return str(_pyproject(ROOT / "packages" / package / "pyproject.toml")["project"]["version"])


def has_cuda() -> bool:
    """True on a machine with an NVIDIA driver (then torch's CUDA build is wanted)."""
    if os.environ.get("CODEFU_FORCE_CPU_TORCH"):
        return False
    return Path("/proc/driver/nvidia/version").exists() or shutil.which("nvidia-smi") is not None


def _pip_find_links() -> list[str]:
    """Wheel folders from pip's configuration; uv does not read pip's config files."""
    try:
        out = subprocess.run(
            [sys.executable, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            check=False,
            timeout=30,
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    links: list[str] = []
    for line in out.splitlines():
        key, _, value = line.partition("=")
        if key.strip().endswith("find-links"):
            links.extend(value.strip().strip("'\"").split())
    return list(dict.fromkeys(links))


def torch_requirement() -> str:
    """`torch==X` on a CUDA machine, its `+cpu` build otherwise."""
    return f"torch=={TORCH_VERSION}" + ("" if has_cuda() else "+cpu")


def find_links_args() -> list[str]:
    """`--find-links` for pip's configured wheel folders, where the CPU torch may lie.

    Without CUDA only: those folders may hold `+cpu` wheels, which would win over CUDA ones.
    """
    if has_cuda():
        return []
    return [arg for link in _pip_find_links() for arg in ("--find-links", link)]


def install_torch(session: nox.Session) -> None:
    """Install torch before anything that depends on it.

    With CUDA: the regular build. Without: the `+cpu` build, found through pip's
    configured wheel folders or an index the user configured (PIP_EXTRA_INDEX_URL /
    UV_EXTRA_INDEX_URL pointing at PyTorch's CPU wheel index), so no session ever
    pulls gigabytes of CUDA wheels onto a CPU-only machine.
    """
    if has_cuda():
        session.install(torch_requirement())
        return
    links = find_links_args() if session.venv_backend == "uv" else []
    try:
        session.install(torch_requirement(), *links)
    except nox.command.CommandFailed:
        session.error(
            f"Could not install the CPU build of torch {TORCH_VERSION}. On a CPU-only "
            "machine, point PIP_EXTRA_INDEX_URL and UV_EXTRA_INDEX_URL at PyTorch's CPU "
            "wheel index (or PIP_FIND_LINKS/UV_FIND_LINKS at a folder holding the wheel), "
            "or set CODEFU_FORCE_CUDA_TORCH=1 to accept the CUDA build."
        )


def torch_constraint(session: nox.Session) -> list[str]:
    """`-c FILE` arguments that keep later installs on the torch build installed first."""
    constraints = Path(session.create_tmp()) / "torch-constraint.txt"
    constraints.write_text(torch_requirement() + "\n")
    return ["-c", str(constraints)]


def install_packages(session: nox.Session, *packages: str, extras: str = "") -> None:
    """Editable installs of local packages and their local dependencies, torch first if needed."""
    wanted: list[str] = []
    for package in packages:
        for dep in (*LOCAL_DEPS[package], package):
            if dep not in wanted:
                wanted.append(dep)
    constraint: list[str] = []
    if NEEDS_TORCH & set(packages) and not os.environ.get("CODEFU_FORCE_CUDA_TORCH"):
        install_torch(session)
        constraint = torch_constraint(session)
        if session.venv_backend == "uv":
            constraint += find_links_args()
    args: list[str] = []
    for dep in wanted:
        suffix = f"[{extras}]" if extras and dep in packages else ""
        args += ["-e", f"packages/{dep}{suffix}"]
    session.install(*args, *constraint)


def install_group(session: nox.Session, group: str) -> None:
    session.install(*nox.project.dependency_groups(_pyproject(ROOT / "pyproject.toml"), group))


def run_pytest(session: nox.Session, *args: str) -> None:
    """pytest, treating 'no tests collected' (exit 5) as a failure with a clear message."""
    code = session.run(
        "pytest", f"--timeout={SUITE_TIMEOUT}", *args, *session.posargs, success_codes=[0, 5]
    )
    if code == 5 and not session.posargs:
        session.error("pytest collected no tests: a suite that tests nothing is a failure here.")


@nox.session(python=PYTHON)
@nox.parametrize("package", [*PACKAGES, "repo"])
def tests(session: nox.Session, package: str) -> None:
    """Run one package's test suite in its own environment (`repo`: repository-level checks)."""
    install_group(session, "test")
    if package == "repo":
        session.install("nox>=2025.2.9", "pyyaml>=6")
        run_pytest(session, "tests")
        return
    install_packages(session, package, extras="test")
    ignore = ["--ignore=packages/sandbox/tests/judge"] if package == "sandbox" else []
    run_pytest(session, f"packages/{package}/tests", *ignore)


@nox.session(name="judge-tests", python=PYTHON)
def judge_tests(session: nox.Session) -> None:
    """The judge's security and accuracy suite: real attacks against the real sandbox."""
    install_group(session, "test")
    install_packages(session, "sandbox", extras="test")
    run_pytest(session, "packages/sandbox/tests/judge")


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check, ruff format --check, and mypy over every package."""
    install_group(session, "lint")
    session.install("nox>=2025.2.9")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")


@nox.session(python=PYTHON)
def prepare(session: nox.Session) -> None:
    """Prepare the tiered veRL datasets; arguments are Hydra overrides (e.g. data.source=DIR)."""
    install_packages(session, "data", extras="validate")
    session.run("codefu-data", "prepare", "--config-dir", str(ROOT / "conf"), *session.posargs)


@nox.session(python=PYTHON)
def train(session: nox.Session) -> None:
    """Train (cluster=local), rehearse on CPU (cluster=cpu) or submit (cluster=sagemaker_*).

    Arguments are Hydra overrides: `nox -s train -- cluster=sagemaker_p4de trainer.total_epochs=1`.
    """
    gpu = has_cuda() and sys.platform == "linux"
    install_packages(session, "trainer", extras="gpu" if gpu else "")
    session.install("-e", "packages/launcher[submit]")
    session.run("codefu-train", "--config-dir", str(ROOT / "conf"), *session.posargs)


@nox.session(python=PYTHON)
def report(session: nox.Session) -> None:
    """PNG plots of a training run's metrics: `nox -s report -- RUN_DIR`."""
    if not session.posargs:
        session.error(
            "Usage: nox -s report -- RUN_DIR (a run directory written by `nox -s train`)."
        )
    install_packages(session, "trainer")
    session.run("python", "-m", "codefu_trainer.training.report", *session.posargs)


@nox.session(python=PYTHON)
def evaluate(session: nox.Session) -> None:
    """pass@k of a model on held-out problems: `nox -s evaluate -- model.path=DIR [overrides]`;
    `nox -s evaluate -- compare DIR_A DIR_B` sets two evaluations side by side."""
    install_packages(
        session, "trainer", extras="gpu" if has_cuda() and sys.platform == "linux" else ""
    )
    args = session.posargs
    if args[:1] != ["compare"]:
        args = ["--config-dir", str(ROOT / "conf"), *args]
    session.run("codefu-eval", *args)


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks: `nox -s bench -- judge|reward|data` (all when none is named)."""
    install_packages(session, "trainer", extras="test")
    install_group(session, "test")
    names = session.posargs or ["judge", "reward", "data"]
    for name in names:
        script = ROOT / "benchmarks" / f"bench_{name}.py"
        if not script.exists():
            known = sorted(
                p.stem.removeprefix("bench_") for p in (ROOT / "benchmarks").glob("bench_*.py")
            )
            session.error(f"Unknown benchmark {name!r}; choose from: {', '.join(known)}.")
        session.run("python", str(script))


@nox.session(python=PYTHON)
def build(session: nox.Session) -> None:
    """Wheels and sdists of the four packages into dist/, then installed into a fresh venv."""
    session.install("build>=1.2", "uv>=0.5")
    dist = ROOT / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    for package in PACKAGES:
        session.run(
            "python",
            "-m",
            "build",
            "--installer",
            "uv",
            "--outdir",
            str(dist),
            f"packages/{package}",
        )
    wheels = sorted(str(p) for p in dist.glob("*.whl"))
    if len(wheels) != len(PACKAGES):
        session.error(f"Expected {len(PACKAGES)} wheels in dist/, found {len(wheels)}: {wheels}")
    check = Path(session.create_tmp()) / "install-check"
    shutil.rmtree(check, ignore_errors=True)
    session.run("uv", "venv", "--quiet", "--python", sys.executable, str(check), external=False)
    py = str(check / "bin" / "python")
    links = find_links_args()
    session.run("uv", "pip", "install", "--quiet", "--python", py, torch_requirement(), *links)
    session.run(
        "uv",
        "pip",
        "install",
        "--quiet",
        "--python",
        py,
        *wheels,
        *torch_constraint(session),
        *links,
    )
    session.run(
        py,
        "-c",
        "import codefu_sandbox, codefu_data, codefu_trainer, codefu_launcher; print('imports ok')",
        external=True,
    )
    for script in ("codefu-judge", "codefu-data", "codefu-reward", "codefu-launcher"):
        session.run(str(check / "bin" / script), "--help", silent=True, external=True)
    session.log(f"Built and install-checked: {', '.join(Path(w).name for w in wheels)}")


IMAGES = {"train": "docker/train.Dockerfile", "judge": "docker/judge.Dockerfile"}
# SageMaker runs x86-64 images: an image built on an ARM host must be cross-built.
IMAGE_PLATFORM = "linux/amd64"


def _docker_engine_running() -> bool:
    if shutil.which("docker") is None:
        return False
    probe = subprocess.run(["docker", "info"], capture_output=True, check=False, timeout=60)
    return probe.returncode == 0


def _aws(session: nox.Session, *args: str) -> subprocess.CompletedProcess[str]:
    if shutil.which("aws") is None:
        session.error("Pushing needs the AWS CLI (`aws`) on PATH.")
    return subprocess.run(["aws", *args], capture_output=True, text=True, check=False)


def _ensure_ecr_repository(session: nox.Session, region: str, name: str) -> None:
    """Create the ECR repository unless it exists; any other AWS error stops with its message.

    The AWS CLI exits 254 for every service error (AccessDenied included), so the error
    code in its message decides.
    """
    found = _aws(
        session, "ecr", "describe-repositories", "--region", region, "--repository-names", name
    )
    if found.returncode == 0:
        return
    if "(RepositoryNotFoundException)" not in found.stderr:
        session.error(f"aws ecr describe-repositories {name} failed: {found.stderr.strip()}")
    created = _aws(
        session, "ecr", "create-repository", "--region", region, "--repository-name", name
    )
    if created.returncode != 0 and "(RepositoryAlreadyExistsException)" not in created.stderr:
        session.error(f"aws ecr create-repository {name} failed: {created.stderr.strip()}")
    session.log(f"ECR repository {name} created in {region}.")


@nox.session(python=False)
def image(session: nox.Session) -> None:
    """Build the Docker images for linux/amd64, tagged with the package version.

    `-- push` first makes sure the ECR repositories exist (AWS_ACCOUNT_ID or the caller's
    account, AWS_REGION), then builds, logs in to ECR and pushes; `-- --dry-run` only
    prints the commands.
    """
    args = set(session.posargs)
    unknown = args - {"push", "--dry-run"}
    if unknown:
        session.error(f"Unknown arguments {sorted(unknown)}; use: push, --dry-run.")
    dry_run = "--dry-run" in args
    push = "push" in args
    version = package_version("trainer")
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    account = os.environ.get("AWS_ACCOUNT_ID", "")
    if push and not account:
        if dry_run:
            account = "<AWS_ACCOUNT_ID>"
        else:
            caller = _aws(
                session, "sts", "get-caller-identity", "--query", "Account", "--output", "text"
            )
            if caller.returncode != 0:
                session.error(
                    f"Could not look up the AWS account ({caller.stderr.strip()}); set "
                    "AWS_ACCOUNT_ID or configure AWS credentials."
                )
            account = caller.stdout.strip()
    registry = f"{account}.dkr.ecr.{region}.amazonaws.com" if push else ""
    tags = {name: f"{registry + '/' if registry else ''}codefu-{name}:{version}" for name in IMAGES}
    builds = [
        ["docker", "build", "--platform", IMAGE_PLATFORM, "-f", IMAGES[name], "-t", tag, "."]
        for name, tag in tags.items()
    ]
    login = (
        f"aws ecr get-login-password --region {region} | "
        f"docker login --username AWS --password-stdin {registry}"
    )
    if dry_run:
        if push:
            for name in IMAGES:
                print(
                    f"aws ecr describe-repositories --region {region} --repository-names "
                    f"codefu-{name} || aws ecr create-repository --region {region} "
                    f"--repository-name codefu-{name}"
                )
        for command in builds:
            print(" ".join(command))
        if push:
            print(login)
            for tag in tags.values():
                print(f"docker push {tag}")
        return
    if push:
        for name in IMAGES:
            _ensure_ecr_repository(session, region, f"codefu-{name}")
    if not _docker_engine_running():
        session.error(
            "No Docker engine is running here (`docker info` failed), so images cannot be built. "
            "Run this session on a machine with Docker, or `nox -s image -- --dry-run` "
            "to see the commands"
        )
    for command in builds:
        session.run(*command, external=True)
    if push:
        session.run("bash", "-c", login, external=True)
        for tag in tags.values():
            session.run("docker", "push", tag, external=True)
