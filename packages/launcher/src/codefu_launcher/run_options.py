"""The options of `codefu-launcher plan` and `run`, and the check submission makes of a
job's launcher options (`run_option_errors`) before anything is sent."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
from collections.abc import Callable

from codefu_launcher.plan import DEFAULT_DASHBOARD_PORT, DEFAULT_RAY_PORT, DEFAULT_RESOURCE_CONFIG


def _port(text: str) -> int:
    """A TCP port number, 1-65535 (argparse names the option on a bad one)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port: use 1-65535")
    return value


def _positive(kind: type[int] | type[float]) -> Callable[[str], float]:
    """An argparse type: a number of `kind` above 0."""
    what = "whole number" if kind is int else "number"

    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            value = 0
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {what} > 0")
        return value

    return parse


def add_plan_arguments(p: argparse.ArgumentParser) -> None:
    """The options that decide a host's cluster plan."""
    p.add_argument(
        "--resource-config",
        default=os.environ.get("CODEFU_RESOURCE_CONFIG", DEFAULT_RESOURCE_CONFIG),
        help=f"SageMaker resource config (default: {DEFAULT_RESOURCE_CONFIG}).",
    )
    p.add_argument(
        "--head-instance-group",
        default=os.environ.get("CODEFU_HEAD_INSTANCE_GROUP") or None,
        help="Heterogeneous jobs: the instance group whose lowest host is the head.",
    )
    p.add_argument(
        "--coordinator-only-head",
        action="store_true",
        default=os.environ.get("CODEFU_COORDINATOR_ONLY_HEAD", "") in {"1", "true", "True"},
        help="The head offers no CPUs or GPUs for work (it only coordinates).",
    )
    p.add_argument("--port", type=_port, default=DEFAULT_RAY_PORT, help="Ray GCS port.")
    p.add_argument("--num-cpus", type=int, default=None, help="Default: SM_NUM_CPUS or all.")
    p.add_argument("--num-gpus", type=int, default=None, help="Default: SM_NUM_GPUS or by type.")
    p.add_argument("--dashboard-host", default="127.0.0.1")
    p.add_argument("--dashboard-port", type=_port, default=DEFAULT_DASHBOARD_PORT)
    p.add_argument("--no-dashboard", action="store_true", help="Do not start the Ray dashboard.")
    p.add_argument("--metrics-export-port", type=_port, default=None)
    p.add_argument("--temp-dir", default=None, help="Ray's temp dir on this host.")
    p.add_argument("--object-store-memory", type=_positive(int), default=None, help="Bytes.")


def add_run_arguments(p_run: argparse.ArgumentParser) -> None:
    """The options of `codefu-launcher run` (the plan's, then the run's own)."""
    add_plan_arguments(p_run)
    timeouts = (
        ("--wait-timeout", "CODEFU_WAIT_TIMEOUT", "600", "Seconds the head waits for all nodes"),
        (
            "--head-gone-grace",
            "CODEFU_HEAD_GONE_GRACE",
            "60",
            "Seconds workers wait out a lost head",
        ),
    )
    for flag, env_name, default, text in timeouts:
        p_run.add_argument(
            flag,
            type=_positive(float),
            default=float(os.environ.get(env_name, default)),
            help=f"{text} before giving up (default {default}, or ${env_name}).",
        )
    p_run.add_argument(
        "--join-timeout",
        type=_positive(float),
        default=None,
        help="Seconds a worker waits for the head (default: wait timeout + 120).",
    )
    p_run.add_argument(
        "--failure-file",
        default=os.environ.get("CODEFU_FAILURE_FILE", "/opt/ml/output/failure"),
    )
    p_run.add_argument(
        "--pass-env",
        action="append",
        default=[],
        metavar="NAME",
        help="Also hand this variable to the entrypoint and Ray (repeatable).",
    )


def run_option_errors(args: list[str]) -> str | None:
    """Why `codefu-launcher run ARGS -- ENTRYPOINT` would be refused; None if it would not.

    Submission checks a job's launcher options with this, before anything is sent.
    """
    if "--" in args or "-h" in args or "--help" in args:
        return "'--', '-h' and '--help' are not options for a job"
    parser = argparse.ArgumentParser(prog="codefu-launcher run", add_help=False)
    add_run_arguments(parser)
    parser.add_argument("entrypoint", nargs=argparse.REMAINDER)
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            parsed = parser.parse_args([*args, "--", "entrypoint"])
    except SystemExit:
        lines = [line for line in err.getvalue().splitlines() if line.strip()]
        return lines[-1] if lines else "invalid options"
    if list(parsed.entrypoint) != ["--", "entrypoint"]:
        extra = parsed.entrypoint[: parsed.entrypoint.index("--")]
        return f"unexpected arguments {extra} (options only; the entrypoint follows `--`)"
    return port_conflict(parsed)


# Ports `ray start` takes by default besides --port/--dashboard-port: the client server,
# the dashboard agent, and the range its worker processes listen on.
RAY_FIXED_PORTS = {10001: "Ray client server", 52365: "Ray dashboard agent"}
RAY_WORKER_PORTS = range(10002, 20000)


def port_conflict(args: argparse.Namespace) -> str | None:
    """A launcher port that `ray start` would refuse, named; None when there is none."""
    ports = {"--port": args.port, "--dashboard-port": args.dashboard_port}
    if args.metrics_export_port is not None:
        ports["--metrics-export-port"] = args.metrics_export_port
    seen: dict[int, str] = {}
    for flag, port in ports.items():
        if port in seen:
            return f"{flag} {port} is also {seen[port]}"
        if port in RAY_FIXED_PORTS:
            return f"{flag} {port} is the {RAY_FIXED_PORTS[port]}'s port"
        if port in RAY_WORKER_PORTS:
            return (
                f"{flag} {port} is in Ray's worker port range "
                f"{RAY_WORKER_PORTS.start}-{RAY_WORKER_PORTS.stop - 1}; pick another port"
            )
        seen[port] = flag
    return None
