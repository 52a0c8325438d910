"""The cluster plan: pure decisions about how this host joins the job's Ray cluster.

Everything here is computed from SageMaker's ``resourceconfig.json`` and the
environment, without side effects, so it can be tested exhaustively. `run.py` is the
shell that carries the plan out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from codefu_launcher.instances import gpus_for_instance_type

DEFAULT_RESOURCE_CONFIG = "/opt/ml/input/config/resourceconfig.json"
HOMOGENEOUS_GROUP = "homogeneousCluster"
DEFAULT_RAY_PORT = 6379
DEFAULT_DASHBOARD_PORT = 8265
# The Ray resource of CPU-only hosts (one unit per CPU): the one name of judge hosts. The
# trainer's reward schedules its judge workers on it (codefu_trainer.reward.config reads it).
JUDGE_RESOURCE = "judge"
GROUP_RESOURCE_PREFIX = "instance_group:"

# Environment variables handed to `ray start` unchanged (dashboard metrics integration).
METRICS_ENV_PREFIXES = ("RAY_GRAFANA_", "RAY_PROMETHEUS_")


class PlanError(ValueError):
    """The resource configuration or the options cannot produce a cluster plan."""


def host_sort_key(host: str) -> tuple[str, int, str]:
    """Order hosts by name prefix, then by number: algo-2 before algo-10."""
    match = re.fullmatch(r"(.*?)(\d+)", host)
    if match is None:
        return (host, -1, host)
    return (match.group(1), int(match.group(2)), host)


def sort_hosts(hosts: Sequence[str]) -> list[str]:
    """Hosts without duplicates, in numeric order."""
    return sorted(set(hosts), key=host_sort_key)


@dataclass(frozen=True)
class InstanceGroup:
    """One instance group of the job (a homogeneous job has one, "homogeneousCluster")."""

    name: str
    instance_type: str
    hosts: tuple[str, ...]


@dataclass(frozen=True)
class ResourceConfig:
    """SageMaker's /opt/ml/input/config/resourceconfig.json, parsed."""

    current_host: str
    current_instance_type: str
    current_group_name: str
    hosts: tuple[str, ...]
    instance_groups: tuple[InstanceGroup, ...]
    network_interface_name: str | None = None

    @property
    def heterogeneous(self) -> bool:
        return len(self.instance_groups) > 1

    def group(self, name: str) -> InstanceGroup | None:
        return next((g for g in self.instance_groups if g.name == name), None)

    def group_of(self, host: str) -> InstanceGroup:
        for group in self.instance_groups:
            if host in group.hosts:
                return group
        raise PlanError(
            f"Host {host!r} is in no instance group of the resource config "
            f"(groups: {[g.name for g in self.instance_groups]})."
        )


def parse_resource_config(data: Mapping[str, Any]) -> ResourceConfig:
    """Validate and normalise the JSON content of resourceconfig.json."""
    try:
        current_host = str(data["current_host"])
        hosts = sort_hosts([str(h) for h in data["hosts"]])
    except (KeyError, TypeError) as exc:
        raise PlanError(
            f"resourceconfig.json lacks {exc}; it needs at least 'current_host' and 'hosts'."
        ) from exc
    if not hosts:
        raise PlanError("resourceconfig.json lists no hosts.")
    current_type = str(data.get("current_instance_type", "unknown"))
    raw_groups = data.get("instance_groups") or []
    groups: list[InstanceGroup] = []
    for raw in raw_groups:
        try:
            groups.append(
                InstanceGroup(
                    name=str(raw["instance_group_name"]),
                    instance_type=str(raw["instance_type"]),
                    hosts=tuple(sort_hosts([str(h) for h in raw["hosts"]])),
                )
            )
        except (KeyError, TypeError) as exc:
            raise PlanError(f"An instance group in resourceconfig.json lacks {exc}.") from exc
    if not groups:
        groups = [InstanceGroup(HOMOGENEOUS_GROUP, current_type, tuple(hosts))]
    grouped = {h for g in groups for h in g.hosts}
    if grouped != set(hosts):
        raise PlanError(
            "resourceconfig.json is inconsistent: hosts "
            f"{sorted(set(hosts) ^ grouped, key=host_sort_key)} are not in exactly both "
            "'hosts' and 'instance_groups'."
        )
    if current_host not in hosts:
        raise PlanError(f"current_host {current_host!r} is not among hosts {hosts}.")
    current_group = str(data.get("current_group_name") or "")
    if not current_group:
        current_group = next(g.name for g in groups if current_host in g.hosts)
    return ResourceConfig(
        current_host=current_host,
        current_instance_type=current_type,
        current_group_name=current_group,
        hosts=tuple(hosts),
        instance_groups=tuple(groups),
        network_interface_name=data.get("network_interface_name"),
    )


