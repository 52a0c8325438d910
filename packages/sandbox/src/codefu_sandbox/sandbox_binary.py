"""The `codefu-sandbox-exec` binary: built from sandbox_exec.c once per source, compiler
and machine into the cache directory."""

from __future__ import annotations

import fcntl
import hashlib
import platform
import shutil
import subprocess
import tempfile
from importlib import resources
from pathlib import Path

from codefu_sandbox.isolation import SandboxError

SANDBOX_EXEC_NAME = "codefu-sandbox-exec"


def _c_compiler() -> str:
    for name in ("gcc", "cc", "g++"):
        found = shutil.which(name)
        if found:
            return found
    raise SandboxError(
        "No C compiler found to build sandbox-exec: install g++ "
        "(Debian/Ubuntu: apt-get install g++)."
    )


def build_sandbox_exec(cache_dir: Path) -> Path:
    """The sandbox-exec binary for this source and compiler, built once (atomic, file-locked)."""
    source = resources.files("codefu_sandbox").joinpath("sandbox_exec.c").read_bytes()
    cc = _c_compiler()
    key = hashlib.sha256(source + cc.encode() + platform.machine().encode()).hexdigest()[:16]
    directory = cache_dir / "sandbox_exec"
    target = directory / f"{SANDBOX_EXEC_NAME}-{key}"
    if target.exists():
        return target
    directory.mkdir(parents=True, exist_ok=True)
    with (directory / f"{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists():
            return target
        with tempfile.TemporaryDirectory(dir=directory) as tmp:
            src = Path(tmp) / "sandbox_exec.c"
            src.write_bytes(source)
            out = Path(tmp) / SANDBOX_EXEC_NAME
            errors = ""
            for static in (["-static"], []):  # static starts faster; not every host has libc.a
                done = subprocess.run(
                    [cc, "-O2", *static, "-o", str(out), str(src)],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if done.returncode == 0:
                    break
                errors = done.stderr
            else:
                raise SandboxError(f"Building sandbox-exec with {cc} failed:\n{errors[-2000:]}")
            out.chmod(0o755)
            out.replace(target)
    return target
