"""The shell around the plan: start Ray on this host, wait for the cluster, run the entrypoint.

Head: starts `ray start --head --block` as a child it owns, waits until exactly the
expected nodes are alive (failing fast, naming the missing hosts, after a timeout), runs
the entrypoint with a minimal environment, stops Ray and exits with the entrypoint's
code. Worker: waits for the head, joins with retries, and exits 0 once the head is gone
(its work is done). SIGTERM stops Ray cleanly everywhere.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

from codefu_launcher.auth import AuthError, auth_environment, secret_environment
from codefu_launcher.cuda import CudaError, cuda_environment
from codefu_launcher.host import (
    LaunchError,
    RayNode,
    alive_node_ips,
    exit_code_of,
    port_open,
    ray_executable,
    resolve_host,
    stop_process_group,
    try_resolve,
)
from codefu_launcher.pass_env import (
    PASS_ENV_ENV,
    minimal_environment,
    pass_env_names,
    withheld_names,
)
from codefu_launcher.plan import ClusterPlan

log = logging.getLogger("codefu_launcher")

DEFAULT_FAILURE_FILE = "/opt/ml/output/failure"
DRAIN_ENV = "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S"


class Terminated(BaseException):
    """SIGTERM/SIGINT arrived: stop everything and exit."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@dataclass
class RunSettings:
    """Knobs of the shell (timeouts are seconds)."""

    wait_timeout: float = 600.0  # head: all nodes alive within this, else fail naming missing
    join_timeout: float | None = None  # worker: head reachable within this (default wait+120)
    head_gone_grace: float = 60.0  # worker: head unreachable this long => its work is done
    poll_interval: float = 2.0
    resolve_timeout: float = 300.0  # DNS of the head host (retry with backoff)
    max_join_attempts: int = 10
    stop_grace: float = 15.0
    failure_file: str = DEFAULT_FAILURE_FILE
    extra_env: tuple[str, ...] = ()
    ray_executable: str | None = None
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)


def dashboard_hint(plan: ClusterPlan, env: Mapping[str, str]) -> str | None:
    """How to reach this head's Ray dashboard from outside (SSM port forwarding)."""
    opts = plan.options
    if not plan.is_head or not opts.include_dashboard:
        return None
    job = env.get("TRAINING_JOB_NAME", "<training job name>")
    port = opts.dashboard_port
    params = f'{{"portNumber":["{port}"],"localPortNumber":["{port}"]}}'
    return (
        f"Ray dashboard: {plan.host}:{port} (bound to {opts.dashboard_host}). With the job's "
        "remote debugging on, forward it: aws ssm start-session --target "
        f"sagemaker-training-job:{job}_{plan.host} --document-name "
        f"AWS-StartPortForwardingSession --parameters '{params}'"
    )


def write_failure(path: str, reason: str) -> None:
    """Write the reason to SageMaker's failure file unless something wrote one first."""
    p = Path(path)
    try:
        if p.exists() and p.stat().st_size > 0:
            log.error("%s (failure file %s already written; kept)", reason, p)
            return
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(reason.rstrip() + "\n")
    except OSError as exc:
        log.error("Could not write failure file %s: %s", p, exc)
    log.error("%s", reason)


