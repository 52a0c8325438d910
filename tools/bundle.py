"""The offline install bundle of `nox -s bundle` (docs/bundle.md): every wheel a profile's
install needs for a target Python and platform, for `pip install --no-index --find-links`;
for `--profile smoke`, what `codefu-train --smoke` imports, installed into one folder and
packed as one `tar.xz` archive to unpack on a GPU host beside its torch.

Pure steps (names, the base environment, the resolution, what is left out, the target's wheel
tags, the bundle's notes) and the session's steps, which take the nox session and what they
need of the repository (`Repository`) as arguments.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import tarfile
import tomllib
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nox


@dataclass(frozen=True)
class Repository:
    """What a bundle takes from the noxfile: the repository's packages and locks. Paths in
    the commands are relative to the repository root, where nox runs its sessions."""

    packages: tuple[str, ...]  # the folders under packages/, each built into the bundle
    profiles: tuple[str, ...]  # the lock profiles: locks/<profile>.in, locks/<profile>.txt
    python: str  # the CPython X.Y the locks are for: --python's default
    locks: Path
    conf: Path  # the Hydra configs codefu-train reads (the smoke archive carries them)
    version: Callable[[str], str]  # a package's version, from its pyproject.toml
    find_links: Callable[[str], list[str]]  # uv's --find-links arguments for a profile


# What a profile's bundle installs: packages/<folder>[extras].
INSTALLS: dict[str, tuple[str, ...]] = {
    # What the training image installs (docker/train.Dockerfile), flash-attn included.
    "cuda": (
        "sandbox",
        "data",
        "launcher[submit]",
        "trainer[train,gpu,flash-attn,sagemaker-mlflow]",
    ),
    # Its CPU twin: the same without the GPU-only extras.
    "cpu": ("sandbox", "data", "launcher[submit]", "trainer[train,sagemaker-mlflow]"),
    # What the judge image installs (docker/judge.Dockerfile): the reward side, no torch.
    "judge": ("sandbox", "data", "launcher", "trainer"),
    # `codefu-train --smoke` on a GPU host without vLLM (the `hf` rollout): the training
    # stack less what the smoke never imports (UNUSED["smoke"]).
    "smoke": ("sandbox", "data", "launcher", "trainer[train]"),
}
# The lock whose versions a profile keeps where they fit the target (the smoke: the versions
# veRL 0.9.1 is tested with, transformers 5.9.0 among them).
LOCK_OF = {"cuda": "cuda", "cpu": "cpu", "judge": "cpu", "smoke": "cuda"}
# What an image build needs beside the installed set (`--image-tools`): the packages' build
# backend (the Dockerfiles build them from their source) and the training image's installer.
IMAGE_TOOLS = ("hatchling", "uv")
# Profiles installed into one folder and packed as one archive rather than left as wheels.
ARCHIVES = ("smoke",)
# Distributions the smoke's closure declares but its path never imports, and why: kept out of
# its resolution (uv's --excludes), so neither they, what only they need, nor their version
# limits reach the bundle. tests/test_bundle.py runs the smoke's veRL step without them.
UNUSED = {
    "smoke": {
        "trl": "the CPU rehearsal's trainer (cluster=cpu); veRL imports it only where installed",
        "mlflow": "tracking, which the smoke turns off (run.tracking.mlflow=false)",
        "matplotlib": "the plots of the rehearsal and of `nox -s report`",
        "wandb": "a veRL tracker; the smoke logs to the console",
        "tensorboard": "a veRL tracker; the smoke logs to the console",
        "pylatexenc": "veRL's math answer scoring; the smoke's reward is the judge",
        "pybind11": "a build tool veRL declares",
        "virtualenv": "Ray's per-job virtualenvs (runtime_env pip/uv), which no run asks for",
        "py-spy": "the Ray dashboard's on-demand stack dumps and profiles",
        "smart-open": "Ray's remote working_dir and py_modules, which no run uses",
        "cryptography": "google-auth's signing (through Ray's opencensus), which no run calls",
    }
}
# Parts of Ray the smoke's path never imports or reads (the test's import audit: no module
# under them is imported), removed from the installed tree.
RAY_UNUSED = {
    "ray/jars": "Java workers' jars (no Java in a run)",
    "ray/rllib": "Ray RLlib",
    "ray/tune": "Ray Tune",
    "ray/train": "Ray Train",
    "ray/serve": "Ray Serve",
    "ray/data": "Ray Data",
    "ray/llm": "Ray's LLM serving",
}
# The dashboard's web UI, served only to a browser: its files go, its folders stay (Ray's
# dashboard refuses to start on Linux without them).
RAY_UI = "ray/dashboard/client/build"
# Extras whose packages may ship only a source archive built on the target (flash-attn).
SOURCE_EXTRAS = {"flash-attn": "flash-attn"}
# Wheels downloaded or built for bundles, reused by the next bundle when their sha256 matches.
CACHE = Path(os.environ.get("CODEFU_CACHE_DIR") or Path.home() / ".cache/codefu") / "bundle"
PLATFORM_TAG = re.compile(r"manylinux_(\d+)_(\d+)_(x86_64|aarch64)")


def normalize_name(name: str) -> str:
    """A distribution name as package indexes compare them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_base(lines: list[str]) -> dict[str, str | None]:
    """The base environment's distributions → version (None where only a name is given), from
    requirement names or `pip freeze` lines (`name==version`, `name @ url`)."""
    base: dict[str, str | None] = {}
    for raw in lines:
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        match = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*)", line)
        if match is None:
            raise ValueError(f"{raw.strip()!r} is neither a requirement name nor a pip freeze line")
        name, rest = match.groups()
        pinned = re.match(r"===?\s*([^\s;]+)", rest)
        base[normalize_name(name)] = pinned.group(1) if pinned else None
    return base


