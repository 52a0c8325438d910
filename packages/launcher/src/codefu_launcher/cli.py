"""`codefu-launcher`: plan, run (inside a SageMaker job) and submit (from a workstation)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from codefu_launcher.plan import (
    ClusterPlan,
    PlanError,
    PlanOptions,
    load_resource_config,
    make_plan,
)
from codefu_launcher.run_options import add_plan_arguments, add_run_arguments


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
    from codefu_launcher.host import try_resolve

    plan = _plan(args)
    node_ip = try_resolve(plan.host)
    head_ip = try_resolve(plan.head_host)
    print(json.dumps(plan.to_dict(node_ip, head_ip), indent=2))
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from codefu_launcher.host import LaunchError
    from codefu_launcher.run import Launcher, RunSettings, Terminated, write_failure

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
        try:
            data = json.loads(Path(args.spec).read_text(encoding="utf-8"))
        except OSError as exc:
            raise SubmitError(f"cannot read --spec {args.spec}: {exc.strerror or exc}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise SubmitError(f"--spec {args.spec} is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise SubmitError(
                f"--spec {args.spec} must hold a JSON object of JobSpec fields, "
                f"not a {type(data).__name__}"
            )
        spec = spec_from_dict(data)
        if args.dry_run:
            spec.dry_run = True
        submit(spec)
    except SubmitError as exc:
        print(f"codefu-launcher submit: {exc}", file=sys.stderr)
        return 2
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codefu-launcher",
        description="Ray clusters inside SageMaker training jobs, and job submission.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p_plan = sub.add_parser("plan", help="Print this host's cluster plan as JSON.")
    add_plan_arguments(p_plan)
    p_plan.set_defaults(func=_cmd_plan)

    p_run = sub.add_parser(
        "run",
        help="Form the Ray cluster and run ENTRYPOINT on the head.",
        usage="codefu-launcher run [options] -- ENTRYPOINT ...",
    )
    add_run_arguments(p_run)
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
