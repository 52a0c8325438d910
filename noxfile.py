"""Task runner for the CodeFu trainer monorepo.

`nox -l` lists the sessions. Arguments after `--` go to the tool a session wraps:
Hydra overrides for `prepare` and `train`, pytest arguments for `tests` and
`judge-tests`, benchmark names for `bench`.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import nox

# nox loads this file by its path: the repository's own modules (tools/) are found from its
# folder, wherever nox was started.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from tools import bundle as offline_bundle
from tools import images

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
# Locked dependency sets (locks/<profile>.txt, made by `nox -s lock` from locks/<profile>.in):
# cpu for tests, the rehearsal and CPU machines; cuda for training on Linux + NVIDIA GPUs.
LOCKS = ROOT / "locks"
PROFILES = ("cpu", "cuda")
LOCK_PLATFORM = "x86_64-manylinux_2_28"
SUITE_TIMEOUT = "900"  # pytest-timeout per test: nothing may hang CI
# Suites that wait much of their time on Ray start-ups, subprocesses, downloads and sleeps
# (repo: nox sessions, fresh venvs, the bundle install), and the judge's (sandbox and
# judge-tests: compilers and sandboxed programs, each a process of its own): their test files
# run on pytest-xdist workers, one per core (at most 4); a file stays on one worker, so its
# module-scoped fixtures (Ray clusters, prepared data, built programs) start once.
PARALLEL_SUITES = ("sandbox", "trainer", "launcher", "repo")
PARALLEL_ARGS = (
    "--numprocesses=auto",
    "--maxprocesses=4",
    "--dist=loadfile",
    "--no-loadscope-reorder",
)

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["lint", "tests", "judge-tests"]
nox.options.error_on_missing_interpreters = True
# Keep each session's environment between runs; `install` skips it when nothing changed.
nox.options.reuse_venv = "yes"
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


def lock_profile() -> str:
    """The lock this machine installs from: `cuda` on Linux with an NVIDIA driver, else `cpu`."""
    return "cuda" if has_cuda() and sys.platform == "linux" else "cpu"


def _pip_find_links() -> list[str]:
    """Wheel folders from pip's configuration; uv does not read pip's config files."""
    out = ""
    # This interpreter's pip, else the pip on PATH (a uv-made environment has no pip).
    for pip in ([sys.executable, "-m", "pip"], [shutil.which("pip3") or "pip3"]):
        try:
            done = subprocess.run(
                [*pip, "config", "list"], capture_output=True, text=True, check=False, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            out = done.stdout
            break
    links: list[str] = []
    for line in out.splitlines():
        key, _, value = line.partition("=")
        if key.strip().endswith("find-links"):
            links.extend(value.strip().strip("'\"").split())
    return list(dict.fromkeys(links))


def find_links_args(profile: str) -> list[str]:
    """`--find-links` for pip's configured wheel folders, where the `+cpu` torch may lie.

    CPU profile only: those folders may hold `+cpu` wheels, which would win over CUDA ones.
    """
    if profile != "cpu":
        return []
    return [arg for link in _pip_find_links() for arg in ("--find-links", link)]


def training_extras() -> str:
    """The trainer's extras for training and evaluation: with vLLM where CUDA is."""
    return "train,gpu" if lock_profile() == "cuda" else "train"


def editables(**extras: str) -> list[str]:
    """`-e packages/<name>[extras]` for each named package and the local packages it needs."""
    wanted: list[str] = []
    for package in extras:
        for dep in (*LOCAL_DEPS[package], package):
            if dep not in wanted:
                wanted.append(dep)
    args: list[str] = []
    for dep in wanted:
        suffix = f"[{extras[dep]}]" if extras.get(dep) else ""
        args += ["-e", f"packages/{dep}{suffix}"]
    return args


def group(name: str) -> list[str]:
    """The requirements of a dependency group of the root pyproject.toml."""
    return list(nox.project.dependency_groups(_pyproject(ROOT / "pyproject.toml"), name))


def _install_fingerprint(profile: str, requirements: tuple[str, ...]) -> str:
    """What an environment's installs depend on: the lock, the pyprojects, the request."""
    digest = hashlib.sha256("\0".join((profile, *requirements)).encode())
    pyprojects = [
        ROOT / "pyproject.toml",
        *(ROOT / "packages" / p / "pyproject.toml" for p in PACKAGES),
    ]
    for path in (LOCKS / f"{profile}.txt", *pyprojects):
        digest.update(path.read_bytes())
    return digest.hexdigest()


# Longest stretch an install may pass without a line (README: no silent phase).
INSTALL_BEAT_S = 10.0


