"""Container images (`nox -s image`, docs/images.md): the engine that builds and runs them and
the flags this host needs for it, a Debian base made here with debootstrap where no base
image can be pulled, the wheel folders such builds install from without a package index,
the build commands, and what a judge container needs for every sandbox layer.

The engine, its flags and the commands are plain functions (the tests that run containers
use them too); the steps that make a base or a wheel folder take the nox session.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import resource
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import nox

    from tools import bundle as offline_bundle

IMAGES = {"judge": "docker/judge.Dockerfile", "train": "docker/train.Dockerfile"}
# SageMaker runs x86-64 images: an image built on an ARM host must be cross-built.
PLATFORM = "linux/amd64"
# The bundle profile (tools/bundle.py) each image installs from when built on a local base.
BUNDLE_PROFILE = {"judge": "judge", "train": "cpu"}
# The training image's CPU part: its Dockerfile's build arguments for a CPU base (the CUDA
# base, EFA and flash-attn are left out; the CPU lock's torch instead of the CUDA one).
TRAIN_CPU_ARGS = {"PROFILE": "cpu", "TRAINER_EXTRAS": "train,sagemaker-mlflow"}
CACHE = Path(os.environ.get("CODEFU_CACHE_DIR") or Path.home() / ".cache/codefu") / "image"

# podman's default open-file and process limits for a container: runc cannot set a limit
# above its own, and without CAP_SYS_RESOURCE (this project's machines) nothing raises one.
PODMAN_DEFAULT_LIMIT = 1_048_576
# podman lowers its own process limit to its `build` default, so no container gets more.
PODMAN_NPROC = 32_768

# The local base: what the Dockerfiles' default bases stand for, made with debootstrap. Debian
# bookworm (python:3.11-slim-bookworm's Debian) with Python 3.11 as `python` and a pip that
# installs into it, as that image has.
BASE_SUITE = "bookworm"
BASE_PACKAGES = ("python3", "python3-pip", "python-is-python3")
BASE_CHANGES = ("ENV PIP_BREAK_SYSTEM_PACKAGES=1", 'CMD ["/bin/bash"]')
BASE_REPOSITORY = "localhost/codefu-base"

# Where a judge container's memory cgroup directory lies on a host with cgroup v1 memory.
CGROUP_V1_MEMORY = Path("/sys/fs/cgroup/memory")


@dataclass(frozen=True)
class Engine:
    """A container engine (docker or podman) and the flags this host needs for it."""

    name: str
    options: tuple[str, ...] = ()  # before the subcommand
    limits: tuple[str, ...] = ()  # `--ulimit` flags of `build` and `run`

    def command(self, subcommand: str, *args: str) -> list[str]:
        """`<engine> [options] <subcommand> [limits] args...`."""
        limits = self.limits if subcommand in ("build", "run") else ()
        return [self.name, *self.options, subcommand, *limits, *args]

    def image_id(self, tag: str) -> str:
        """The id of the image `tag` names ('' when there is none)."""
        done = subprocess.run(
            self.command("image", "inspect", "--format", "{{.Id}}", tag),
            capture_output=True, text=True, check=False, timeout=120,
        )  # fmt: skip
        return done.stdout.strip() if done.returncode == 0 else ""

    def has_image(self, tag: str) -> bool:
        return bool(self.image_id(tag))

    def size(self, tag: str) -> int:
        """The image's size in bytes, as the engine reports it."""
        done = subprocess.run(
            self.command("image", "inspect", "--format", "{{.Size}}", tag),
            capture_output=True, text=True, check=True, timeout=120,
        )  # fmt: skip
        return int(done.stdout.split()[0])


def docker_engine_running() -> bool:
    if shutil.which("docker") is None:
        return False
    probe = subprocess.run(["docker", "info"], capture_output=True, check=False, timeout=60)
    return probe.returncode == 0