def load_resource_config(path: str | Path = DEFAULT_RESOURCE_CONFIG) -> ResourceConfig:
    """Read resourceconfig.json; a clear error when it is missing or not JSON."""
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except FileNotFoundError as exc:
        raise PlanError(
            f"No resource config at {p}. Inside a SageMaker job it is "
            f"{DEFAULT_RESOURCE_CONFIG}; elsewhere pass --resource-config FILE."
        ) from exc
    except json.JSONDecodeError as exc:
        raise PlanError(f"{p} is not valid JSON: {exc}.") from exc
    if not isinstance(data, dict):
        raise PlanError(f"{p} must hold a JSON object.")
    return parse_resource_config(data)


@dataclass(frozen=True)
class PlanOptions:
    """Choices that do not come from SageMaker (CLI flags / config)."""

    head_instance_group: str | None = None
    coordinator_only_head: bool = False
    port: int = DEFAULT_RAY_PORT
    num_cpus: int | None = None  # default: SM_NUM_CPUS, else the caller's CPU count
    num_gpus: int | None = None  # default: SM_NUM_GPUS, else by instance type
    dashboard_host: str = "127.0.0.1"
    dashboard_port: int = DEFAULT_DASHBOARD_PORT
    include_dashboard: bool = True
    metrics_export_port: int | None = None
    temp_dir: str | None = None
    object_store_memory: int | None = None


@dataclass(frozen=True)
class ClusterPlan:
    """What this host does. IPs are filled in by the shell once resolved."""

    host: str
    role: Literal["head", "worker"]
    head_host: str
    head_instance_group: str
    instance_group: str
    instance_type: str
    hosts: tuple[str, ...]
    expected_nodes: int
    port: int
    num_cpus: int
    num_gpus: int
    resources: dict[str, float]
    coordinator_only_head: bool
    options: PlanOptions
    ray_env: dict[str, str] = field(default_factory=dict)

    @property
    def is_head(self) -> bool:
        return self.role == "head"

    def ray_start_args(self, node_ip: str | None, head_ip: str | None) -> list[str]:
        """Arguments after `ray start` (with `--block`: the launcher owns the process).

        Unresolved addresses show as `<node-ip>` / `<head-ip>` (for `plan` output only).
        """
        opts = self.options
        args: list[str] = []
        if self.is_head:
            args += ["--head", f"--port={self.port}"]
            if opts.include_dashboard:
                args += [
                    "--include-dashboard=true",
                    f"--dashboard-host={opts.dashboard_host}",
                    f"--dashboard-port={opts.dashboard_port}",
                ]
            else:
                args.append("--include-dashboard=false")
        else:
            args.append(f"--address={head_ip or '<head-ip>'}:{self.port}")
        args += [
            f"--node-ip-address={node_ip or '<node-ip>'}",
            f"--num-cpus={self.num_cpus}",
            f"--num-gpus={self.num_gpus}",
            "--resources=" + json.dumps(self.resources, sort_keys=True, separators=(",", ":")),
            "--disable-usage-stats",
        ]
        if opts.metrics_export_port is not None:
            args.append(f"--metrics-export-port={opts.metrics_export_port}")
        if opts.temp_dir:
            args.append(f"--temp-dir={opts.temp_dir}")
        if opts.object_store_memory is not None:
            args.append(f"--object-store-memory={opts.object_store_memory}")
        args.append("--block")
        return args

    def to_dict(self, node_ip: str | None = None, head_ip: str | None = None) -> dict[str, Any]:
        """JSON-able description, as `codefu-launcher plan` prints it."""
        return {
            "host": self.host,
            "role": self.role,
            "head_host": self.head_host,
            "head_instance_group": self.head_instance_group,
            "instance_group": self.instance_group,
            "instance_type": self.instance_type,
            "hosts": list(self.hosts),
            "expected_nodes": self.expected_nodes,
            "port": self.port,
            "num_cpus": self.num_cpus,
            "num_gpus": self.num_gpus,
            "resources": self.resources,
            "coordinator_only_head": self.coordinator_only_head,
            "node_ip": node_ip,
            "head_ip": head_ip,
            "ray_start": ["ray", "start", *self.ray_start_args(node_ip, head_ip)],
            "ray_env": self.ray_env,
            "options": asdict(self.options),
        }