def install_summary(requirements: tuple[str, ...]) -> str:
    """What an install brings and roughly how long it takes the first time (2 cores, warm
    uv cache; later runs reuse the environment and take no time)."""
    if any("train" in r.partition("[")[2] for r in requirements):
        return "the training stack (torch, transformers, veRL, Ray, TRL…): ~1–3 min the first time"
    if any("packages/trainer" in r for r in requirements):
        return "the reward and judge stack (Ray, pyarrow…): ~30–60 s the first time"
    return "its packages: ~10–40 s the first time"


@contextmanager
def heartbeat(session: nox.Session, doing: str, every: float = INSTALL_BEAT_S) -> Iterator[None]:
    """A line every `every` seconds while the block runs (nox shows nothing of a silent
    command until it ends)."""
    done = threading.Event()
    start = time.monotonic()

    def beat() -> None:
        while not done.wait(every):
            session.log(f"... still {doing} ({time.monotonic() - start:.0f} s)")

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def install(
    session: nox.Session,
    *requirements: str,
    compile_bytecode: bool = True,
    into: Path | None = None,
) -> None:
    """Install `requirements` pinned by this machine's lock (`-c locks/<profile>.txt`) into the
    session's virtualenv, or into the environment at `into` (a shared one, `use_env`).

    An environment that already holds exactly this (same requirements, same lock, same
    pyprojects) is left as it is: nothing is installed or even resolved again.
    `compile_bytecode=False` where the environment's few imports cost less than compiling
    all of it (the comment at the install says what compiling saves).
    """
    profile = lock_profile()
    location = into or Path(session.virtualenv.location)
    stamp = location / ".codefu-installed"
    fingerprint = _install_fingerprint(profile, requirements)
    if stamp.is_file() and stamp.read_text() == fingerprint:
        session.log(f"Environment up to date with locks/{profile}.txt: nothing to install.")
        return
    uv = into is not None or session.venv_backend == "uv"
    links = find_links_args(profile) if uv else []
    args = (*requirements, "-c", str(LOCKS / f"{profile}.txt"), *links)
    # Bytecode compiled at install (uv: all of site-packages; pip does it anyway).
    # Every Ray worker, subprocess and CLI imports torch, transformers and veRL;
    # where PYTHONDONTWRITEBYTECODE is set (CI machines, many containers) no import
    # is cached and each compiles them again: `import verl` 21.7 s, compiled 8.8 s.
    env = {"UV_COMPILE_BYTECODE": "1" if compile_bytecode else "0"}
    session.log(f"Installing {install_summary(requirements)}; later runs reuse it.")
    try:
        with heartbeat(session, "installing"):
            if into is None:
                session.install(*args, env=env)
            else:
                python = str(into / "bin" / "python")
                session.run(uv_binary(), "pip", "install", "--python", python, *args,
                            env=env, external=True)  # fmt: skip
    except nox.command.CommandFailed:
        if profile == "cuda":
            raise
        session.error(
            "Could not install from locks/cpu.txt (above). If torch's `+cpu` build was not "
            "found: point PIP_EXTRA_INDEX_URL and UV_EXTRA_INDEX_URL at PyTorch's CPU wheel "
            "index (or PIP_FIND_LINKS/UV_FIND_LINKS at a folder holding the wheel)."
        )
    stamp.write_text(fingerprint)


def uv_binary() -> str:
    """The uv installed beside nox (as nox itself prefers), else the one on PATH."""
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        pass
    found = shutil.which("uv")
    if found is None:
        raise SystemExit("uv is not installed: see the README's Prerequisites (nox and uv).")
    return found


def training_stack() -> tuple[str, ...]:
    """The training environment: the trainer with its training extras (vLLM too where CUDA
    is) and its test extra (which brings the launcher's `submit`), and the test group, so
    that training, evaluation, the reports, the benchmarks and the trainer's tests share it."""
    return (*group("test"), *editables(trainer=f"test,{training_extras()}"))


def data_stack() -> tuple[str, ...]:
    """The data environment: the data package and the judge (prepare, codefu-data, codefu-judge)."""
    return tuple(editables(data=""))


# Environments several sessions share (.nox/<name>): name -> (requirements, compile bytecode).
# Built once from the lock, rebuilt when the lock or a pyproject changes (`install`'s stamp);
# a second session reuses it and starts in seconds.
SHARED_ENVS: dict[str, tuple[Callable[[], tuple[str, ...]], bool]] = {
    "training": (training_stack, True),
    "data": (data_stack, True),
}