def find_engine(choice: str = "") -> Engine | None:
    """The engine `choice` names (docker or podman), or without one Docker where its engine
    answers, else podman where it is installed; None when none of those can run here."""
    if choice in ("", "docker") and docker_engine_running():
        return Engine("docker")
    if choice in ("", "podman") and shutil.which("podman"):
        return Engine("podman", podman_options(), podman_limits())
    return None


def no_engine(choice: str = "") -> str:
    """What to do when `find_engine(choice)` found none."""
    found = {
        "docker": "Docker's engine does not answer (`docker info` failed)",
        "podman": "podman is not installed",
    }
    why = found[choice] if choice else f"{found['docker']} and {found['podman']}"
    return (
        f"No container engine to build with: {why}. Install one (Debian/Ubuntu, as root: "
        "apt-get install podman runc debootstrap catatonit) or run this on a machine with "
        "Docker; `nox -s image -- --dry-run` prints the commands."
    )


def podman_options(
    cgroup_root: Path = Path("/sys/fs/cgroup"), systemd: Path = Path("/run/systemd/system")
) -> tuple[str, ...]:
    """podman's global flags this host needs: runc where cgroups are not unified v2 (crun
    refused this project's machines' hybrid v1 + v2 hierarchy), cgroupfs where no systemd
    runs to manage cgroups."""
    options: list[str] = []
    if not (cgroup_root / "cgroup.controllers").exists() and shutil.which("runc"):
        options += ["--runtime", "runc"]
    if not systemd.is_dir():
        options += ["--cgroup-manager", "cgroupfs"]
    return tuple(options)


def podman_limits() -> tuple[str, ...]:
    """`--ulimit` flags where podman's defaults exceed what this host lets a container have:
    the open-file and process limits of this process (hard), within podman's own."""
    flags: list[str] = []
    wanted = {
        "nofile": _limit(resource.getrlimit(resource.RLIMIT_NOFILE)[1]),
        "nproc": min(_limit(resource.getrlimit(resource.RLIMIT_NPROC)[1]), PODMAN_NPROC),
    }
    for name, hard in wanted.items():
        if hard < PODMAN_DEFAULT_LIMIT:
            flags += ["--ulimit", f"{name}={hard}:{hard}"]
    return tuple(flags)


def _limit(value: int) -> int:
    return PODMAN_DEFAULT_LIMIT if value == resource.RLIM_INFINITY else value


def build_command(
    engine: Engine, name: str, tag: str, *, base: str = "", wheels: Path | None = None
) -> list[str]:
    """The build of image `name` tagged `tag`, from the repository root. With `base` (a local
    base image) and `wheels` (a wheel folder, no package index): the judge image whole, the
    training image's CPU part."""
    args = ["--platform", PLATFORM, "-f", IMAGES[name], "-t", tag]
    if base:
        args += ["--build-arg", f"BASE_IMAGE={base}"]
        if name == "train":
            args += [a for k, v in TRAIN_CPU_ARGS.items() for a in ("--build-arg", f"{k}={v}")]
    if wheels is not None:
        args += ["--build-arg", "NO_INDEX=--no-index", "--build-context", f"wheels={wheels}"]
    return engine.command("build", *args, ".")


def local_tag(name: str, version: str) -> str:
    """The tag of an image built on the local base: the training image's is its CPU part."""
    return f"codefu-{name}:{version}" + ("-cpu" if name == "train" else "")


def base_tag() -> str:
    """The local base's tag: its recipe's digest, so a changed recipe makes a new base."""
    recipe = "\n".join([BASE_SUITE, *BASE_PACKAGES, *BASE_CHANGES])
    return f"{BASE_REPOSITORY}:{BASE_SUITE}-{hashlib.sha256(recipe.encode()).hexdigest()[:12]}"