def select_head(rc: ResourceConfig, head_instance_group: str | None) -> tuple[str, str]:
    """(head host, its group): the numerically lowest host of the head group.

    Without a configured group: the lowest host of the whole cluster.
    """
    if head_instance_group is None:
        head = rc.hosts[0]
        return head, rc.group_of(head).name
    group = rc.group(head_instance_group)
    if group is None:
        names = ", ".join(g.name for g in rc.instance_groups)
        raise PlanError(
            f"Head instance group {head_instance_group!r} is not in this job; its instance "
            f"groups are: {names}. Pass one of them as --head-instance-group (or "
            "head_instance_group in the job spec)."
        )
    if not group.hosts:
        raise PlanError(f"Head instance group {head_instance_group!r} has no hosts.")
    return group.hosts[0], group.name


def _int_env(env: Mapping[str, str], name: str) -> int | None:
    value = env.get(name)
    if value is None or value.strip() == "":
        return None
    try:
        return int(value)
    except ValueError as exc:
        raise PlanError(f"{name}={value!r} is not an integer.") from exc


def make_plan(
    rc: ResourceConfig,
    env: Mapping[str, str],
    options: PlanOptions,
    cpu_count: int,
) -> ClusterPlan:
    """Decide this host's role, head, resources and expected node count.

    `env` is the job's environment (SM_NUM_CPUS, SM_NUM_GPUS, RAY_GRAFANA_*, ...);
    `cpu_count` is the CPUs this host has when SM_NUM_CPUS is unset.
    """
    head_host, head_group = select_head(rc, options.head_instance_group)
    host = rc.current_host
    group = rc.group_of(host)
    role: Literal["head", "worker"] = "head" if host == head_host else "worker"

    num_cpus = options.num_cpus
    if num_cpus is None:
        num_cpus = _int_env(env, "SM_NUM_CPUS") or cpu_count
    num_gpus = options.num_gpus
    if num_gpus is None:
        num_gpus = _int_env(env, "SM_NUM_GPUS")
    if num_gpus is None:
        num_gpus = gpus_for_instance_type(group.instance_type) or 0
    if num_cpus < 0 or num_gpus < 0:
        raise PlanError("num_cpus and num_gpus must not be negative.")

    coordinator = options.coordinator_only_head and role == "head"
    resources: dict[str, float] = {f"{GROUP_RESOURCE_PREFIX}{group.name}": 1.0}
    if coordinator:
        num_cpus, num_gpus = 0, 0
    elif num_gpus == 0 and num_cpus > 0:
        # CPU-only hosts judge: one unit per CPU so judge tasks are bounded by cores.
        resources[JUDGE_RESOURCE] = float(num_cpus)

    ray_env = {k: v for k, v in sorted(env.items()) if k.startswith(METRICS_ENV_PREFIXES)}
    return ClusterPlan(
        host=host,
        role=role,
        head_host=head_host,
        head_instance_group=head_group,
        instance_group=group.name,
        instance_type=group.instance_type,
        hosts=rc.hosts,
        expected_nodes=len(rc.hosts),  # every host once: the head is one of them
        port=options.port,
        num_cpus=num_cpus,
        num_gpus=num_gpus,
        resources=resources,
        coordinator_only_head=coordinator,
        options=options,
        ray_env=ray_env,
    )