@contextmanager
def _exclusive(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive lock on `lock_file` (two sessions started at once build one env)."""
    with lock_file.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _is_python_env(location: Path) -> bool:
    """A virtual environment of PYTHON whose interpreter still exists."""
    cfg = location / "pyvenv.cfg"
    if not cfg.is_file() or not (location / "bin" / "python").exists():
        return False
    versions = re.findall(r"^version(?:_info)?\s*=\s*(\S+)", cfg.read_text(), re.MULTILINE)
    return any(v == PYTHON or v.startswith(PYTHON + ".") for v in versions)


def use_env(
    session: nox.Session,
    name: str,
    requirements: Sequence[str] | None = None,
    compile_bytecode: bool = True,
) -> Path:
    """The environment `.nox/<name>` (under nox's --envdir) for a session that runs without
    its own (`python=False`): created with uv once, `requirements` installed by `install`
    (a SHARED_ENVS name brings its own), and made the session's environment (PATH,
    VIRTUAL_ENV). Returns its bin folder: run its programs by their path there."""
    if requirements is None:
        make, compile_bytecode = SHARED_ENVS[name]
        requirements = make()
    envdir = session.cache_dir.parent  # nox's --envdir, .nox by default
    location = envdir / name
    envdir.mkdir(parents=True, exist_ok=True)
    with _exclusive(envdir / f".{name}.lock"):
        if not _is_python_env(location):
            session.log(f"Creating the environment {location} (Python {PYTHON}).")
            try:
                session.run(uv_binary(), "venv", "--quiet", "--clear", "--python", PYTHON,
                            str(location), external=True, silent=True)  # fmt: skip
            except nox.command.CommandFailed:
                session.error(
                    f"Could not create a Python {PYTHON} environment at {location} (uv's "
                    f"reason above): install Python {PYTHON} (README, Prerequisites)."
                )
        install(session, *requirements, compile_bytecode=compile_bytecode, into=location)
    bin_dir = location / "bin"
    session.env["VIRTUAL_ENV"] = str(location)
    session.env["PATH"] = os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])
    return bin_dir


# What our CLIs' exit codes mean (README "Exit codes"); a session that runs one ends nox
# with the CLI's own code.
CLI_EXIT_CODES = {
    1: "the run itself failed (its error is above)",
    2: "bad input: a configuration error or an unreadable input file (the line above names it)",
    3: "nothing to run: a prerequisite is missing (no data, no GPU, no training stack)",
}


def run_cli(session: nox.Session, *args: str) -> None:
    """Run one of our CLIs; when it fails, nox exits at once with the CLI's own exit code.

    nox itself exits 1 for every failed session, which would hide the CLI's documented
    code from the shell; sessions named after this one on the same command line do not run.
    """
    try:
        session.run(*args)
    except nox.command.CommandFailed as exc:
        code = exc.return_code if exc.return_code else 1
        meaning = CLI_EXIT_CODES.get(code, "see the CLI's message above")
        program = Path(args[0]).name
        name = " ".join([program, *args[1:3]]) if program == "python" else program
        session.log(f"{name} exited with code {code}: {meaning}.")
        raise SystemExit(code) from None


REAL_DATA_ENV = "CODEFU_REAL_DATA"
REAL_DATA_SKIPS = (
    f"{REAL_DATA_ENV} is unset, so the tests on real CodeContests problems skip "
    "(pytest's SKIPPED lines above name any that were selected). To run them: "
    f"{REAL_DATA_ENV}=DIR nox -s ..., DIR holding codefu_easy/{{train,test}}.parquet."
)


def run_pytest(
    session: nox.Session,
    *args: str,
    bin_dir: Path | None = None,
    runner: Sequence[str] = (),
) -> None:
    """pytest (from `bin_dir`, else the session's virtualenv; `runner`: a command that starts
    it, `python -m pytest` in a container), treating 'no tests collected' (exit 5) as a
    failure with a clear message unless tests were selected; says last what skipped for lack
    of the real data, and how to run it."""
    pytest = list(runner) or [str(bin_dir / "pytest") if bin_dir else "pytest"]
    try:
        # A crash (even at interpreter exit, after pytest's own handler is gone) prints
        # every thread's Python stack.
        session.run(
            *pytest,
            f"--timeout={SUITE_TIMEOUT}",
            *args,
            *session.posargs,
            env={"PYTHONFAULTHANDLER": "1"},
            external=bool(runner),
        )
    except nox.command.CommandFailed as exc:
        if exc.return_code != 5:
            raise
        if not session.posargs:
            session.error(
                "pytest collected no tests: a suite that tests nothing is a failure here."
            )
    finally:
        if not os.environ.get(REAL_DATA_ENV):
            session.log(REAL_DATA_SKIPS)


@nox.session(python=False)
@nox.parametrize("package", [*PACKAGES, "repo"])
def tests(session: nox.Session, package: str) -> None:
    """Run one package's test suite in its own environment (`repo`: repository-level checks,
    the lock check among them); the trainer's and the data package's (whose test extra needs
    veRL) run in the shared training environment."""
    if package == "repo":
        repo = (*group("test"), "nox>=2025.2.9", "pyyaml>=6", "uv>=0.5")
        bin_dir = use_env(session, "tests-package-repo", repo, compile_bytecode=False)
        # tests/images: the judge image's, run by judge-tests.
        run_pytest(session, "tests", "--ignore=tests/images", *PARALLEL_ARGS, bin_dir=bin_dir)
        return
    if package in ("trainer", "data"):
        bin_dir = use_env(session, "training")
    else:
        # Of the test environments only the trainer's gains from compiled bytecode: its Ray
        # workers and subprocesses import veRL again and again. Measured from a fresh
        # environment on 2 cores: compiling took data's 55 s to save 18 s of its tests, the
        # launcher's 40 s to save none (its suite waits on network-namespace clusters).
        requirements = (*group("test"), *editables(**{package: "test"}))
        bin_dir = use_env(session, f"tests-package-{package}", requirements, False)
    ignore = ["--ignore=packages/sandbox/tests/judge"] if package == "sandbox" else []
    parallel = PARALLEL_ARGS if package in PARALLEL_SUITES else ()
    run_pytest(session, f"packages/{package}/tests", *ignore, *parallel, bin_dir=bin_dir)


# Where `nox -s judge-tests` runs the judge's suite: `host` (default), or `image`: inside a
# container of the judge image built on the local base (.ci/run sets it where it can install
# podman), followed by the image's own tests (tests/images), which read the image's tag from
# JUDGE_IMAGE_ENV and skip, saying why, without it.
JUDGE_TESTS_ENV = "CODEFU_JUDGE_TESTS"
JUDGE_IMAGE_ENV = "CODEFU_JUDGE_IMAGE"


@nox.session(name="judge-tests", python=PYTHON)
def judge_tests(session: nox.Session) -> None:
    """The judge's security and accuracy suite: real attacks against the real sandbox, on this
    host. With CODEFU_JUDGE_TESTS=image (CI, where it can install podman; docs/images.md):
    inside a container of the judge image instead, then the image's own tests (tests/images:
    its least privileges, its refusals, a judge worker in a container joining a Ray head
    here)."""
    place = os.environ.get(JUDGE_TESTS_ENV, "host")
    if place not in ("host", "image"):
        session.error(f"{JUDGE_TESTS_ENV}={place}: give host (the default) or image.")
    suite = ("packages/sandbox/tests/judge", "tests/images")
    if place == "host":
        install(session, *group("test"), *editables(sandbox="test"), compile_bytecode=False)
        run_pytest(session, *suite, *PARALLEL_ARGS)
        return
    # pip for the image's wheel folder; the reward side for tests/images' Ray head and driver.
    requirements = (*group("test"), *editables(sandbox="test", trainer=""), "pip>=24")
    install(session, *requirements, compile_bytecode=False)
    engine = _engine(session)
    unavailable = images.judge_cgroup_unavailable()
    if unavailable:
        session.error(f"{JUDGE_TESTS_ENV}=image: {unavailable}; run without it (on this host).")
    tag = build_local_images(session, engine, ["judge"])["judge"]
    tmp = Path(session.create_tmp())
    suite_build, suite_tag = images.suite_image_command(
        engine, tag, images.base_tag(), tmp / "judge-suite-layer"
    )
    _build(session, engine, suite_build, suite_tag)
    libs = tmp / "judge-image-testlibs"
    shutil.rmtree(libs, ignore_errors=True)
    # pytest and its plugins for the container's Python, beside the image (not in it).
    session.run(uv_binary(), "pip", "install", "--quiet", "--target", str(libs),
                "--python-version", PYTHON, "--python-platform", LOCK_PLATFORM,
                "-c", str(LOCKS / "cpu.txt"), *group("test"), external=True)  # fmt: skip
    mounts = ["-v", f"{ROOT}:/src:ro", "-v", f"{libs}:/testlibs:ro", "-w", "/src"]
    mounts += ["-e", "PYTHONPATH=/testlibs", "-e", "PYTHONFAULTHANDLER=1"]
    data = os.environ.get(REAL_DATA_ENV)
    if data:
        mounts += ["-v", f"{data}:{data}:ro", "-e", f"{REAL_DATA_ENV}={data}"]
    with images.judge_cgroup() as cgroup:
        # The least privileges every layer needs, and the engine's own seccomp filter off:
        # the sandbox's filter alone must stop every attack, as on a host (tests/images
        # judges under the engine's default filter).
        privileges = [*images.judge_container_args(cgroup), "--security-opt", "seccomp=unconfined"]
        runner = engine.command(
            "run", "--rm", *privileges, *mounts, suite_tag, "python", "-m", "pytest"
        )
        run_pytest(session, "-p", "no:cacheprovider", suite[0], *PARALLEL_ARGS, runner=runner)
    session.env[JUDGE_IMAGE_ENV] = tag
    run_pytest(session, suite[1], *PARALLEL_ARGS)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff check, ruff format --check, and mypy (the packages, tools and benchmarks)."""
    install(session, *group("lint"), "nox>=2025.2.9")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    session.run("mypy")