def parse_resolution(text: str) -> tuple[dict[str, str], dict[str, set[str]]]:
    """A `uv pip compile` output with its `# via` notes: name → version, name → what needs it."""
    pins: dict[str, str] = {}
    needed_by: dict[str, set[str]] = {}
    current = ""
    for line in text.splitlines():
        pin = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", line)
        if pin:
            current = normalize_name(pin.group(1))
            pins[current] = pin.group(2)
            needed_by[current] = set()
            continue
        via = re.match(r"^\s+#\s+(?:via\s+)?([A-Za-z0-9][A-Za-z0-9._-]*)", line)
        if via and current and via.group(1) != "via":
            needed_by[current].add(normalize_name(via.group(1)))
    return pins, needed_by


def same_release(a: str, b: str) -> bool:
    """Whether two versions are one release, local parts aside (`2.11.0+cu130`, `2.11.0`)."""
    return a.split("+", 1)[0] == b.split("+", 1)[0]


def preferred_versions(lock: dict[str, str], base: dict[str, str | None]) -> dict[str, str]:
    """The versions a resolution keeps where they fit: the base environment's (their local
    parts dropped: the package index has none), else the lock's."""
    found = dict(lock)
    for name, version in base.items():
        if version:
            found[name] = version.split("+", 1)[0]
    return found


def left_out(
    pins: dict[str, str], needed_by: dict[str, set[str]], base: dict[str, str | None]
) -> tuple[dict[str, str], dict[str, str]]:
    """What the bundle leaves out → why, and what it carries although the base has it → why.

    Left out: what the base has (by name, or in the resolved version) and what only those
    need: a package every one of whose dependents is left out is needed only by the base's
    own packages, which a working base environment already holds (torch's CUDA libraries).
    Carried: what the base has in a version the resolution could not keep (transformers
    5.17 where veRL needs < 5.11).
    """
    out: dict[str, str] = {}
    carried: dict[str, str] = {}
    for name in pins.keys() & base.keys():
        version = base[name]
        if version and not same_release(version, pins[name]):
            carried[name] = f"the base has {version}; the resolution needs {pins[name]}"
        else:
            out[name] = "in the base environment"
    changed = True
    while changed:
        changed = False
        for name, users in needed_by.items():
            if name in out or name in carried or not users or not users <= out.keys():
                continue
            out[name] = "needed only by " + ", ".join(sorted(users))
            changed = True
    return out, carried


def target_platforms(platform: str) -> list[str]:
    """`manylinux_2_N_ARCH` and every older manylinux tag pip accepts on such a host."""
    major, glibc, arch = PLATFORM_TAG.fullmatch(platform).groups()  # type: ignore[union-attr]
    found = [f"manylinux_{major}_{minor}_{arch}" for minor in range(int(glibc), 4, -1)]
    legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
    return found + [f"{legacy[m]}_{arch}" for m in legacy if m <= int(glibc) and major == "2"]


