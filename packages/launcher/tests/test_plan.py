"""The cluster plan: pure decisions from resourceconfig.json and the environment."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codefu_launcher.plan import (
    ClusterPlan,
    PlanError,
    PlanOptions,
    host_sort_key,
    load_resource_config,
    make_plan,
    parse_resource_config,
    sort_hosts,
)


def homogeneous(n: int, current: str, itype: str = "ml.p4de.24xlarge") -> dict[str, Any]:
    hosts = [f"algo-{i}" for i in range(1, n + 1)]
    return {
        "current_host": current,
        "current_instance_type": itype,
        "current_group_name": "homogeneousCluster",
        "hosts": hosts,
        "instance_groups": [
            {"instance_group_name": "homogeneousCluster", "instance_type": itype, "hosts": hosts}
        ],
        "network_interface_name": "eth0",
    }


def heterogeneous(current: str) -> dict[str, Any]:
    gpu, cpu = ["algo-3"], ["algo-1", "algo-2", "algo-4"]
    group = "gpu" if current in gpu else "cpu"
    return {
        "current_host": current,
        "current_instance_type": "ml.p4de.24xlarge" if group == "gpu" else "ml.c7i.16xlarge",
        "current_group_name": group,
        "hosts": sorted(gpu + cpu),
        "instance_groups": [
            {"instance_group_name": "cpu", "instance_type": "ml.c7i.16xlarge", "hosts": cpu},
            {"instance_group_name": "gpu", "instance_type": "ml.p4de.24xlarge", "hosts": gpu},
        ],
        "network_interface_name": "eth0",
    }


def plan_for(data: dict[str, Any], env: dict[str, str] | None = None, **opts: Any) -> ClusterPlan:
    return make_plan(parse_resource_config(data), env or {}, PlanOptions(**opts), cpu_count=8)


def test_single_node_is_its_own_head() -> None:
    plan = plan_for(homogeneous(1, "algo-1"), {"SM_NUM_GPUS": "8", "SM_NUM_CPUS": "96"})
    assert plan.role == "head" and plan.head_host == "algo-1"
    assert plan.expected_nodes == 1
    assert (plan.num_cpus, plan.num_gpus) == (96, 8)
    assert plan.resources == {"instance_group:homogeneousCluster": 1.0}  # GPU node: no judge
    args = plan.ray_start_args("10.0.0.5", "10.0.0.5")
    assert args[:2] == ["--head", "--port=6379"]
    assert "--node-ip-address=10.0.0.5" in args
    assert "--num-gpus=8" in args and "--num-cpus=96" in args
    assert "--disable-usage-stats" in args and args[-1] == "--block"


def test_homogeneous_twelve_hosts_orders_numerically() -> None:
    data = homogeneous(12, "algo-10")
    data["hosts"] = sorted(data["hosts"])  # string order: algo-1, algo-10, algo-11, algo-12, algo-2
    data["instance_groups"][0]["hosts"] = list(reversed(data["hosts"]))
    plan = plan_for(data)
    assert plan.hosts == tuple(f"algo-{i}" for i in range(1, 13))
    assert plan.head_host == "algo-1"
    assert plan.role == "worker"
    assert plan.expected_nodes == 12  # the head counted once
    args = plan.ray_start_args("10.0.0.10", "10.0.0.1")
    assert "--address=10.0.0.1:6379" in args and "--head" not in args
    assert "--node-ip-address=10.0.0.10" in args
    # The GPU count comes from the instance type when SM_NUM_GPUS is absent.
    assert plan.num_gpus == 8


def test_head_is_lowest_by_number_not_string() -> None:
    data = homogeneous(12, "algo-2")
    for group in (data, data["instance_groups"][0]):
        group["hosts"] = [h for h in group["hosts"] if h != "algo-1"]
    plan = plan_for(data)
    assert plan.head_host == "algo-2" and plan.role == "head"
    assert plan.expected_nodes == 11


def test_heterogeneous_gpu_head_and_cpu_judges() -> None:
    head = plan_for(heterogeneous("algo-3"), {"SM_NUM_GPUS": "8"}, head_instance_group="gpu")
    assert head.role == "head" and head.head_host == "algo-3"
    assert head.resources == {"instance_group:gpu": 1.0}
    assert head.num_gpus == 8 and head.expected_nodes == 4

    worker = plan_for(heterogeneous("algo-1"), {"SM_NUM_CPUS": "64"}, head_instance_group="gpu")
    assert worker.role == "worker" and worker.head_host == "algo-3"
    assert worker.instance_group == "cpu" and worker.num_gpus == 0
    assert worker.resources == {"instance_group:cpu": 1.0, "judge": 64.0}
    assert worker.expected_nodes == 4


def test_heterogeneous_cpu_head_group() -> None:
    plan = plan_for(heterogeneous("algo-2"), head_instance_group="cpu")
    assert plan.head_host == "algo-1" and plan.role == "worker"


def test_coordinator_only_head_offers_no_cpus_or_gpus() -> None:
    plan = plan_for(heterogeneous("algo-1"), head_instance_group="cpu", coordinator_only_head=True)
    assert plan.role == "head" and plan.coordinator_only_head
    assert (plan.num_cpus, plan.num_gpus) == (0, 0)
    assert "judge" not in plan.resources
    args = plan.ray_start_args("10.0.0.1", "10.0.0.1")
    assert "--num-cpus=0" in args and "--num-gpus=0" in args
    # Workers are unaffected by the flag.
    worker = plan_for(
        heterogeneous("algo-2"), head_instance_group="cpu", coordinator_only_head=True
    )
    assert not worker.coordinator_only_head and worker.resources["judge"] == 8.0


def test_missing_head_group_is_a_clear_error() -> None:
    with pytest.raises(PlanError, match=r"'trainer' is not in this job.*cpu, gpu"):
        plan_for(heterogeneous("algo-1"), head_instance_group="trainer")


def test_metrics_settings_pass_through() -> None:
    env = {
        "RAY_GRAFANA_HOST": "http://grafana:3000",
        "RAY_PROMETHEUS_HOST": "http://prom:9090",
        "SECRET": "x",
    }
    plan = plan_for(
        homogeneous(2, "algo-1", "ml.c5.xlarge"),
        env,
        metrics_export_port=8080,
        dashboard_host="0.0.0.0",
    )
    assert plan.ray_env == {
        "RAY_GRAFANA_HOST": "http://grafana:3000",
        "RAY_PROMETHEUS_HOST": "http://prom:9090",
    }
    args = plan.ray_start_args("10.0.0.1", "10.0.0.1")
    assert "--metrics-export-port=8080" in args and "--dashboard-host=0.0.0.0" in args


def test_inconsistent_config_is_rejected() -> None:
    data = homogeneous(3, "algo-1")
    data["instance_groups"][0]["hosts"] = ["algo-1", "algo-2"]
    with pytest.raises(PlanError, match="algo-3"):
        parse_resource_config(data)
    with pytest.raises(PlanError, match="current_host"):
        parse_resource_config({**homogeneous(2, "algo-1"), "current_host": "algo-9"})


def test_missing_file_says_where_it_lives(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="--resource-config"):
        load_resource_config(tmp_path / "nope.json")


def test_plan_cli_prints_json(tmp_path: Path) -> None:
    rc = tmp_path / "resourceconfig.json"
    rc.write_text(json.dumps(heterogeneous("algo-4")))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "codefu_launcher.cli",
            "plan",
            "--resource-config",
            str(rc),
            "--head-instance-group",
            "gpu",
            "--num-cpus",
            "4",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    plan = json.loads(out)
    assert plan["role"] == "worker" and plan["head_host"] == "algo-3"
    assert plan["expected_nodes"] == 4 and plan["resources"]["judge"] == 4.0
    assert plan["ray_start"][:2] == ["ray", "start"]
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "codefu_launcher.cli",
            "plan",
            "--resource-config",
            str(rc),
            "--head-instance-group",
            "nope",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2 and "not in this job" in bad.stderr


hosts_st = st.sets(st.integers(min_value=1, max_value=200), min_size=1, max_size=40)


@given(hosts_st, st.data())
def test_every_host_agrees_on_one_head(numbers: set[int], data: st.DataObject) -> None:
    hosts = [f"algo-{n}" for n in numbers]
    shuffled = data.draw(st.permutations(hosts))
    plans = []
    for current in hosts:
        rc = homogeneous(1, current, "ml.c5.xlarge")
        rc["hosts"] = list(shuffled)
        rc["instance_groups"][0]["hosts"] = list(reversed(shuffled))
        plans.append(plan_for(rc))
    heads = {p.head_host for p in plans}
    assert heads == {f"algo-{min(numbers)}"}
    assert sum(p.role == "head" for p in plans) == 1
    assert all(p.expected_nodes == len(numbers) for p in plans)


@given(st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=50))
def test_sort_hosts_is_numeric(numbers: list[int]) -> None:
    ordered = sort_hosts([f"algo-{n}" for n in numbers])
    assert [int(h.split("-")[1]) for h in ordered] == sorted(set(numbers))
    assert host_sort_key("algo-10") > host_sort_key("algo-9")