def _lock_pins(path: Path) -> set[str]:
    """The `name==version[ ; marker]` lines of a compiled lock, comments dropped."""
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return {re.sub(r"\s+", " ", line) for line in lines if "==" in line}


def compile_lock(session: nox.Session, profile: str, out: Path) -> None:
    """`uv pip compile locks/<profile>.in` (+ the root dev group) for Linux x86-64, Python
    3.11, into `out`. uv keeps the versions `out` already pins where they still fit."""
    env = None
    if profile == "cuda":  # a CPU wheel index would hand the CUDA profile `+cpu` torch
        env = {"UV_EXTRA_INDEX_URL": None, "UV_FIND_LINKS": None}
    local = [arg for p in PACKAGES for arg in ("--no-emit-package", f"codefu-{p}")]
    session.run(
        "uv", "pip", "compile", f"locks/{profile}.in", "--quiet",
        "--config-file", "locks/uv.toml", "--group", "pyproject.toml:dev",
        "--python-version", PYTHON, "--python-platform", LOCK_PLATFORM,
        "--custom-compile-command", "nox -s lock", *local, *find_links_args(profile),
        "-o", str(out),
        external=True, env=env,
    )  # fmt: skip


@nox.session(python=False)
def lock(session: nox.Session) -> None:
    """Compile locks/{cpu,cuda}.txt from locks/*.in and the pyprojects with uv.

    `-- --check [PROFILE]`: fail when a lock no longer matches what the pyprojects resolve
    to, or a profile no longer resolves (CI runs this through `nox -s tests`).
    """
    check = "--check" in session.posargs
    profiles = [a for a in session.posargs if a != "--check"] or list(PROFILES)
    unknown = set(profiles) - set(PROFILES)
    if unknown:
        session.error(f"Unknown profiles {sorted(unknown)}; choose from {', '.join(PROFILES)}.")
    for profile in profiles:
        lock_file = LOCKS / f"{profile}.txt"
        if not check:
            compile_lock(session, profile, lock_file)
            continue
        fresh = Path(session.create_tmp()) / f"{profile}.txt"
        shutil.copyfile(lock_file, fresh)
        try:
            compile_lock(session, profile, fresh)
        except nox.command.CommandFailed:
            session.error(
                f"locks/{profile}.in no longer resolves (uv's reason above): fix the "
                "pins in the pyprojects, then run `nox -s lock` and commit locks/."
            )
        stale, new = _lock_pins(lock_file), _lock_pins(fresh)
        if stale != new:
            changes = [f"-{pin}" for pin in sorted(stale - new)] + [
                f"+{pin}" for pin in sorted(new - stale)
            ]
            session.error(
                f"locks/{profile}.txt does not match the pyprojects ({', '.join(changes)}): "
                "run `nox -s lock` and commit locks/."
            )
        session.log(f"locks/{profile}.txt matches the pyprojects and resolves.")