class Launcher:
    """Carries out one host's plan. `env` is the job environment (os.environ by default)."""

    def __init__(
        self,
        plan: ClusterPlan,
        entrypoint: Sequence[str],
        env: Mapping[str, str],
        settings: RunSettings,
    ) -> None:
        self.plan = plan
        self.entrypoint = list(entrypoint)
        self.env = dict(env)
        self.settings = settings
        try:
            self.auth = auth_environment(env, plan.expected_nodes)
            secrets = secret_environment(env)
        except AuthError as exc:
            raise LaunchError(str(exc)) from exc
        self.base_env = {**minimal_environment(env, settings.extra_env), **secrets}
        if secrets:
            log.info("Secrets read from Parameter Store: %s", ", ".join(sorted(secrets)))
        missing = sorted(pass_env_names(env) - set(env))
        if missing:
            log.warning("%s names %s, which this host's environment lacks", PASS_ENV_ENV, missing)
        withheld = withheld_names(env, self.base_env)
        if withheld:
            log.info(
                "Not passed to Ray and the entrypoint (pass one with --pass-env NAME or %s): %s",
                PASS_ENV_ENV,
                ", ".join(withheld),
            )
        self.ray: RayNode | None = None
        self.child: subprocess.Popen[bytes] | None = None
        self._stopping = False

    # The environment of Ray's processes (and so of every Ray worker process on this host).
    def ray_env(self) -> dict[str, str]:
        env = {**self.base_env, **self.plan.ray_env, **self.auth}
        # Draining on SIGTERM only delays shutdown here (no serving traffic to drain).
        env.setdefault(DRAIN_ENV, self.env.get(DRAIN_ENV, "0"))
        return env

    def _start_ray(self, args: list[str]) -> RayNode:
        """`ray start ARGS --block` on this host, with the environment of `ray_env`."""
        node = RayNode(
            ray_executable(self.settings.ray_executable),
            args,
            self.ray_env(),
            self.settings.stop_grace,
        )
        node.start()
        return node

    def run(self) -> int:
        previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
        self._install_signal_handlers()
        try:
            self._check_cuda()
            return self._run_head() if self.plan.is_head else self._run_worker()
        except Terminated as t:
            log.warning("Received signal %d: stopping Ray", t.signum)
            return 128 + t.signum
        except LaunchError as exc:
            write_failure(self.settings.failure_file, f"codefu-launcher: {exc}")
            return 1
        finally:
            self._stopping = True
            if self.child is not None:
                stop_process_group(self.child, self.settings.stop_grace, "entrypoint")
            if self.ray is not None:
                self.ray.stop()
            for s, handler in previous.items():
                signal.signal(s, handler)

    def _check_cuda(self) -> None:
        """On GPU hosts: the driver runs the image's CUDA (forward compatibility if needed)."""
        try:
            changed = cuda_environment(self.env, self.plan.num_gpus)
        except CudaError as exc:
            raise LaunchError(f"{self.plan.host}: {exc}") from exc
        self.base_env.update(changed)

    def _install_signal_handlers(self) -> None:
        for s in (signal.SIGTERM, signal.SIGINT):
            signal.signal(s, self._on_signal)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        # The first signal interrupts; later ones must not interrupt the cleanup it started.
        if self._stopping:
            log.info("Signal %d while stopping: ignored", signum)
            return
        self._stopping = True
        raise Terminated(signum)

    # --- head -----------------------------------------------------------------------------

    def _run_head(self) -> int:
        s = self.settings
        node_ip = resolve_host(self.plan.host, s.resolve_timeout, s.sleep)
        address = f"{node_ip}:{self.plan.port}"
        self.ray = self._start_ray(self.plan.ray_start_args(node_ip, node_ip))
        self._wait_for_port(node_ip, s.wait_timeout)
        hint = dashboard_hint(self.plan, self.env)
        if hint:
            log.info("%s", hint)
        self._wait_for_nodes(address)
        env = {
            **self.base_env,
            **self.auth,
            "RAY_ADDRESS": address,
            "CODEFU_RAY_HEAD_HOST": self.plan.head_host,
            "CODEFU_RAY_NODES": str(self.plan.expected_nodes),
        }
        log.info("Cluster complete; running entrypoint: %s", " ".join(self.entrypoint))
        try:
            self.child = subprocess.Popen(self.entrypoint, env=env, start_new_session=True)
        except OSError as exc:
            raise LaunchError(f"Could not start the entrypoint {self.entrypoint}: {exc}") from exc
        code = exit_code_of(self.child.wait())
        self.child = None
        if code != 0:
            write_failure(
                s.failure_file, f"Entrypoint {self.entrypoint!r} exited with code {code}."
            )
        else:
            log.info("Entrypoint finished with exit code 0")
        return code

    def _wait_for_port(self, ip: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not port_open(ip, self.plan.port):
            if self.ray is not None and not self.ray.running():
                raise LaunchError("`ray start --head` exited before the head came up; see its log.")
            if time.monotonic() > deadline:
                raise LaunchError(f"The Ray head did not listen on {ip}:{self.plan.port} in time.")
            self.settings.sleep(0.5)

    def _wait_for_nodes(self, address: str) -> None:
        """Block until exactly the expected nodes are alive, or fail naming who is missing."""
        s = self.settings
        # This process is a Ray driver too; Ray reads the auth settings when it is imported.
        os.environ.update(self.auth)
        import ray

        ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
        # ray.init replaced our SIGTERM handler with its own (sys.exit): take it back.
        self._install_signal_handlers()
        try:
            deadline = time.monotonic() + s.wait_timeout
            ips: dict[str, str | None] = dict.fromkeys(self.plan.hosts)
            while True:
                for host, ip in ips.items():
                    if ip is None:
                        ips[host] = try_resolve(host)
                alive = alive_node_ips(address)
                missing = [h for h, ip in ips.items() if ip is None or ip not in alive]
                log.info("%d/%d nodes alive", len(alive), self.plan.expected_nodes)
                if not missing and len(alive) == self.plan.expected_nodes:
                    return
                if not missing and len(alive) > self.plan.expected_nodes:
                    raise LaunchError(
                        f"{len(alive)} nodes joined but {self.plan.expected_nodes} were expected "
                        f"(alive: {sorted(alive)}); refusing to train on an unknown cluster."
                    )
                if self.ray is not None and not self.ray.running():
                    raise LaunchError("The head's Ray processes exited while waiting for nodes.")
                if time.monotonic() > deadline:
                    where = ", ".join(f"{h}={ips[h] or 'unresolved'}" for h in missing)
                    raise LaunchError(
                        f"Only {len(alive)} of {self.plan.expected_nodes} Ray nodes joined within "
                        f"{s.wait_timeout:.0f} s. Missing hosts: {', '.join(missing)} "
                        f"(addresses: {where}). "
                        "Check those instances' logs; the job stops instead of training on a "
                        "partial cluster."
                    )
                s.sleep(s.poll_interval)
        finally:
            ray.shutdown()
            self._install_signal_handlers()

    # --- worker ---------------------------------------------------------------------------

    def _run_worker(self) -> int:
        s = self.settings
        log.info("Ray head: %s (this host: %s)", self.plan.head_host, self.plan.host)
        join_timeout = s.join_timeout if s.join_timeout is not None else s.wait_timeout + 120
        deadline = time.monotonic() + join_timeout
        head_ip = resolve_host(self.plan.head_host, s.resolve_timeout, s.sleep)
        node_ip = resolve_host(self.plan.host, s.resolve_timeout, s.sleep)
        args = self.plan.ray_start_args(node_ip, head_ip)
        port = self.plan.port
        attempts = 0
        joined_once = False
        delay = 1.0
        while True:
            # Wait for the head's GCS port.
            while not port_open(head_ip, port):
                if joined_once:
                    log.info("Head %s is gone after the cluster ran: work is done", head_ip)
                    return 0
                if time.monotonic() > deadline:
                    raise LaunchError(
                        f"Head {self.plan.head_host} ({head_ip}:{port}) was not reachable within "
                        f"{join_timeout:.0f} s; this worker ({self.plan.host}) gives up."
                    )
                s.sleep(min(delay, 5.0))
                delay = min(delay * 2, 5.0)
            attempts += 1
            self.ray = self._start_ray(args)
            joined_once = True
            outcome = self._watch_head(head_ip)
            if outcome == "head-gone":
                log.info("Head %s unreachable for %.0f s: work done", head_ip, s.head_gone_grace)
                return 0
            # Our Ray exited while the head is still there: join again.
            self.ray.stop()
            self.ray = None
            if attempts >= s.max_join_attempts:
                raise LaunchError(
                    f"`ray start --address={head_ip}:{port}` failed {attempts} times on "
                    f"{self.plan.host}; see the Ray logs above."
                )
            log.warning("Ray on this worker exited; joining again (attempt %d)", attempts + 1)
            s.sleep(min(2.0**attempts, 30.0))

    def _watch_head(self, head_ip: str) -> str:
        """Poll until the head has been unreachable for the grace period, or our Ray exits.

        A single failed probe is tolerated: only a continuous outage counts.
        """
        s = self.settings
        unreachable_since: float | None = None
        while True:
            s.sleep(s.poll_interval)
            if port_open(head_ip, self.plan.port):
                unreachable_since = None
            else:
                now = time.monotonic()
                unreachable_since = unreachable_since or now
                if now - unreachable_since >= s.head_gone_grace:
                    return "head-gone"
            if self.ray is None or not self.ray.running():
                if unreachable_since is not None:
                    # Our Ray went down with the head: wait out the grace, then decide.
                    continue
                return "ray-exited"
