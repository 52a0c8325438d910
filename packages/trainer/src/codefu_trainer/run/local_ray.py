"""A Ray cluster on this machine for the CPU runs and evaluation: where its temp dir goes,
its workers' priority, and starting one of our own unless one is connected."""

from __future__ import annotations

import os
from collections.abc import Callable, MutableMapping
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


# Ray starts its worker processes at this niceness (Ray's `worker_niceness`, default 15).
NICENESS_ENV = "RAY_worker_niceness"


def workers_at_normal_priority(environ: MutableMapping[str, str] | None = None) -> bool:
    """Run the workers of a Ray cluster this process starts at niceness 0, unless
    RAY_worker_niceness is set. Ray's 15 keeps a raylet responsive on a node full of busy
    workers (the launcher's clusters keep it), but on a machine shared with other work it
    starves the judge: beside four CPU-bound processes on 2 cores, one small program's
    judging passed its 89 s deadline, and took 11 s at niceness 0 (docs/reward.md).
    Returns whether it set the variable."""
    env: MutableMapping[str, str] = os.environ if environ is None else environ
    if NICENESS_ENV in env:
        return False
    env[NICENESS_ENV] = "0"
    return True


# Ray gives a new node's raylet a fixed 30 s to register with its GCS; on a busy machine it can
# take longer (a rehearsal's cluster failed so beside three pytest workers and their Ray
# clusters on 2 cores), and a second start then succeeds. Starts tried in all:
LOCAL_STARTS = 3
RAYLET_TIMEOUT = "timed out during startup"  # Ray's message for it


def start_ray(say: Callable[[str], object] = print) -> bool:
    """Start a Ray cluster of our own unless one is connected; True when this started it.

    RAY_ADDRESS names a cluster to join; a bare ray.init() would join any Ray cluster
    already running on this machine. A local cluster whose node does not register in Ray's
    30 s is stopped and started again, up to LOCAL_STARTS starts, each retry said in a line.
    """
    import ray

    if ray.is_initialized():
        return False
    ray_temp_dir_outside_venv()
    address = os.environ.get("RAY_ADDRESS") or "local"
    if address == "local":
        workers_at_normal_priority()
    for start in range(1, LOCAL_STARTS):
        try:
            ray.init(address=address, include_dashboard=False, configure_logging=False)
            return True
        except Exception as e:
            if address != "local" or RAYLET_TIMEOUT not in str(e):
                raise
            ray.shutdown()  # stops the processes this try started
            say(
                "Ray: this machine's node did not register within Ray's 30 s (a busy "
                f"machine?); starting the cluster again (start {start + 1} of {LOCAL_STARTS})"
            )
    ray.init(address=address, include_dashboard=False, configure_logging=False)
    return True