@nox.session(python=False)
def prepare(session: nox.Session) -> None:
    """Prepare the tiered veRL datasets; arguments are Hydra overrides (e.g. data.source=DIR)."""
    bin_dir = use_env(session, "data")
    conf = str(ROOT / "conf")
    run_cli(session, str(bin_dir / "codefu-data"), "prepare", "--config-dir", conf,
            *session.posargs)  # fmt: skip


@nox.session(python=False)
def train(session: nox.Session) -> None:
    """Train (cluster=local), rehearse on CPU (cluster=cpu: TRL; cluster=cpu_verl: veRL's own
    trainer, docs/train.md "veRL on CPU") or submit (cluster=sagemaker_*).

    Arguments are Hydra overrides: `nox -s train -- cluster=sagemaker_p4de trainer.total_epochs=1`.
    """
    bin_dir = use_env(session, "training")
    run_cli(session, str(bin_dir / "codefu-train"), "--config-dir", str(ROOT / "conf"),
            *session.posargs)  # fmt: skip


@nox.session(python=False)
def smoke(session: nox.Session) -> None:
    """`codefu-train --smoke`: 2 GRPO steps of veRL's trainer on this machine's GPU (its CPU
    without one), checkpoint, torn-step resume, export, and the per-phase memory table
    (docs/smoke.md). Arguments are Hydra overrides: `nox -s smoke -- cluster=local`."""
    bin_dir = use_env(session, "training")
    conf = str(ROOT / "conf")
    run_cli(session, str(bin_dir / "codefu-train"), "--config-dir", conf, "--smoke",
            *session.posargs)  # fmt: skip


