"""A Ray cluster on this machine for the CPU runs and evaluation: where its temp dir goes,
and starting one of our own unless one is connected."""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from pathlib import Path


def ray_temp_dir_outside_venv(environ: MutableMapping[str, str] | None = None) -> str | None:
    """Ray's workers refuse a temp dir inside the active virtualenv, and nox points TMPDIR at
    .nox/<session>/tmp: then use /tmp (via RAY_TMPDIR). Returns the value set, if any."""
    env: MutableMapping[str, str] = os.environ if environ is None else environ
    venv, tmp = env.get("VIRTUAL_ENV"), env.get("TMPDIR")
    if env.get("RAY_TMPDIR") or not venv or not tmp:
        return None
    if Path(tmp).resolve().is_relative_to(Path(venv).resolve()):
        env["RAY_TMPDIR"] = "/tmp"
        return "/tmp"
    return None


def start_ray() -> bool:
    """Start a Ray cluster of our own unless one is connected; True when this started it.

    RAY_ADDRESS names a cluster to join; a bare ray.init() would join any Ray cluster
    already running on this machine.
    """
    import ray

    if ray.is_initialized():
        return False
    ray_temp_dir_outside_venv()
    address = os.environ.get("RAY_ADDRESS") or "local"
    ray.init(address=address, include_dashboard=False, configure_logging=False)
    return True
