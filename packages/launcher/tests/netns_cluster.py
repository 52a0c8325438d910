"""Simulated SageMaker hosts as network namespaces, each running the real launcher (the
end-to-end tests `test_e2e_netns*.py`; their fixtures `hosts` and `job` are in conftest.py).

Each host is a namespace with its own address on a private bridge and its own
/etc/netns/<ns>/hosts, so `algo-1`, `algo-2`, ... resolve as on SageMaker. Needs root and
`ip netns` (Debian: iproute2); skipped cleanly otherwise.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

N_HOSTS = 3
# What a user sets in the job spec's environment: it reaches Ray and the entrypoint.
USER_ENV = {"RAY_DEDUP_LOGS": "0", "GLOO_SOCKET_IFNAME": "eth0", "MY_TOOL_SETTING": "7"}
LAUNCHER = str(Path(sys.executable).with_name("codefu-launcher"))


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


def _netns_available() -> str | None:
    if os.geteuid() != 0:
        return "needs root for network namespaces"
    if shutil.which("ip") is None:
        return "needs `ip` (apt-get install iproute2)"
    name = f"cflprobe{os.getpid()}"
    try:
        _ip("netns", "add", name)
        _ip("netns", "del", name)
    except (subprocess.CalledProcessError, OSError) as exc:
        return f"`ip netns` does not work here: {exc}"
    return None


@dataclass
class Hosts:
    """N namespaces on one bridge; host i is `algo-i` at `<prefix>.i`."""

    tag: str
    prefix: str
    namespaces: dict[str, str] = field(default_factory=dict)  # host -> namespace
    addresses: dict[str, str] = field(default_factory=dict)  # host -> ip

    @property
    def bridge(self) -> str:
        return f"cfb{self.tag}"


def namespaces() -> Iterator[Hosts]:
    """N_HOSTS hosts on a new bridge (skips where `ip netns` cannot work), removed after."""
    reason = _netns_available()
    if reason:
        pytest.skip(reason)
    tag = f"{os.getpid() % 10000:04d}{random.randint(0, 99):02d}"
    prefix = f"10.{random.randint(100, 250)}.{random.randint(0, 250)}"
    h = Hosts(tag=tag, prefix=prefix)
    try:
        _ip("link", "add", h.bridge, "type", "bridge")
        _ip("link", "set", h.bridge, "up")
        lines = ["127.0.0.1 localhost"]
        for i in range(1, N_HOSTS + 1):
            host, ns = f"algo-{i}", f"cfl{tag}-{i}"
            h.namespaces[host], h.addresses[host] = ns, f"{prefix}.{i}"
            lines.append(f"{prefix}.{i} {host}")
        # One more host name with an address but no machine: a host that never comes.
        lines.append(f"{prefix}.{N_HOSTS + 1} algo-{N_HOSTS + 1}")
        for i, (host, ns) in enumerate(h.namespaces.items(), start=1):
            veth = f"cfv{tag}{i}"
            _ip("netns", "add", ns)
            _ip("link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
            _ip("link", "set", veth, "master", h.bridge, "up")
            _ip("-n", ns, "addr", "add", f"{h.addresses[host]}/24", "dev", "eth0")
            _ip("-n", ns, "link", "set", "eth0", "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            etc = Path("/etc/netns") / ns
            etc.mkdir(parents=True, exist_ok=True)
            (etc / "hosts").write_text("\n".join(lines) + "\n")
        yield h
    finally:
        for ns in h.namespaces.values():
            with contextlib.suppress(subprocess.CalledProcessError, OSError):
                _ip("netns", "del", ns)
            shutil.rmtree(Path("/etc/netns") / ns, ignore_errors=True)
        with contextlib.suppress(subprocess.CalledProcessError, OSError):
            _ip("link", "del", h.bridge)


def resource_config(
    hosts: list[str], current: str, groups: dict[str, list[str]] | None = None
) -> dict[str, object]:
    if groups:  # heterogeneous: group name -> hosts
        name = next(g for g, members in groups.items() if current in members)
        return {
            "current_host": current,
            "current_instance_type": "ml.c5.xlarge",
            "current_group_name": name,
            "hosts": hosts,
            "instance_groups": [
                {"instance_group_name": g, "instance_type": "ml.c5.xlarge", "hosts": members}
                for g, members in groups.items()
            ],
            "network_interface_name": "eth0",
        }
    return {
        "current_host": current,
        "current_instance_type": "ml.c5.xlarge",
        "current_group_name": "homogeneousCluster",
        "hosts": hosts,
        "instance_groups": [
            {
                "instance_group_name": "homogeneousCluster",
                "instance_type": "ml.c5.xlarge",
                "hosts": hosts,
            }
        ],
        "network_interface_name": "eth0",
    }


ENTRYPOINT = textwrap.dedent(
    """
    import json, os, sys, time
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    ray.init()
    nodes = [n for n in ray.nodes() if n["Alive"]]

    @ray.remote(num_cpus=0)
    def where():
        return ray.util.get_node_ip_address()

    ips = ray.get([
        where.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
        ).remote()
        for n in nodes
    ])
    @ray.remote(num_cpus=0)
    def knob():
        return os.environ.get("GLOO_SOCKET_IFNAME")

    knobs = ray.get([
        knob.options(
            scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)
        ).remote()
        for n in nodes
    ])
    judged = ray.get(where.options(num_cpus=1, resources={"judge": 1}).remote())
    group = "instance_group:" + sys.argv[2]  # every worker of that group has it
    grouped = ray.get(where.options(resources={group: 0.5}).remote())
    out = sys.argv[1]
    with open(out + ".tmp", "w") as f:
        json.dump({"nodes": len(nodes), "task_ips": ips, "judge_ip": judged,
                   "group_ip": grouped, "env": sorted(os.environ), "worker_knobs": knobs,
                   "user_env": {k: os.environ.get(k) for k in sys.argv[4].split(",")},
                   "cpus": {n["NodeManagerAddress"]: n["Resources"].get("CPU", 0)
                            for n in nodes}}, f)
    os.rename(out + ".tmp", out)
    if float(sys.argv[3]):  # hold the cluster until killed
        time.sleep(float(sys.argv[3]))
    """
)


@dataclass
class Job:
    """One simulated training job: a launcher process per started host."""

    hosts: Hosts
    members: list[str]
    workdir: Path
    groups: dict[str, list[str]] | None = None
    secret: str = "test-secret-" + str(random.random())
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start(self, host: str, *extra: str, entrypoint: list[str] | None = None) -> None:
        rc = self.workdir / f"{host}.json"
        rc.write_text(json.dumps(resource_config(self.members, host, self.groups)))
        from codefu_launcher.submit import JobSpec, job_environment

        spec = JobSpec("e2e", "image", instance_type="ml.c5.xlarge", environment=USER_ENV)
        env = {
            **os.environ,
            **job_environment(spec),  # as a submission sets it
            "CODEFU_RAY_AUTH_SECRET": self.secret,
            "UNRELATED_CANARY": "must-not-reach-the-entrypoint",
        }
        cmd = [
            "ip",
            "netns",
            "exec",
            self.hosts.namespaces[host],
            LAUNCHER,
            "run",
            "--resource-config",
            str(rc),
            "--num-cpus",
            "1",
            "--object-store-memory",
            str(80 * 1024 * 1024),
            "--no-dashboard",
            "--temp-dir",
            str(self.workdir / f"ray-{host}"),
            "--failure-file",
            str(self.workdir / f"failure-{host}"),
            "--head-gone-grace",
            "3",
            *extra,
        ]
        if entrypoint:
            cmd += ["--", *entrypoint]
        log = (self.workdir / f"{host}.log").open("wb")
        self.procs[host] = subprocess.Popen(
            cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def wait(self, host: str, timeout: float) -> int:
        try:
            return self.procs[host].wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{host} did not exit within {timeout} s; log:\n{self.log(host)}")

    def log(self, host: str) -> str:
        return (self.workdir / f"{host}.log").read_text(errors="replace")[-6000:]

    def failure(self, host: str) -> str | None:
        path = self.workdir / f"failure-{host}"
        return path.read_text() if path.exists() else None

    def cleanup(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        # Anything of ours left (launchers, Ray processes): they name our unique workdir.
        mine = str(self.workdir).encode()
        for proc_dir in Path("/proc").glob("[0-9]*"):
            with contextlib.suppress(OSError):
                if mine in (proc_dir / "cmdline").read_bytes():
                    os.kill(int(proc_dir.name), signal.SIGKILL)


def job_on(hosts: Hosts) -> Iterator[Job]:
    """A job over every host, in a fresh short workdir, cleaned up after."""
    workdir = Path(tempfile.mkdtemp(prefix="cfl", dir="/tmp"))  # short: Ray socket paths
    j = Job(hosts=hosts, members=list(hosts.namespaces), workdir=workdir)
    try:
        yield j
    finally:
        j.cleanup()
        shutil.rmtree(workdir, ignore_errors=True)