def console_scripts() -> dict[str, str]:
    """Each console script of the four packages → the package that declares it."""
    return {
        script: package
        for package in PACKAGES
        for script in _pyproject(ROOT / "packages" / package / "pyproject.toml")["project"].get(
            "scripts", {}
        )
    }


def cli_environment(script: str) -> tuple[str, tuple[str, ...] | None]:
    """Where `nox -s cli -- SCRIPT` runs: a shared environment that holds SCRIPT
    (SHARED_ENVS: the requirements are its own), else the `cli` environment with SCRIPT's
    package and the extras it needs."""
    package = console_scripts()[script]
    if script in ("codefu-train", "codefu-eval"):
        return "training", None
    if package in ("data", "sandbox"):
        return "data", None
    return "cli", tuple(editables(**{package: {"launcher": "submit"}.get(package, "")}))


@nox.session(python=False)
def cli(session: nox.Session) -> None:
    """Any of the packages' commands in an environment holding it:
    `nox -s cli -- codefu-judge --help` (also codefu-data, codefu-reward, codefu-train,
    codefu-eval, codefu-launcher); the command's exit code is nox's."""
    scripts = sorted(console_scripts())
    if not session.posargs or session.posargs[0] not in scripts:
        given = f"{session.posargs[0]!r} is not one of them. " if session.posargs else ""
        session.error(
            f"Usage: nox -s cli -- COMMAND [ARGS...]; the commands are {', '.join(scripts)}. "
            f"{given}Example: nox -s cli -- codefu-judge --help"
        )
    name, requirements = cli_environment(session.posargs[0])
    bin_dir = use_env(session, name, requirements)
    run_cli(session, str(bin_dir / session.posargs[0]), *session.posargs[1:])


@nox.session(python=False)
def report(session: nox.Session) -> None:
    """PNG plots of a training run's metrics, the judge panel among them, and a table of the
    judge metrics: `nox -s report -- RUN_DIR` (its metrics.jsonl, else the MLflow run it
    logged to) or `nox -s report -- --mlflow-run RUN_ID [--tracking-uri URI] [--out DIR]`."""
    if not session.posargs:
        session.error(
            "Usage: nox -s report -- RUN_DIR (a run directory written by `nox -s train`), or "
            "nox -s report -- --mlflow-run RUN_ID [--tracking-uri URI] (default URI: "
            "MLFLOW_TRACKING_URI)."
        )
    python = str(use_env(session, "training") / "python")
    run_cli(session, python, "-m", "codefu_trainer.training.report", *session.posargs)


@nox.session(python=False)
def evaluate(session: nox.Session) -> None:
    """pass@k of a model on held-out problems: `nox -s evaluate -- model.path=DIR [overrides]`;
    `nox -s evaluate -- compare DIR_A DIR_B` sets two evaluations side by side."""
    bin_dir = use_env(session, "training")
    args = session.posargs
    if args[:1] != ["compare"]:
        args = ["--config-dir", str(ROOT / "conf"), *args]
    run_cli(session, str(bin_dir / "codefu-eval"), *args)


@nox.session(python=False)
def bench(session: nox.Session) -> None:
    """Benchmarks: `nox -s bench -- judge|reward|data|eval|languages|callbased` (judge, reward
    and data when none is named)."""
    python = str(use_env(session, "training") / "python")  # eval needs the training stack
    names = session.posargs or ["judge", "reward", "data"]
    for name in names:
        script = ROOT / "benchmarks" / f"bench_{name}.py"
        if not script.exists():
            known = sorted(
                p.stem.removeprefix("bench_") for p in (ROOT / "benchmarks").glob("bench_*.py")
            )
            session.error(f"Unknown benchmark {name!r}; choose from: {', '.join(known)}.")
        session.run(python, str(script))


