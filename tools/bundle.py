"""The offline install bundle of `nox -s bundle` (docs/bundle.md): every wheel a profile's
install needs for a target Python and platform, for `pip install --no-index --find-links`.

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
}
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


def excluded_by_base(
    pins: dict[str, str], needed_by: dict[str, set[str]], base: dict[str, str | None]
) -> dict[str, str]:
    """What the bundle leaves out → why: what the base has, and what only those need.

    A package every one of whose dependents is left out is needed only by the base's own
    packages, which a working base environment already holds (torch's CUDA libraries).
    """
    out = {name: "in the base environment" for name in pins if name in base}
    changed = True
    while changed:
        changed = False
        for name, users in needed_by.items():
            if name in out or not users or not users <= out.keys():
                continue
            out[name] = "needed only by " + ", ".join(sorted(users))
            changed = True
    return out


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
        choices=repo.profiles,
        default="cuda",
        help="cuda: what the training image installs (default); cpu: its CPU twin",
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
        help="a file of such names, one a line, or the base's `pip freeze`",
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
        "--dry-run",
        action="store_true",
        help="resolve and print the contents and size only; download nothing",
    )
    return parser


def parse_request(session: nox.Session, repo: Repository) -> argparse.Namespace:
    """The session's arguments, checked: the base environment in `.base`, the command line in
    `.argv`; a wrong one ends the session saying what to give instead."""
    parser = argument_parser(repo)
    args = parser.parse_args(session.posargs)
    args.argv = list(session.posargs)
    if not re.fullmatch(r"3\.\d+", args.python):
        session.error(f"--python {args.python}: give a CPython version X.Y (e.g. 3.12).")
    if not PLATFORM_TAG.fullmatch(args.platform):
        session.error(
            f"--platform {args.platform}: give a manylinux tag as pip names it, e.g. "
            "manylinux_2_28_x86_64 (the glibc version of the target's oldest host)."
        )
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


def _resolve(session: nox.Session, args: argparse.Namespace, repo: Repository, tmp: Path) -> Path:
    """`uv pip compile` of the profile's install for the target, preferring the lock's
    versions (uv keeps a pin of the output file where it still fits the target)."""
    request = tmp / "bundle.in"
    # The profile's own plain requirements too (locks/cuda.in: flash-attn's build tools).
    plain = [
        line.strip() for line in (repo.locks / f"{args.profile}.in").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith(("#", "-"))
    ]  # fmt: skip
    local = [f"./packages/{spec}" for spec in INSTALLS[args.profile]]
    request.write_text("".join(f"{line}\n" for line in (*local, *plain)))
    resolved = tmp / "resolved.txt"
    shutil.copyfile(repo.locks / f"{args.profile}.txt", resolved)
    major, glibc, arch = PLATFORM_TAG.fullmatch(args.platform).groups()  # type: ignore[union-attr]
    env = None
    if args.profile == "cuda":  # a CPU wheel index would hand the CUDA profile `+cpu` torch
        env = {"UV_EXTRA_INDEX_URL": None, "UV_FIND_LINKS": None}
    target = [
        "--python-version",
        args.python,
        "--python-platform",
        f"{arch}-manylinux_{major}_{glibc}",
    ]
    ours = [arg for p in repo.packages for arg in ("--no-emit-package", f"codefu-{p}")]
    common = ["--quiet", "--config-file", "locks/uv.toml", *target, *repo.find_links(args.profile)]
    session.run("uv", "pip", "compile", str(request), *common, *ours, "-o", str(resolved),
                external=True, env=env)  # fmt: skip
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
    lines += ["", "## Left out: the base environment must hold these", ""]
    for name, why in sorted(manifest["excluded"].items()):
        version = manifest["base_versions"].get(name) or manifest["resolved_with"][name]
        lines.append(f"- {name} {version}: {why}")
    if manifest["base_mismatches"]:
        lines += ["", "The bundle was resolved with other versions than the base has:", ""]
        lines += [f"- {line}" for line in manifest["base_mismatches"]]
    if manifest["not_locked"]:
        lines += ["", f"## Versions the target needs other than locks/{args.profile}.txt", ""]
        lines += [f"- {line}" for line in manifest["not_locked"]]
    lines += ["", "## Files", ""]
    lines += [f"- {name} ({size / 1e6:.1f} MB)" for name, size in manifest["files"].items()]
    return "\n".join([*lines, ""])


def make(session: nox.Session, args: argparse.Namespace, repo: Repository) -> None:
    """The bundle `args` (from `parse_request`) asks for, or with --dry-run its contents and
    size; the session's environment must hold pip."""
    tmp = Path(session.create_tmp()) / "bundle"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    out = tmp / "dry-run" if args.dry_run else args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for package in repo.packages:
        session.run("uv", "build", "--quiet", "--wheel", "--out-dir", str(tmp / "ours"),
                    f"packages/{package}", external=True)  # fmt: skip
    for wheel in (tmp / "ours").glob("*.whl"):
        shutil.copy(wheel, out / wheel.name)
    resolved = _resolve(session, args, repo, tmp)
    pins, needed_by = parse_resolution(resolved.read_text())
    excluded = excluded_by_base(pins, needed_by, args.base)
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
    sizes = {p.name: p.stat().st_size for p in out.glob("*.whl")}  # the project's wheels
    if args.dry_run:
        sizes |= {_file_name(w): int(w.get("size", 0)) for w in wheels.values()}
        sizes |= {_file_name(files[n]["sdist"]): int(files[n]["sdist"].get("size", 0))
                  for n in from_source if "sdist" in files[n]}  # fmt: skip
        session.log(
            f"Dry run, nothing downloaded: {len(sizes)} files, {sum(sizes.values()) / 1e6:.1f} MB "
            f"(sizes from the package index); without a wheel for the target: "
            f"{', '.join(from_source) or 'none'}; left out: "
            f"{', '.join(sorted(excluded)) or 'none'}."
        )
        return
    args.versions = wanted
    _fetch_wheels(session, args, wheels, out)
    sources: dict[str, str] = {}
    missing: dict[str, str] = {}
    for name in from_source:
        version = wanted[name]
        given = [
            w for d in args.wheels for w in d.glob(f"{name.replace('-', '_')}-{version}-*.whl")
            if wheel_fits(w.name, built_there)
        ]  # fmt: skip
        if given:
            shutil.copy(given[0], out / given[0].name)
            continue
        why = _build_from_source(session, (name, version), accepted, out, tmp)
        if not why:
            continue
        _fetch_source(session, files[name], out)
        if name in SOURCE_EXTRAS.values():
            sources[name] = f"no wheel for the target on the package index; {why}"
        else:
            missing[name] = why
    _write_manifest(args, repo, out, pins, excluded, sources=sources, missing=missing)
    if missing:
        session.error(
            "The bundle lacks wheels for: "
            + "; ".join(f"{n} {wanted[n]} ({why})" for n, why in missing.items())
            + ". Where the target's glibc is newer than --platform says (`ldd --version` on "
            "the target), give its manylinux_2_N: a wheel may exist for it. Else build each "
            "on a host like the target (`pip wheel --no-deps NAME==VERSION -w DIR`) and run "
            "again with --wheels DIR. Their source archives are in the bundle."
        )
    session.log(
        f"Bundle in {out}: install it with "
        f"`pip install --no-index --find-links {out} -r {out}/requirements.txt` "
        f"({out}/README.md has the rest)."
    )


def _write_manifest(
    args: argparse.Namespace,
    repo: Repository,
    out: Path,
    pins: dict[str, str],
    excluded: dict[str, str],
    *,
    sources: dict[str, str],
    missing: dict[str, str],
) -> None:
    """requirements.txt, manifest.json and README.md of the bundle in `out`."""
    locked = parse_resolution((repo.locks / f"{args.profile}.txt").read_text())[0]
    skipped = {*excluded, *sources, *missing}
    requirements = []
    for spec in INSTALLS[args.profile]:
        package, _, extras = spec.partition("[")
        named = [e for e in extras.rstrip("]").split(",") if e]
        kept = [e for e in named if SOURCE_EXTRAS.get(e) not in sources]
        suffix = f"[{','.join(kept)}]" if kept else ""
        requirements.append(f"codefu-{package}{suffix}=={repo.version(package)}")
    requirements += [f"{n}=={v}" for n, v in sorted(pins.items()) if n not in skipped]
    files = {p.name: p.stat().st_size for p in sorted(out.iterdir())}
    (out / "requirements.txt").write_text("\n".join(requirements) + "\n")
    strip = re.compile(r"\+.*$")
    base_versions = {n: v for n, v in args.base.items() if n in excluded and v}
    manifest = {
        "arguments": args.argv,
        "profile": args.profile,
        "python": args.python,
        "platform": args.platform,
        "versions": pins,
        "excluded": excluded,
        "resolved_with": {n: pins[n] for n in excluded},
        "base_versions": base_versions,
        "base_mismatches": [
            f"{n}: the base has {v}, the bundle was resolved with {pins[n]}"
            for n, v in sorted(base_versions.items())
            if strip.sub("", v) != strip.sub("", pins[n])
        ],
        "not_locked": [
            f"{n} {v} (locks/{args.profile}.txt: {locked.get(n, 'not pinned')})"
            for n, v in sorted(pins.items())
            if locked.get(n) != v
        ],
        "from_source": sources,
        "missing": missing,
        "files": files,
    }
    manifest["size_bytes"] = sum(manifest["files"].values())
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    (out / "README.md").write_text(readme_text(args, manifest, sources))