def debian_mirror(suite: str = BASE_SUITE, apt: Path = Path("/etc/apt")) -> str | None:
    """The first archive this host's apt sources name for Debian `suite` with `main` (a host
    that reaches only its own mirror makes its base from it); None: debootstrap's default."""
    for path in sorted((apt / "sources.list.d").glob("*.sources")):
        for stanza in path.read_text().split("\n\n"):
            fields: dict[str, list[str]] = {}
            for line in stanza.splitlines():
                key, sep, value = line.partition(":")
                if sep and not line.startswith((" ", "#")):
                    fields[key.strip().lower()] = value.split()
            if (
                "deb" in fields.get("types", [])
                and suite in fields.get("suites", [])
                and "main" in fields.get("components", [])
                and fields.get("enabled", ["yes"]) != ["no"]
                and fields.get("uris")
            ):
                return fields["uris"][0]
    lists = [apt / "sources.list", *sorted((apt / "sources.list.d").glob("*.list"))]
    for path in lists:
        if not path.is_file():
            continue
        for line in path.read_text().splitlines():
            words = line.split("#", 1)[0].split()
            if words[:1] != ["deb"]:
                continue
            words = words[1:]
            if words and words[0].startswith("["):
                while words and not words[0].endswith("]"):
                    words.pop(0)
                words = words[1:]
            if len(words) >= 3 and words[1] == suite and "main" in words[2:]:
                return words[0]
    return None


def make_base(session: nox.Session, engine: Engine) -> str:
    """The local base (Debian with Python 3.11, `base_tag()`): made with debootstrap and
    imported into the engine, once; later builds reuse it. Needs root and debootstrap."""
    tag = base_tag()
    if engine.has_image(tag):
        session.log(f"Local base {tag}: already made.")
        return tag
    if os.geteuid() != 0 or shutil.which("debootstrap") is None:
        session.error(
            "Making the local base needs root and debootstrap (apt-get install debootstrap); "
            "or build on bases the engine can pull: `nox -s image` without --local-base."
        )
    start = time.monotonic()
    work = CACHE / "base"
    shutil.rmtree(work, ignore_errors=True)
    rootfs = work / "rootfs"
    rootfs.mkdir(parents=True)
    mirror = debian_mirror()
    session.log(
        f"Making the local base {tag}: debootstrap {BASE_SUITE} (minbase with "
        f"{', '.join(BASE_PACKAGES)}) from {mirror or 'debootstrap default mirror'}; "
        "~30 s to a few minutes the first time."
    )
    session.run(
        "debootstrap", "--variant=minbase", f"--include={','.join(BASE_PACKAGES)}",
        BASE_SUITE, str(rootfs), *([mirror] if mirror else []), external=True,
    )  # fmt: skip
    for package in (rootfs / "var/cache/apt/archives").glob("*.deb"):
        package.unlink()
    shutil.rmtree(rootfs / "var/lib/apt/lists", ignore_errors=True)
    (rootfs / "var/lib/apt/lists/partial").mkdir(parents=True)
    archive = work / "rootfs.tar"
    session.run("tar", "-C", str(rootfs), "-cf", str(archive), ".", external=True)
    changes = [arg for change in BASE_CHANGES for arg in ("--change", change)]
    session.run(*engine.command("import", *changes, str(archive), tag), external=True)
    shutil.rmtree(work)
    session.log(f"Local base {tag}: made in {time.monotonic() - start:.0f} s.")
    return tag


def wheel_folder_path(repo: offline_bundle.Repository, profile: str) -> Path:
    """Where the wheel folder of `profile` for this lock and these pyprojects lies."""
    from tools import bundle as offline_bundle  # imports nox: only where a session runs

    digest = hashlib.sha256(profile.encode())
    lock = offline_bundle.LOCK_OF[profile]
    inputs = [
        repo.locks / f"{lock}.txt",
        *(repo.locks.parent / "packages" / p / "pyproject.toml" for p in repo.packages),
        Path(offline_bundle.__file__),
    ]
    for path in inputs:
        digest.update(path.read_bytes())
    return CACHE / "wheels" / f"{profile}-{digest.hexdigest()[:12]}"