@nox.session(python=PYTHON)
def build(session: nox.Session) -> None:
    """Wheels and sdists of the four packages into dist/, then install-checked in a fresh venv:
    first the base install (the reward side, no torch), then the trainer's `train` extra."""
    install(session, "build>=1.2", "uv>=0.5")
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
    wheels = {p.name.split("-")[0]: p for p in dist.glob("*.whl")}
    if len(wheels) != len(PACKAGES):
        session.error(f"Expected {len(PACKAGES)} wheels in dist/, found {sorted(wheels)}")
    check = Path(session.create_tmp()) / "install-check"
    shutil.rmtree(check, ignore_errors=True)
    session.run("uv", "venv", "--quiet", "--python", sys.executable, str(check), external=False)
    py, bin_dir = str(check / "bin" / "python"), check / "bin"
    profile = lock_profile()
    locked = ["-c", str(LOCKS / f"{profile}.txt"), *find_links_args(profile)]
    uv_install = ["uv", "pip", "install", "--quiet", "--python", py, *locked]
    session.run(*uv_install, *map(str, wheels.values()))
    session.run(
        py,
        "-c",
        "import importlib.util, codefu_sandbox, codefu_data, codefu_launcher, "
        "codefu_trainer.reward.service\n"
        "assert importlib.util.find_spec('torch') is None, 'the base install pulled torch'\n"
        "print('base install: imports ok, no torch')",
        external=True,
    )
    for script in ("codefu-judge", "codefu-data", "codefu-reward", "codefu-launcher"):
        session.run(str(bin_dir / script), "--help", silent=True, external=True)
    # Without the training stack codefu-train says what to install and exits 3.
    session.run(str(bin_dir / "codefu-train"), "--check", external=True, success_codes=[3])
    trainer = wheels["codefu_trainer"].resolve().as_uri()
    session.run(*uv_install, f"codefu-trainer[train] @ {trainer}")
    session.run(
        str(bin_dir / "codefu-train"),
        "--config-dir",
        str(ROOT / "conf"),
        "--check",
        "cluster=cpu",
        silent=True,
        external=True,
    )
    session.log(f"Built and install-checked: {', '.join(sorted(p.name for p in wheels.values()))}")


def bundle_repository() -> offline_bundle.Repository:
    """What a bundle takes from this repository (the `bundle` session, the images' wheels)."""
    return offline_bundle.Repository(
        packages=PACKAGES,
        profiles=PROFILES,
        python=PYTHON,
        locks=LOCKS,
        conf=ROOT / "conf",
        version=package_version,
        find_links=find_links_args,
    )


@nox.session(python=PYTHON)
def bundle(session: nox.Session) -> None:
    """Wheels for installing without network: `nox -s bundle -- --out DIR [--profile
    cuda|cpu|judge|smoke] [--image-tools] [--python 3.12] [--platform manylinux_2_28_x86_64]
    [--exclude torch,transformers] [--exclude-from FREEZE] [--wheels DIR] [--dry-run]`;
    `--profile smoke` writes one tar.xz for `codefu-train --smoke` (docs/bundle.md; `-- --help`)."""
    repo = bundle_repository()
    args = offline_bundle.parse_request(session, repo)
    install(session, "pip>=24", compile_bytecode=False)
    offline_bundle.make(session, args, repo)


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


def _engine(session: nox.Session, choice: str = "") -> images.Engine:
    """The container engine (`images.find_engine`), or the session ends saying what to install."""
    engine = images.find_engine(choice)
    if engine is None:
        session.error(images.no_engine(choice))
    session.log(f"Container engine: {' '.join(engine.command('build', '...'))}")
    return engine


def _build(session: nox.Session, engine: images.Engine, command: list[str], tag: str) -> None:
    """Run one image build and log how long it took and the image's size; the image the tag
    named before is removed when nothing else uses it (rebuilds do not pile up)."""
    replaced = engine.image_id(tag)
    start = time.monotonic()
    with heartbeat(session, f"building {tag}", every=60):
        session.run(*command, external=True)
    size = engine.size(tag)
    session.log(f"{tag}: built in {time.monotonic() - start:.0f} s, {size / 1e9:.2f} GB.")
    if replaced and replaced != engine.image_id(tag):
        subprocess.run(engine.command("rmi", replaced), capture_output=True, check=False)


def build_local_images(
    session: nox.Session, engine: images.Engine, names: Sequence[str]
) -> dict[str, str]:
    """Build `names` on the local base with wheels from offline bundles (`images`): name ->
    tag. The session's environment must hold pip (the bundles' downloads)."""
    base = images.make_base(session, engine)
    repo = bundle_repository()
    version = package_version("trainer")
    tags = {}
    for name in names:
        wheels = images.wheel_folder(session, repo, images.BUNDLE_PROFILE[name])
        tag = images.local_tag(name, version)
        _build(
            session, engine, images.build_command(engine, name, tag, base=base, wheels=wheels), tag
        )
        tags[name] = tag
    return tags


def _image_options(session: nox.Session) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="nox -s image --", description=image.__doc__)
    parser.add_argument("action", nargs="?", choices=["push"], help="push to ECR after building")
    parser.add_argument("--dry-run", action="store_true", help="print the commands only")
    parser.add_argument(
        "--local-base",
        action="store_true",
        help="build on a Debian base made here (debootstrap, root), installing from offline "
        "bundles: the judge image and the training image's CPU part",
    )
    parser.add_argument("--only", choices=list(images.IMAGES), help="build this image only")
    parser.add_argument(
        "--engine", choices=["docker", "podman"], help="default: Docker if its engine runs, "
        "else podman",
    )  # fmt: skip
    options = parser.parse_args(session.posargs)
    if options.local_base and options.action == "push":
        session.error(
            "--local-base builds the judge image and the training image's CPU part for checks "
            "on this machine; push images built on their own bases (without --local-base)."
        )
    return options