def target_tags(python: str, platform: str, *, built_there: bool = False) -> set[str]:
    """Wheel tags pip accepts for CPython `python` on the manylinux `platform` (or older);
    `built_there`: also `linux_ARCH`, the tag of a wheel built on such a host."""
    from packaging import tags

    platforms = target_platforms(platform)
    if built_there:
        platforms.append("linux_" + PLATFORM_TAG.fullmatch(platform).group(3))  # type: ignore[union-attr]
    version = tuple(int(p) for p in python.split("."))
    found = [
        *tags.cpython_tags(version, platforms=platforms),
        *tags.compatible_tags(version, platforms=platforms),
    ]
    return {str(tag) for tag in found}


def wheel_fits(filename: str, accepted: set[str]) -> bool:
    """True when one of the wheel's tags is accepted."""
    from packaging.utils import parse_wheel_filename

    return any(str(tag) in accepted for tag in parse_wheel_filename(filename)[3])


def argument_parser(repo: Repository) -> argparse.ArgumentParser:
    """The options after `nox -s bundle --`."""
    parser = argparse.ArgumentParser(
        prog="nox -s bundle --",
        description="Write every wheel a profile's install needs for a target Python and "
        "platform, minus what a base environment has, for `pip install --no-index "
        "--find-links OUT -r OUT/requirements.txt` on a host without network.",
    )
    parser.add_argument("--out", type=Path, help="an empty or new folder for the bundle")
    parser.add_argument(
        "--profile",
        choices=list(INSTALLS),
        default="cuda",
        help="cuda: what the training image installs (default); cpu: its CPU twin; judge: "
        "what the judge image installs; smoke: what `codefu-train --smoke` imports, installed "
        "into one folder and packed as one tar.xz archive to unpack beside the target's torch",
    )
    parser.add_argument(
        "--image-tools",
        action="store_true",
        help=f"also {' and '.join(IMAGE_TOOLS)}, which building an image from the bundle needs "
        "(the packages' build backend, the training image's installer): docs/images.md",
    )
    parser.add_argument(
        "--python", default=repo.python, help=f"target CPython X.Y (default {repo.python})"
    )
    parser.add_argument(
        "--platform",
        default="manylinux_2_28_x86_64",
        help="target manylinux_2_N_{x86_64,aarch64}, N the glibc minor version of the "
        "target (`ldd --version`; the training image's Ubuntu 22.04: 35); default "
        "manylinux_2_28_x86_64",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="NAME[,NAME...]",
        help="distributions the base environment has (torch, transformers, ...)",
    )
    parser.add_argument(
        "--exclude-from",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="a file of such names, one a line, or the base's `pip freeze` (a version the "
        "resolution cannot keep is carried in the bundle, the lock's where it fits)",
    )
    parser.add_argument(
        "--wheels",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="a folder of wheels built elsewhere (flash-attn built on the "
        "target), used in place of building a source archive here",
    )
    parser.add_argument(
        "--xz-preset",
        type=int,
        choices=range(10),
        default=9,
        metavar="0-9",
        help="--profile smoke: the archive's xz preset; 9 (default) the smallest (its 64 MiB "
        "window finds what Ray's binaries share), 0 the fastest",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="resolve and print the contents and size only; download nothing",
    )
    return parser


def parse_request(
    session: nox.Session, repo: Repository, argv: list[str] | None = None
) -> argparse.Namespace:
    """The session's arguments (or `argv`), checked: the base environment in `.base`, the
    command line in `.argv`; a wrong one ends the session saying what to give instead."""
    parser = argument_parser(repo)
    argv = list(session.posargs) if argv is None else argv
    args = parser.parse_args(argv)
    args.argv = argv
    if not re.fullmatch(r"3\.\d+", args.python):
        session.error(f"--python {args.python}: give a CPython version X.Y (e.g. 3.12).")
    if not PLATFORM_TAG.fullmatch(args.platform):
        session.error(
            f"--platform {args.platform}: give a manylinux tag as pip names it, e.g. "
            "manylinux_2_28_x86_64 (the glibc version of the target's oldest host)."
        )
    if args.image_tools and args.profile in ARCHIVES:
        session.error(f"--image-tools is for a wheel folder, not the {args.profile} archive.")
    if args.out is None and not args.dry_run:
        session.error("Give --out DIR (an empty or new folder), or --dry-run.")
    if args.out is not None and args.out.exists() and any(args.out.iterdir()):
        session.error(f"--out {args.out} is not empty: give a new folder or empty this one.")
    lines = [name for arg in args.exclude for name in arg.split(",")]
    for path in args.exclude_from:
        if not path.is_file():
            session.error(f"--exclude-from {path}: no such file.")
        lines += path.read_text().splitlines()
    try:
        args.base = parse_base(lines)
    except ValueError as exc:
        session.error(f"--exclude/--exclude-from: {exc}.")
    return args


