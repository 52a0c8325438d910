"""`codefu-launcher`: plan, run (inside a SageMaker job) and submit (from a workstation)."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from codefu_launcher.plan import (
    DEFAULT_DASHBOARD_PORT,
    DEFAULT_RAY_PORT,
    DEFAULT_RESOURCE_CONFIG,
    ClusterPlan,
    PlanError,
    PlanOptions,
    load_resource_config,
    make_plan,
)


def _add_plan_arguments(p: argparse.ArgumentParser) -> None:
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
    p.add_argument("--port", type=int, default=DEFAULT_RAY_PORT, help="Ray GCS port.")
    p.add_argument("--num-cpus", type=int, default=None, help="Default: SM_NUM_CPUS or all.")
    p.add_argument("--num-gpus", type=int, default=None, help="Default: SM_NUM_GPUS or by type.")
    p.add_argument("--dashboard-host", default="127.0.0.1")
    p.add_argument("--dashboard-port", type=int, default=DEFAULT_DASHBOARD_PORT)
    p.add_argument("--no-dashboard", action="store_true", help="Do not start the Ray dashboard.")
    p.add_argument("--metrics-export-port", type=int, default=None)
    p.add_argument("--temp-dir", default=None, help="Ray's temp dir on this host.")
    p.add_argument("--object-store-memory", type=int, default=None, help="Bytes.")


def _plan(args: argparse.Namespace) -> ClusterPlan:
    options = PlanOptions(
        head_instance_group=args.head_instance_group,
        coordinator_only_head=args.coordinator_only_head,
        port=args.port,
        num_cpus=args.num_cpus,
        num_gpus=args.num_gpus,
        dashboard_host=args.dashboard_host,
        dashboard_port=args.dashboard_port,
        include_dashboard=not args.no_dashboard,
        metrics_export_port=args.metrics_export_port,
        temp_dir=args.temp_dir,
        object_store_memory=args.object_store_memory,
    )
    rc = load_resource_config(args.resource_config)
    return make_plan(rc, os.environ, options, cpu_count=os.cpu_count() or 1)


def _cmd_plan(args: argparse.Namespace) -> int:
    from codefu_launcher.run import try_resolve

    plan = _plan(args)
    node_ip = try_resolve(plan.host)
    head_ip = try_resolve(plan.head_host)
    print(json.dumps(plan.to_dict(node_ip, head_ip), indent=2))
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from codefu_launcher.run import Launcher, LaunchError, RunSettings, Terminated, write_failure

    entrypoint = list(args.entrypoint)
    if entrypoint and entrypoint[0] == "--":
        entrypoint = entrypoint[1:]
    settings = RunSettings(
        wait_timeout=args.wait_timeout,
        join_timeout=args.join_timeout,
        head_gone_grace=args.head_gone_grace,
        failure_file=args.failure_file,
        extra_env=tuple(args.pass_env),
    )
    try:
        plan = _plan(args)
        if plan.is_head and not entrypoint:
            raise LaunchError("No entrypoint: use `codefu-launcher run [options] -- COMMAND ...`.")
        launcher = Launcher(plan, entrypoint, os.environ, settings)
    except (PlanError, LaunchError) as exc:
        write_failure(settings.failure_file, f"codefu-launcher: {exc}")
        return 2
    logging.getLogger("codefu_launcher").info(
        "Plan: %s", json.dumps(plan.to_dict(), separators=(",", ":"))
    )
    try:
        return launcher.run()
    except Terminated as t:  # a signal outside the launcher's own handling window
        return 128 + t.signum


def _cmd_submit(args: argparse.Namespace) -> int:
    from codefu_launcher.submit import SubmitError, spec_from_dict, submit

    try:
        data = json.loads(Path(args.spec).read_text())
        spec = spec_from_dict(data)
        if args.dry_run:
            spec.dry_run = True
        submit(spec)
    except (OSError, json.JSONDecodeError, SubmitError) as exc:
        print(f"codefu-launcher submit: {exc}", file=sys.stderr)
        return 2
    return 0


def run_option_errors(args: list[str]) -> str | None:
    """Why `codefu-launcher run ARGS -- ENTRYPOINT` would be refused; None if it would not.

    Submission checks a job's launcher options with this, before anything is sent.
    """
    if "--" in args or "-h" in args or "--help" in args:
        return "'--', '-h' and '--help' are not options for a job"
    parser = build_parser()
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            parsed = parser.parse_args(["run", *args, "--", "entrypoint"])
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codefu-launcher",
        description="Ray clusters inside SageMaker training jobs, and job submission.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p_plan = sub.add_parser("plan", help="Print this host's cluster plan as JSON.")
    _add_plan_arguments(p_plan)
    p_plan.set_defaults(func=_cmd_plan)

    p_run = sub.add_parser(
        "run",
        help="Form the Ray cluster and run ENTRYPOINT on the head.",
        usage="codefu-launcher run [options] -- ENTRYPOINT ...",
    )
    _add_plan_arguments(p_run)
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
            type=float,
            default=float(os.environ.get(env_name, default)),
            help=f"{text} before giving up (default {default}, or ${env_name}).",
        )
    p_run.add_argument(
        "--join-timeout",
        type=float,
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
    p_run.add_argument("entrypoint", nargs=argparse.REMAINDER)
    p_run.set_defaults(func=_cmd_run)

    p_submit = sub.add_parser(
        "submit", help="Submit a SageMaker training job from a JSON file of JobSpec fields."
    )
    p_submit.add_argument("--spec", required=True, help="JSON file with JobSpec fields.")
    p_submit.add_argument("--dry-run", action="store_true", help="Print the request only.")
    p_submit.set_defaults(func=_cmd_submit)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s codefu-launcher %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except PlanError as exc:
        print(f"codefu-launcher: {exc}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