def wheel_folder(session: nox.Session, repo: offline_bundle.Repository, profile: str) -> Path:
    """A `nox -s bundle -- --profile PROFILE --image-tools` folder for this lock and these
    pyprojects, made once and reused (its codefu wheels are never installed: the Dockerfiles
    build the packages from their source). The session's environment must hold pip."""
    from tools import bundle as offline_bundle

    folder = wheel_folder_path(repo, profile)
    if (folder / "manifest.json").is_file():
        session.log(f"Wheels for the {profile} image: {folder} (made before).")
        return folder
    start = time.monotonic()
    staging = folder.with_name(folder.name + ".partial")
    shutil.rmtree(staging, ignore_errors=True)
    argv = ["--profile", profile, "--image-tools", "--out", str(staging)]
    offline_bundle.make(session, offline_bundle.parse_request(session, repo, argv), repo)
    staging.rename(folder)
    session.log(
        f"Wheels for the {profile} image: {folder}, made in {time.monotonic() - start:.0f} s."
    )
    return folder


# The judge's suite runs in the judge image plus strace, which its allowlist re-checks need:
# a layer on top for the tests, never part of the image. strace's packages are fetched on the
# local base (a stage the judge image's rebuilds do not touch) and installed from the files.
SUITE_LAYER = """\
FROM {base} AS strace
RUN mkdir -p /debs/partial /packages && apt-get update \\
    && apt-get install -y --download-only --no-install-recommends \\
        -o Dir::Cache::archives=/debs strace \\
    && mv /debs/*.deb /packages/
FROM {image}
COPY --from=strace /packages/ /tmp/packages/
RUN dpkg -i /tmp/packages/*.deb && rm -rf /tmp/packages
"""


def suite_image_command(
    engine: Engine, image: str, base: str, folder: Path
) -> tuple[list[str], str]:
    """The build of the judge's suite image on `image` (made from the local base `base`), its
    Containerfile written into the empty `folder` (the build context), and its tag."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Containerfile").write_text(SUITE_LAYER.format(image=image, base=base))
    tag = f"{image}-suite"
    return engine.command("build", "-f", str(folder / "Containerfile"), "-t", tag, str(folder)), tag


def judge_container_args(cgroup: Path) -> list[str]:
    """What a judge container needs for every sandbox layer (docs/images.md): an init as
    PID 1 (it reaps what a killed supervisor leaves), CAP_SYS_ADMIN (a private IPC namespace
    per run, a network one with `Judge(netns=True)`) and a memory cgroup directory of its
    own, read-write (`cgroup`, made by `judge_cgroup`). The judge runs as root in it (the
    image's default user), which lets it drop each run to a sandbox uid."""
    return ["--init", "--cap-add", "SYS_ADMIN", "-v", f"{cgroup}:{CGROUP_V1_MEMORY}"]


def judge_cgroup_unavailable() -> str:
    """Why `judge_cgroup` cannot give a container a memory cgroup here ('' when it can)."""
    if os.geteuid() != 0:
        return "making a memory cgroup for the container needs root"
    if not (CGROUP_V1_MEMORY / "memory.limit_in_bytes").is_file():
        return (
            f"this host has no cgroup v1 memory hierarchy at {CGROUP_V1_MEMORY}; a container's "
            "memory cgroup on cgroup v2 has not been set up or run on this project's machines"
        )
    return ""


@contextlib.contextmanager
def judge_cgroup() -> Iterator[Path]:
    """A fresh memory cgroup directory on this host (cgroup v1) for one judge container,
    removed with whatever the judge left in it."""
    why = judge_cgroup_unavailable()
    if why:
        raise RuntimeError(why)
    path = CGROUP_V1_MEMORY / f"codefu-judge-{uuid.uuid4().hex[:12]}"
    path.mkdir()
    try:
        yield path
    finally:
        for child in sorted(path.glob("**/"), key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                child.rmdir()
