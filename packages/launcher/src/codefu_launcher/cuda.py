"""Does this host's NVIDIA driver run the image's CUDA? Checked before Ray starts.

The training image's CUDA (`CUDA_VERSION`, set by the nvidia/cuda base images) needs a
minimum host driver per CUDA major version (NVIDIA's minor-version compatibility: 11.x
needs 450, 12.x 525, 13.x 580). An older driver works only through CUDA forward
compatibility: the `cuda-compat` libraries in /usr/local/cuda/compat, loaded before the
host's libcuda, on data-center GPUs and the driver branches NVIDIA supports for it. The
launcher puts them on LD_LIBRARY_PATH when the driver is older, checks that CUDA then
initialises (`cuInit`), and otherwise stops the job with a message saying what to change.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

log = logging.getLogger("codefu_launcher")

DRIVER_VERSION_FILE = "/proc/driver/nvidia/version"
COMPAT_DIR = "/usr/local/cuda/compat"
# Minimum driver (major) for each CUDA major version without forward compatibility.
MIN_DRIVER = {11: 450, 12: 525, 13: 580}
LIBCUDA_MISSING = -1  # the probe could not load libcuda.so.1
# cuInit results that mean "forward compatibility does not work here" (CUDA driver API).
CU_ERRORS = {
    LIBCUDA_MISSING: "libcuda.so.1 not loadable",
    3: "CUDA_ERROR_NOT_INITIALIZED",
    35: "CUDA_ERROR_INSUFFICIENT_DRIVER",
    100: "CUDA_ERROR_NO_DEVICE",
    803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
    804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
}
# Prints cuInit's result (exit codes would wrap the 8xx errors modulo 256).
PROBE = (
    "import ctypes\n"
    "try:\n"
    "    lib = ctypes.CDLL('libcuda.so.1')\n"
    "except OSError as exc:\n"
    "    print('load', exc)\n"
    "else:\n"
    "    print('cuInit', lib.cuInit(0))\n"
)


class CudaError(RuntimeError):
    """The host's driver cannot run the image's CUDA; the message says what to change."""


def parse_driver_version(text: str) -> tuple[int, ...] | None:
    """The driver version in /proc/driver/nvidia/version's text (or nvidia-smi's)."""
    match = re.search(r"Kernel Module(?: for [\w-]+)?\s+(\d+(?:\.\d+)+)", text)
    if match is None:
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)+)\s*", text.splitlines()[0] if text else "")
    if match is None:
        return None
    return tuple(int(part) for part in match.group(1).split("."))


def host_driver_version(version_file: str = DRIVER_VERSION_FILE) -> tuple[int, ...] | None:
    """This host's NVIDIA kernel driver version; None when no driver is loaded."""
    try:
        return parse_driver_version(Path(version_file).read_text())
    except OSError:
        pass
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return parse_driver_version(out.stdout) if out.returncode == 0 else None


def image_cuda_version(env: Mapping[str, str]) -> tuple[int, int] | None:
    """(major, minor) of the image's CUDA from CUDA_VERSION; None when unset."""
    match = re.match(r"(\d+)\.(\d+)", env.get("CUDA_VERSION", ""))
    return (int(match.group(1)), int(match.group(2))) if match else None


def probe_cuda(env: Mapping[str, str]) -> tuple[int, str]:
    """cuInit's result in a fresh process with `env` (0: CUDA works), and the output."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    text = (out.stdout + out.stderr).strip()
    match = re.search(r"^cuInit (-?\d+)$", out.stdout, re.MULTILINE)
    return (int(match.group(1)) if match else LIBCUDA_MISSING), text


def cuda_environment(
    env: Mapping[str, str],
    num_gpus: int,
    driver: tuple[int, ...] | None = None,
    compat_dir: str | None = None,
    probe: Callable[[Mapping[str, str]], tuple[int, str]] = probe_cuda,
) -> dict[str, str]:
    """Environment changes this host needs for the image's CUDA (empty when none).

    `driver` defaults to this host's, `compat_dir` to COMPAT_DIR. Raises CudaError when
    the driver is too old and forward compatibility does not make CUDA work.
    """
    compat_dir = compat_dir or COMPAT_DIR
    cuda = image_cuda_version(env)
    if num_gpus == 0 or cuda is None:
        return {}
    driver = driver if driver is not None else host_driver_version()
    if driver is None:
        raise CudaError(
            f"This host should have {num_gpus} GPU(s) but no NVIDIA driver is loaded "
            f"({DRIVER_VERSION_FILE} is missing and nvidia-smi does not answer). Check the "
            "instance type, or set SM_NUM_GPUS=0 / --num-gpus 0 for a CPU-only host."
        )
    need = MIN_DRIVER.get(cuda[0])
    shown = ".".join(map(str, driver))
    if need is None or driver[0] >= need:
        log.info("NVIDIA driver %s runs the image's CUDA %d.%d", shown, *cuda)
        return {}
    compat = Path(compat_dir)
    if not any(compat.glob("libcuda.so*")):
        raise CudaError(
            f"The host's NVIDIA driver {shown} is older than CUDA {cuda[0]}.{cuda[1]} needs "
            f"(>= {need}), and the image has no forward-compatibility libraries in "
            f"{compat_dir}. Rebuild the image with the cuda-compat-{cuda[0]}-{cuda[1]} package "
            f"(docker/train.Dockerfile installs it), or use hosts with driver >= {need}."
        )
    paths = [compat_dir, *[p for p in env.get("LD_LIBRARY_PATH", "").split(":") if p]]
    changed = {"LD_LIBRARY_PATH": ":".join(dict.fromkeys(paths))}
    code, output = probe({**env, **changed})
    if code != 0:
        reason = CU_ERRORS.get(code, f"error {code}")
        raise CudaError(
            f"The host's NVIDIA driver {shown} is older than CUDA {cuda[0]}.{cuda[1]} needs "
            f"(>= {need}), and CUDA forward compatibility ({compat_dir}) does not work on it: "
            f"cuInit failed with {reason}{': ' + output if output else ''}. Forward "
            "compatibility needs a data-center GPU and a driver branch NVIDIA supports for "
            f"CUDA {cuda[0]}.{cuda[1]}; use hosts with driver >= {need}, or an image on an "
            "older CUDA line."
        )
    log.info(
        "NVIDIA driver %s is older than CUDA %d.%d needs (>= %d): using CUDA forward "
        "compatibility from %s",
        shown,
        *cuda,
        need,
        compat_dir,
    )
    return changed


def main() -> int:
    """`python -m codefu_launcher.cuda`: check this host, print the outcome."""
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    gpus = int(os.environ.get("SM_NUM_GPUS") or 1)
    try:
        changed = cuda_environment(os.environ, gpus)
    except CudaError as exc:
        print(f"codefu-launcher: {exc}", file=sys.stderr)
        return 1
    for key, value in changed.items():
        print(f"{key}={value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