def _requests(args: argparse.Namespace, repo: Repository) -> list[str]:
    """The profile's install as requirement lines: its packages, the image build tools with
    --image-tools, and the lock profile's own plain requirements (locks/cuda.in: flash-attn's
    build tools) where the profile is one."""
    local = [f"./packages/{spec}" for spec in INSTALLS[args.profile]]
    if args.image_tools:
        local += IMAGE_TOOLS
    if args.profile not in repo.profiles:
        return local
    plain = [
        line.strip() for line in (repo.locks / f"{args.profile}.in").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith(("#", "-"))
    ]  # fmt: skip
    return [*local, *plain]


def _resolve(session: nox.Session, args: argparse.Namespace, repo: Repository, tmp: Path) -> Path:
    """`uv pip compile` of the profile's install for the target, preferring the base's versions,
    then the lock's (uv keeps a pin of the output file where it still fits the target). Where
    the base's version does not fit, a second resolution prefers the lock's for it."""
    request = tmp / "bundle.in"
    request.write_text("".join(f"{line}\n" for line in _requests(args, repo)))
    lock_name = LOCK_OF[args.profile]
    lock = parse_resolution((repo.locks / f"{lock_name}.txt").read_text())[0]
    resolved = tmp / "resolved.txt"
    major, glibc, arch = PLATFORM_TAG.fullmatch(args.platform).groups()  # type: ignore[union-attr]
    env = None
    if lock_name == "cuda":  # a CPU wheel index would hand the CUDA profile `+cpu` torch
        env = {"UV_EXTRA_INDEX_URL": None, "UV_FIND_LINKS": None}
    target = [
        "--python-version",
        args.python,
        "--python-platform",
        f"{arch}-manylinux_{major}_{glibc}",
    ]
    ours = [arg for p in repo.packages for arg in ("--no-emit-package", f"codefu-{p}")]
    common = ["--quiet", "--config-file", "locks/uv.toml", *target, *repo.find_links(lock_name)]
    unused = tmp / "unused.txt"
    unused.write_text("".join(f"{name}\n" for name in UNUSED.get(args.profile, {})))

    def compile_preferring(preferred: dict[str, str]) -> dict[str, str]:
        resolved.write_text("".join(f"{n}=={v}\n" for n, v in sorted(preferred.items())))
        session.run("uv", "pip", "compile", str(request), *common, *ours, "--excludes",
                    str(unused), "-o", str(resolved), external=True, env=env)  # fmt: skip
        return parse_resolution(resolved.read_text())[0]

    preferred = preferred_versions(lock, args.base)
    pins = compile_preferring(preferred)
    moved = [n for n, v in args.base.items() if v and n in pins and not same_release(v, pins[n])]
    if any(n in lock for n in moved):
        compile_preferring({**preferred, **{n: lock[n] for n in moved if n in lock}})
    # The same set with the files uv picked for the target (their sizes and hashes).
    session.run("uv", "pip", "compile", str(resolved), "--no-deps", *common, "--format",
                "pylock.toml", "-o", str(tmp / "pylock.toml"), external=True, env=env)  # fmt: skip
    return resolved


def _pylock_files(path: Path) -> dict[str, dict]:
    """name → its pylock.toml entry (the target's wheels, the source archive)."""
    with path.open("rb") as f:
        return {normalize_name(p["name"]): p for p in tomllib.load(f)["packages"]}


def _file_name(entry: dict) -> str:
    return str(entry.get("name") or (entry.get("url") or entry["path"]).rsplit("/", 1)[-1])