@nox.session(python=False)
def image(session: nox.Session) -> None:
    """Build the images for linux/amd64, tagged with the package version, with Docker where
    its engine runs, else podman (with the flags this host needs; docs/images.md).

    `-- --local-base`: where no base image can be pulled, on a Debian base made here
    (debootstrap, as root) with every Python package from offline bundles (no package index
    in the build): the judge image, and the training image's CPU part
    (`codefu-train:<version>-cpu`: no CUDA base, EFA or flash-attn). `-- --only judge|train`:
    one image. `-- push` first makes sure the ECR repositories exist (AWS_ACCOUNT_ID or the
    caller's account, AWS_REGION), then builds, logs in to ECR and pushes; `-- --dry-run` only
    prints the commands.
    """
    options = _image_options(session)
    names = [options.only] if options.only else list(images.IMAGES)
    push = options.action == "push"
    version = package_version("trainer")
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
    account = os.environ.get("AWS_ACCOUNT_ID", "")
    if push and not account:
        if options.dry_run:
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
    tags = {name: f"{registry + '/' if registry else ''}codefu-{name}:{version}" for name in names}
    if options.dry_run:
        # Nothing runs: a named engine is taken as it is; else the one a build would use.
        if options.engine == "docker":
            engine = images.Engine("docker")
        else:
            engine = images.find_engine(options.engine or "") or images.Engine("docker")
        if push:
            for name in names:
                print(
                    f"aws ecr describe-repositories --region {region} --repository-names "
                    f"codefu-{name} || aws ecr create-repository --region {region} "
                    f"--repository-name codefu-{name}"
                )
        for name, tag in tags.items():
            if options.local_base:
                profile = images.BUNDLE_PROFILE[name]
                command = images.build_command(
                    engine, name, images.local_tag(name, version), base=images.base_tag(),
                    wheels=images.wheel_folder_path(bundle_repository(), profile),
                )  # fmt: skip
            else:
                command = images.build_command(engine, name, tag)
            print(" ".join(command))
        if push:
            print(f"aws ecr get-login-password --region {region} | {engine.name} login "
                  f"--username AWS --password-stdin {registry}")  # fmt: skip
            for tag in tags.values():
                print(f"{engine.name} push {tag}")
        return
    if push:
        for name in names:
            _ensure_ecr_repository(session, region, f"codefu-{name}")
    engine = _engine(session, options.engine or "")
    if options.local_base:
        use_env(session, "image", ("pip>=24",), compile_bytecode=False)  # the bundles' pip
        build_local_images(session, engine, names)
        return
    for name, tag in tags.items():
        _build(session, engine, images.build_command(engine, name, tag), tag)
    if push:
        login = (
            f"aws ecr get-login-password --region {region} | "
            f"{' '.join(engine.command('login'))} --username AWS --password-stdin {registry}"
        )
        session.run("bash", "-c", login, external=True)
        for tag in tags.values():
            session.run(*engine.command("push", tag), external=True)


@nox.session(name="image-smoke", python=False)
def image_smoke(session: nox.Session) -> None:
    """The training image's CPU part built on the local base (`nox -s image -- --local-base
    --only train`), then `codefu-train --smoke` inside a container of it, on the CPU, its run
    directory under runs/ here; exits with the smoke's code. Arguments are Hydra overrides."""
    engine = _engine(session)
    use_env(session, "image", ("pip>=24",), compile_bytecode=False)  # the bundles' pip
    tag = build_local_images(session, engine, ["train"])["train"]
    runs = ROOT / "runs"
    runs.mkdir(exist_ok=True)
    # The image's cache (CODEFU_CACHE_DIR) kept between runs, as a host's is, and the warm-
    # started models this machine's rehearsals cached (keyed by their seed, shape, settings and
    # examples; the image's torch is the CPU lock's, as here): the smoke's is made once.
    cache = images.CACHE / "smoke-cache"
    rehearsal = images.CACHE.parent / "rehearsal"
    for folder in (cache, rehearsal):
        folder.mkdir(parents=True, exist_ok=True)
    mounts = ["-v", f"{runs}:/opt/ml/code/runs", "-v", f"{cache}:/var/cache/codefu"]
    mounts += ["-v", f"{rehearsal}:/var/cache/codefu/rehearsal"]
    container = ["run", "--rm", "--init", *mounts, tag]
    start = time.monotonic()
    try:
        smoke = ["codefu-train", "--config-dir", "/opt/codefu/conf", "--smoke"]
        run_cli(session, *engine.command(*container, *smoke, *session.posargs))
    finally:
        session.log(f"The smoke in {tag} ran {time.monotonic() - start:.0f} s.")