def _pip_target(args: argparse.Namespace) -> list[str]:
    """pip's options choosing wheels for the target instead of this interpreter."""
    abi = "cp" + args.python.replace(".", "")
    platforms = [arg for p in target_platforms(args.platform) for arg in ("--platform", p)]
    return ["--only-binary=:all:", *platforms, "--python-version", args.python,
            "--implementation", "cp", "--abi", abi]  # fmt: skip


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _place(source: Path, into: Path) -> None:
    """`source` into the folder `into`: a hard link where both share a file system."""
    target = into / source.name
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _fetch_wheels(
    session: nox.Session, args: argparse.Namespace, wheels: dict[str, dict], out: Path
) -> None:
    """The wheels the resolution chose into `out`: from the bundle cache where a file there has
    the same sha256, the rest downloaded into the cache first by pip (hash-checked)."""
    cache = CACHE / "wheels"
    cache.mkdir(parents=True, exist_ok=True)
    expected = {_file_name(w): w["hashes"]["sha256"] for w in wheels.values()}

    def cached(name: str) -> bool:
        return (cache / name).is_file() and _sha256(cache / name) == expected[name]

    absent = {name for name in expected if not cached(name)}
    if absent:
        request = Path(session.create_tmp()) / "bundle" / "download.txt"
        request.write_text(
            "".join(
                f"{n}=={args.versions[n]} --hash=sha256:{expected[_file_name(w)]}\n"
                for n, w in wheels.items()
                if _file_name(w) in absent
            )
        )
        session.run("pip", "download", "--quiet", "--no-deps", *_pip_target(args),
                    "-d", str(cache), "-r", str(request))  # fmt: skip
    still = sorted(name for name in absent if not cached(name))
    if still:
        session.error(
            f"pip downloaded other files than the resolution chose for {', '.join(still)}: "
            "check that pip and uv use the same package index (pip config list; uv's "
            "UV_INDEX_URL / UV_EXTRA_INDEX_URL)."
        )
    for name in expected:
        _place(cache / name, out)


def _fetch_source(session: nox.Session, entry: dict, into: Path) -> None:
    """`entry`'s source archive (its pylock.toml entry) into `into`, sha256-checked. Not with
    `pip download`: it prepares the archive's metadata, which flash-attn's cannot without torch."""
    sdist = entry.get("sdist")
    if sdist is None:
        session.error(
            f"{entry['name']} {entry['version']} has neither a wheel nor a source archive."
        )
    target = into / _file_name(sdist)
    if "path" in sdist or sdist["url"].startswith("file:"):
        shutil.copyfile(sdist.get("path") or urllib.request.url2pathname(sdist["url"][5:]), target)
    else:
        with urllib.request.urlopen(sdist["url"], timeout=300) as response, target.open("wb") as f:
            shutil.copyfileobj(response, f)
    if _sha256(target) != sdist["hashes"]["sha256"]:
        target.unlink()
        session.error(f"The source archive of {entry['name']} did not match its sha256: run again.")


def _build_from_source(
    session: nox.Session, pin: tuple[str, str], accepted: set[str], into: Path, tmp: Path
) -> str:
    """Build `name`'s wheel from its source archive here; '' when it was built for the target,
    else why not (the build failed, or the wheel is for another Python or platform)."""
    name, version = pin
    built = CACHE / "built"
    pattern = f"{name.replace('-', '_')}-{version}-*.whl"
    if not any(wheel_fits(w.name, accepted) for w in built.glob(pattern)):
        fresh = tmp / "built" / name
        shutil.rmtree(fresh, ignore_errors=True)
        try:
            session.run("pip", "wheel", "--quiet", "--no-deps", "--no-binary", name,
                        f"{name}=={version}", "-w", str(fresh))  # fmt: skip
        except nox.command.CommandFailed:
            return "its build here failed"
        made = [w.name for w in fresh.glob("*.whl")]
        if len(made) != 1 or not wheel_fits(made[0], accepted):
            return f"the wheel built here ({', '.join(made)}) is not for the target"
        built.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(fresh / made[0], built / made[0])
    _place(next(w for w in built.glob(pattern) if wheel_fits(w.name, accepted)), into)
    return ""


def _left_out_lines(manifest: dict) -> list[str]:
    """README lines: what was left out and why, what was carried although the base has it."""
    lines = ["", "## Left out", ""]
    for name, why in sorted(manifest["excluded"].items()):
        version = manifest["base_versions"].get(name) or manifest["versions"][name]
        lines.append(f"- {name} {version}: {why}")
    if manifest["unused"]:
        lines += ["", "## Never imported on this path: kept out of the resolution", ""]
        lines += [f"- {name}: {why}" for name, why in manifest["unused"].items()]
    if manifest["carried"]:
        lines += ["", "## Carried although the base environment has them", ""]
        lines += [
            f"- {n} {manifest['versions'][n]}: {why}" for n, why in manifest["carried"].items()
        ]
    if manifest["not_locked"]:
        lines += ["", f"## Versions other than locks/{manifest['lock']}.txt", ""]
        lines += [f"- {line}" for line in manifest["not_locked"]]
    return lines


def readme_text(args: argparse.Namespace, manifest: dict, sources: dict[str, str]) -> str:
    """The bundle's README.md: what is in it, what was left out and why, how to install it."""
    out = "DIR"
    lines = [
        f"# CodeFu install bundle: {args.profile}, CPython {args.python}, {args.platform}",
        "",
        f"Made by `nox -s bundle -- {' '.join(manifest['arguments'])}`.",
        f"{len(manifest['files'])} files, {manifest['size_bytes'] / 1e6:.1f} MB.",
        "",
        "## Install (no network needed); DIR is this folder",
        "",
        f"    pip install --no-index --find-links {out} -r {out}/requirements.txt",
    ]
    for name, why in sources.items():
        version = manifest["versions"][name]
        build_env = "FLASH_ATTENTION_FORCE_BUILD=TRUE " if name == "flash-attn" else ""
        lines += [
            "",
            f"then {name} from its source archive ({why}), on the target:",
            "",
            f"    {build_env}pip install --no-index --find-links {out} --no-build-isolation "
            f"{name}=={version}",
        ]
    lines += _left_out_lines(manifest)
    lines += ["", "## Files", ""]
    lines += [f"- {name} ({size / 1e6:.1f} MB)" for name, size in manifest["files"].items()]
    return "\n".join([*lines, ""])


def archive_name(args: argparse.Namespace) -> str:
    """The archive's name without `.tar.xz`: profile, CPython tag and platform."""
    return f"codefu-{args.profile}-cp{args.python.replace('.', '')}-{args.platform}"


def archive_readme(args: argparse.Namespace, manifest: dict) -> str:
    """The archive's README.md: how to unpack and run it, what it holds, what was left out."""
    name = archive_name(args)
    python = f"python{args.python}"
    lines = [
        f"# CodeFu smoke bundle: CPython {args.python}, {args.platform}",
        "",
        f"What `codefu-train --smoke` imports beyond the host's base environment, installed "
        f"into `site/`; made by `nox -s bundle -- {' '.join(manifest['arguments'])}`. "
        f"{len(manifest['files'])} distributions, {manifest['installed_bytes'] / 1e6:.1f} MB "
        "unpacked. No network needed.",
        "",
        "## Unpack and run",
        "",
        f"    sha256sum -c {name}.tar.xz.sha256",
        f"    tar -xJf {name}.tar.xz",
        "    codefu-smoke/codefu-train --smoke [OVERRIDES]",
        "",
        f"`codefu-train` is `PYTHONPATH=codefu-smoke/site {python} -m "
        "codefu_trainer.training.cli --config-dir codefu-smoke/conf`: any codefu-train "
        f"command runs the same way. `PYTHON=/path/to/python` picks the interpreter (default "
        f"`{python}`): the one whose environment holds what is left out below (torch). "
        "`site/` comes first on the path, so what it carries shadows the base's copy.",
    ]
    lines += _left_out_lines(manifest)
    lines += ["", f"## Left out of Ray {manifest['versions'].get('ray', '')}", ""]
    lines += [f"- {part}: {why}" for part, why in manifest["ray_removed"].items()]
    lines += ["", "## Distributions in site/", ""]
    lines += [f"- {wheel} ({size / 1e6:.1f} MB)" for wheel, size in manifest["files"].items()]
    return "\n".join([*lines, ""])


def trim_ray(site: Path) -> dict[str, str]:
    """Remove the parts of an installed Ray the smoke never uses (RAY_UNUSED, RAY_UI's files);
    part → why. Nothing when Ray is not in `site` (the base has it)."""
    if not (site / "ray").is_dir():
        return {}
    removed: dict[str, str] = {}
    for part, why in RAY_UNUSED.items():
        if not (site / part).exists():
            raise FileNotFoundError(
                f"{part} is not in this Ray: update RAY_UNUSED in tools/bundle.py for its layout."
            )
        shutil.rmtree(site / part)
        removed[part] = why
    for path in (site / RAY_UI).rglob("*"):
        if not path.is_dir():
            path.unlink()
    removed[RAY_UI] = "the dashboard's web UI, served only to a browser (its folders kept)"
    return removed


LAUNCHER = """#!/bin/sh
# codefu-train from this folder, beside the host's torch (README.md).
here=$(cd "$(dirname "$0")" && pwd)
export PYTHONPATH="$here/site${{PYTHONPATH:+:$PYTHONPATH}}"
exec "${{PYTHON:-{python}}}" -m codefu_trainer.training.cli --config-dir "$here/conf" "$@"
"""


def _tree_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _pack(
    session: nox.Session,
    args: argparse.Namespace,
    repo: Repository,
    wheels: Path,
    *,
    requirements: list[str],
    manifest: dict,
) -> Path:
    """The wheels installed for the target into codefu-smoke/site (pip --target), Ray trimmed,
    the repository's conf/, the launcher and the README, packed as OUT/NAME.tar.xz beside
    NAME.tar.xz.sha256 (`sha256sum -c`). Returns the archive."""
    stage = Path(session.create_tmp()).resolve() / "bundle" / "stage"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir(parents=True)
    root = stage / "codefu-smoke"
    site = root / "site"
    (stage / "requirements.txt").write_text("\n".join(requirements) + "\n")
    session.run("pip", "install", "--quiet", "--no-deps", "--no-index", "--find-links",
                str(wheels), "--no-compile", "--target", str(site), *_pip_target(args),
                "-r", str(stage / "requirements.txt"))  # fmt: skip
    shutil.rmtree(site / "bin", ignore_errors=True)  # their first line names this machine's Python
    try:
        manifest["ray_removed"] = trim_ray(site)
    except FileNotFoundError as exc:
        session.error(str(exc))
    shutil.copytree(repo.conf, root / "conf")
    launcher = root / "codefu-train"
    launcher.write_text(LAUNCHER.format(python=f"python{args.python}"))
    launcher.chmod(0o755)
    manifest["installed_bytes"] = _tree_bytes(site)
    (root / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    (root / "README.md").write_text(archive_readme(args, manifest))
    out = args.out.resolve()
    archive = out / f"{archive_name(args)}.tar.xz"

    def owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        return info

    with tarfile.open(archive, "w:xz", preset=args.xz_preset) as tar:
        tar.add(root, arcname=root.name, filter=owned_by_root)
    (out / f"{archive.name}.sha256").write_text(f"{_sha256(archive)}  {archive.name}\n")
    return archive


def make(session: nox.Session, args: argparse.Namespace, repo: Repository) -> None:
    """The bundle `args` (from `parse_request`) asks for, or with --dry-run its contents and
    size; the session's environment must hold pip."""
    tmp = Path(session.create_tmp()) / "bundle"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    packed = args.profile in ARCHIVES
    out = tmp / "dry-run" if args.dry_run else args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    wheel_dir = tmp / "wheels" if packed else out  # an archive's wheels are installed, not kept
    wheel_dir.mkdir(parents=True, exist_ok=True)
    for package in repo.packages:
        session.run("uv", "build", "--quiet", "--wheel", "--out-dir", str(tmp / "ours"),
                    f"packages/{package}", external=True)  # fmt: skip
    for wheel in (tmp / "ours").glob("*.whl"):
        shutil.copy(wheel, wheel_dir / wheel.name)
    resolved = _resolve(session, args, repo, tmp)
    pins, needed_by = parse_resolution(resolved.read_text())
    excluded, carried = left_out(pins, needed_by, args.base)
    files = _pylock_files(tmp / "pylock.toml")
    accepted = target_tags(args.python, args.platform)
    built_there = target_tags(args.python, args.platform, built_there=True)
    wanted = {name: version for name, version in pins.items() if name not in excluded}
    wheels: dict[str, dict] = {}
    for name in wanted:
        fitting = [w for w in files[name].get("wheels", []) if wheel_fits(_file_name(w), accepted)]
        if fitting:
            wheels[name] = fitting[0]
    from_source = [name for name in wanted if name not in wheels]
    sizes = {p.name: p.stat().st_size for p in wheel_dir.glob("*.whl")}  # the project's wheels
    if args.dry_run:
        sizes |= {_file_name(w): int(w.get("size", 0)) for w in wheels.values()}
        sizes |= {_file_name(files[n]["sdist"]): int(files[n]["sdist"].get("size", 0))
                  for n in from_source if "sdist" in files[n]}  # fmt: skip
        session.log(
            f"Dry run, nothing downloaded: {len(sizes)} files, {sum(sizes.values()) / 1e6:.1f} MB "
            f"(sizes from the package index); without a wheel for the target: "
            f"{', '.join(from_source) or 'none'}; left out: "
            f"{', '.join(sorted(excluded)) or 'none'}; carried although the base has them: "
            f"{', '.join(sorted(carried)) or 'none'}."
        )
        return
    args.versions = wanted
    _fetch_wheels(session, args, wheels, wheel_dir)
    sources: dict[str, str] = {}
    missing: dict[str, str] = {}
    for name in from_source:
        version = wanted[name]
        given = [
            w for d in args.wheels for w in d.glob(f"{name.replace('-', '_')}-{version}-*.whl")
            if wheel_fits(w.name, built_there)
        ]  # fmt: skip
        if given:
            shutil.copy(given[0], wheel_dir / given[0].name)
            continue
        why = _build_from_source(session, (name, version), accepted, wheel_dir, tmp)
        if not why:
            continue
        if packed:  # pip installs no source archive for another platform
            missing[name] = why
            continue
        _fetch_source(session, files[name], out)
        if name in SOURCE_EXTRAS.values():
            sources[name] = f"no wheel for the target on the package index; {why}"
        else:
            missing[name] = why
    manifest, requirements = _manifest(
        args, repo, wheel_dir, pins, (excluded, carried), sources=sources, missing=missing
    )
    if not packed:
        (out / "requirements.txt").write_text("\n".join(requirements) + "\n")
        (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
        (out / "README.md").write_text(readme_text(args, manifest, sources))
    if missing:
        session.error(
            "The bundle lacks wheels for: "
            + "; ".join(f"{n} {wanted[n]} ({why})" for n, why in missing.items())
            + ". Where the target's glibc is newer than --platform says (`ldd --version` on "
            "the target), give its manylinux_2_N: a wheel may exist for it. Else build each "
            "on a host like the target (`pip wheel --no-deps NAME==VERSION -w DIR`) and run "
            "again with --wheels DIR."
            + ("" if packed else " Their source archives are in the bundle.")
        )
    if packed:
        archive = _pack(
            session, args, repo, wheel_dir, requirements=requirements, manifest=manifest
        )
        session.log(
            f"Archive {archive} ({archive.stat().st_size / 1e6:.1f} MB; its sha256 beside it): "
            f"`tar -xJf {archive.name}`, then `codefu-smoke/codefu-train --smoke` "
            "(codefu-smoke/README.md has the rest)."
        )
        return
    session.log(
        f"Bundle in {out}: install it with "
        f"`pip install --no-index --find-links {out} -r {out}/requirements.txt` "
        f"({out}/README.md has the rest)."
    )


def _manifest(
    args: argparse.Namespace,
    repo: Repository,
    wheel_dir: Path,
    pins: dict[str, str],
    left: tuple[dict[str, str], dict[str, str]],
    *,
    sources: dict[str, str],
    missing: dict[str, str],
) -> tuple[dict, list[str]]:
    """The bundle's manifest (for programs; the README's content) and its requirement lines:
    the packages with their extras and every bundled distribution pinned."""
    excluded, carried = left
    lock = LOCK_OF[args.profile]
    locked = parse_resolution((repo.locks / f"{lock}.txt").read_text())[0]
    skipped = {*excluded, *sources, *missing}
    requirements = []
    for spec in INSTALLS[args.profile]:
        package, _, extras = spec.partition("[")
        named = [e for e in extras.rstrip("]").split(",") if e]
        kept = [e for e in named if SOURCE_EXTRAS.get(e) not in sources]
        suffix = f"[{','.join(kept)}]" if kept else ""
        requirements.append(f"codefu-{package}{suffix}=={repo.version(package)}")
    requirements += [f"{n}=={v}" for n, v in sorted(pins.items()) if n not in skipped]
    files = {p.name: p.stat().st_size for p in sorted(wheel_dir.iterdir())}
    manifest = {
        "arguments": args.argv,
        "profile": args.profile,
        "python": args.python,
        "platform": args.platform,
        "lock": lock,
        "versions": pins,
        "excluded": excluded,
        "base_versions": {n: v for n, v in args.base.items() if n in excluded and v},
        "carried": carried,
        "unused": UNUSED.get(args.profile, {}),
        "not_locked": [
            f"{n} {v} (locks/{lock}.txt: {locked.get(n, 'not pinned')})"
            for n, v in sorted(pins.items())
            if locked.get(n) != v and n not in excluded
        ],
        "from_source": sources,
        "missing": missing,
        "files": files,
        "size_bytes": sum(files.values()),
    }
    return manifest, requirements
