"""The GPU smoke in one command, for a borrowed GPU host, its files collected (docs/smoke.md).

    python3 tools/smoke_host.py --archive codefu-smoke-cp312-manylinux_2_28_x86_64.tar.xz \\
        --out "$OUT" --budget 480

In the repository's root, with the Python of the host. In order, each step timed, and every
result copied into `--out` as it comes (at most `OUT_FILES` files):

1. the host: Python, CPUs, memory, nvidia-smi's GPU list, the interpreter's `pip freeze`;
2. the idle GPU: nvidia-smi's memory figures, NVML's v1 and v2 `used`/`reserved`, and one torch
   process's context (NVML before and after it initialises CUDA, after a bf16 matmul);
3. the smoke archive (`nox -s bundle -- --profile smoke`): its sha256 against FILE.sha256,
   unpacked into `--work`; the smoke then imports the archive's packages, but this working
   tree's own code first (a fix needs no new archive);
4. a bare `generate` at the smoke's shape (`benchmarks/gpu_generate.py`);
5. `codefu-train --smoke` under a deadline that leaves `RESERVE_S` for the copies: the smoke
   stops a stage still running then and still writes its table; a watchdog ends the smoke's
   process group should it not. Meanwhile each process's memory is sampled with its role
   (on the GPU: NVML's, or nvidia-smi's, per process; on a CPU: each process's PSS);
6. the fused log-prob pass (`benchmarks/gpu_actor_memory.py`) only if time remains;
7. the last copies.

Without a GPU (CI, where `tests/training/test_smoke.py` runs it) it runs the CPU smoke with
the Python that runs it (`.nox/training/bin/python tools/smoke_host.py --out DIR`): the GPU
steps are reported as skipped, with why. Standard library only, and the trainer's
`phase_probe` (the same), as the host's Python runs it before anything is unpacked. Exit
code: the smoke's (0 passed, 1 failed, 2 bad usage), 124 when the watchdog ended it, 3 when a
step before it failed.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("sandbox", "data", "trainer", "launcher")
# The trainer's process readers (standard library only, like this file).
sys.path.insert(0, str(ROOT / "packages" / "trainer" / "src"))
from codefu_trainer.training.phase_probe import process_tree, pss_bytes  # noqa: E402

# The files written into --out; nothing else goes there.
SUMMARY = "summary.json"  # host, idle GPU, every step's time and result, what was skipped
TABLE = "table.txt"  # the smoke's table: phases, plan, stages with their start-ups
PHASES = "phases.jsonl"  # the smoke's per-phase records (training/phase_probe.py)
PROCESSES = "processes.jsonl"  # memory per process, sampled through the smoke (pid, role)
BENCH = "bench.json"  # the bare generate and the fused pass (or why not)
CONSOLE = "console.txt"  # this command's own lines
LOGS = "logs.tar.gz"  # the stages' logs (veRL's step lines), the plan, raw outputs
OUT_FILES = (SUMMARY, TABLE, PHASES, PROCESSES, BENCH, CONSOLE, LOGS)
# Seconds kept, of the budget, for the smoke's table and the last copies after its deadline.
RESERVE_S = 45.0
# Seconds the smoke gets after its deadline to stop its stage and write its table.
SMOKE_GRACE_S = 25.0
# What the optional steps need, at least (seconds): the bare generate, the fused pass.
GENERATE_S = 60.0
FUSED_S = 75.0
# The bare generate's sampled tokens per row (the smoke's batch: 16 rows).
GENERATE_TOKENS = 64
# Between samples of the processes' memory (seconds): NVML and nvidia-smi, PSS from /proc.
GPU_SAMPLE_S = 0.5
CPU_SAMPLE_S = 5.0  # one sample reads every process's PSS: ~0.1 s of CPU for the smoke's tree
# Between progressive copies into --out (seconds); the logs' tar every LOGS_EVERY copies.
COPY_EVERY_S = 15.0
LOGS_EVERY = 4
EXIT_WATCHDOG = 124
EXIT_BEFORE_SMOKE = 3

# --- roles of the processes --------------------------------------------------------------

# (what the command line holds, the role); the first that matches. Ray titles its workers
# `ray::<Class>.<method>`.
ROLES = (
    ("WorkerDict", "actor and reference (veRL FSDP worker)"),
    ("HFServer", "rollout server (hf)"),
    ("vLLM", "rollout server (vLLM)"),
    ("EngineCore", "rollout server (vLLM engine)"),
    ("AgentLoopWorker", "veRL agent loop"),
    ("RewardLoopWorker", "veRL reward loop"),
    ("TaskRunner", "veRL task runner"),
    ("RayJudgeWorker", "judge worker"),
    ("JudgePoolActor", "judge pool"),
    ("TransferQueue", "veRL TransferQueue"),
    ("gpu_generate.py", "benchmark: bare generate"),
    ("gpu_actor_memory.py", "benchmark: fused pass"),
    ("--smoke", "codefu-train --smoke"),
    ("codefu_trainer.training.cli", "codefu-train stage (veRL's driver)"),
    ("raylet", "Ray raylet"),
    ("gcs_server", "Ray GCS"),
    ("dashboard", "Ray dashboard"),
    ("ray::", "Ray worker"),
)


def role_of(cmdline: str) -> str:
    """A process's role in the smoke from its command line (or Ray's title)."""
    for needle, role in ROLES:
        if needle in cmdline:
            return role
    first = cmdline.split(maxsplit=1)[0] if cmdline.split() else "?"
    return Path(first).name


def cmdline_of(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


# --- commands ------------------------------------------------------------------------------


def run(argv: Sequence[str], timeout: float, env: dict[str, str] | None = None) -> tuple[int, str]:
    """(exit code, stdout and stderr) of a short command; 127 when it cannot start, 124 on
    timeout."""
    try:
        done = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
    except FileNotFoundError as exc:
        return 127, str(exc)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout or ""
        return EXIT_WATCHDOG, out if isinstance(out, str) else out.decode(errors="replace")
    return done.returncode, done.stdout + done.stderr


def gpu_listed() -> list[str]:
    """nvidia-smi's GPU lines (`GPU 0: NVIDIA H200 (UUID: ...)`); empty without one."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return []
    code, out = run(["nvidia-smi", "-L"], timeout=30)
    return [line for line in out.splitlines() if line.startswith("GPU ")] if code == 0 else []


def smi_memory() -> dict[str, Any]:
    """nvidia-smi's memory figures of each GPU (MiB), with the driver's reserve where the
    driver reports it."""
    query = "index,name,memory.total,memory.reserved,memory.used,memory.free,driver_version"
    code, out = run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"], 30)
    if code != 0:
        query = query.replace("memory.reserved,", "")
        code, out = run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"], 30)
    keys = [k.replace("memory.", "") for k in query.split(",")]
    rows = [
        dict(zip(keys, (c.strip() for c in line.split(",")), strict=False))
        for line in out.splitlines()
    ]
    return {"query": query, "exit": code, "gpus": rows if code == 0 else out.strip()[-500:]}


# NVML's v1 and v2 memory of GPU 0 (`used` counts the driver's reserve in v1, not in v2), and
# the compute processes on it, from the host's Python binding (nvidia-ml-py).
NVML_SNIPPET = r"""
import json, sys
try:
    import pynvml
except ImportError as exc:
    print(json.dumps({"skipped": f"no NVML binding (nvidia-ml-py): {exc}"})); sys.exit(0)
pynvml.nvmlInit()
h = pynvml.nvmlDeviceGetHandleByIndex(int(sys.argv[1]))
v1 = pynvml.nvmlDeviceGetMemoryInfo(h)
out = {"v1": {"total": v1.total, "used": v1.used, "free": v1.free}}
v2 = getattr(pynvml, "nvmlMemory_v2", None)
if v2 is not None:
    try:
        m = pynvml.nvmlDeviceGetMemoryInfo(h, version=v2)
        out["v2"] = {"total": m.total, "reserved": m.reserved, "used": m.used, "free": m.free}
    except pynvml.NVMLError as exc:
        out["v2"] = f"not available: {exc}"
procs = pynvml.nvmlDeviceGetComputeRunningProcesses(h)
out["processes"] = [{"pid": p.pid, "used": p.usedGpuMemory} for p in procs]
print(json.dumps(out))
"""

# One torch process's memory on the GPU: NVML's `used` (v2 where there, else v1) before it
# initialises CUDA, after (its context), after a bf16 matmul (cuBLAS's handle and workspace),
# next to what torch's allocator holds, and NVML's figure for this process.
CONTEXT_SNIPPET = r"""
import json, os, sys
import pynvml, torch
pynvml.nvmlInit()
h = pynvml.nvmlDeviceGetHandleByIndex(int(sys.argv[1]))
v2 = getattr(pynvml, "nvmlMemory_v2", None)
def used():
    if v2 is not None:
        try:
            return pynvml.nvmlDeviceGetMemoryInfo(h, version=v2).used
        except pynvml.NVMLError:
            pass
    return pynvml.nvmlDeviceGetMemoryInfo(h).used
def mine():
    return sum(p.usedGpuMemory or 0 for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h)
               if p.pid == os.getpid())
out = {"before": used()}
torch.cuda.init(); x = torch.zeros(1, device="cuda"); torch.cuda.synchronize()
out.update(after_init=used(), process_after_init=mine(),
           torch_reserved_after_init=torch.cuda.memory_reserved())
a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16); b = a @ a
torch.cuda.synchronize()
out.update(after_matmul=used(), process_after_matmul=mine(),
           torch_reserved_after_matmul=torch.cuda.memory_reserved(),
           torch_allocated_after_matmul=torch.cuda.memory_allocated(),
           torch_total=torch.cuda.get_device_properties(0).total_memory,
           torch=torch.__version__, cuda=torch.version.cuda)
out["context_bytes"] = out["after_init"] - out["before"] - out["torch_reserved_after_init"]
out["context_and_cublas_bytes"] = (
    out["after_matmul"] - out["before"] - out["torch_reserved_after_matmul"])
print(json.dumps(out))
"""


# --- the output folder ----------------------------------------------------------------------


class Output:
    """--out's files, each written whole (a temporary file renamed), and this command's
    console, also to CONSOLE."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.lock = threading.Lock()
        out.mkdir(parents=True, exist_ok=True)
        for name in OUT_FILES:  # an earlier run's, in a folder used again
            (out / name).unlink(missing_ok=True)
        self.console = (out / CONSOLE).open("a")

    def say(self, text: str) -> None:
        line = f"smoke_host [{time.strftime('%H:%M:%S')}] {text}"
        with self.lock:
            print(line, flush=True)
            self.console.write(line + "\n")
            self.console.flush()

    def write(self, name: str, data: bytes | str) -> None:
        assert name in OUT_FILES, name
        tmp = self.out / f".{name}.tmp"
        with self.lock:
            tmp.write_bytes(data.encode() if isinstance(data, str) else data)
            tmp.replace(self.out / name)

    def copy(self, source: Path, name: str) -> None:
        if source.is_file():
            self.write(name, source.read_bytes())

    def append(self, name: str, line: str) -> None:
        assert name in OUT_FILES, name
        with self.lock, (self.out / name).open("a") as f:
            f.write(line + "\n")


# --- the command ----------------------------------------------------------------------------


class Smoke:
    """One run of this command: its arguments, its clock, the summary it keeps."""

    def __init__(self, args: argparse.Namespace, output: Output) -> None:
        self.args = args
        self.output = output
        self.start = time.time()
        self.end = self.start + float(args.budget)
        self.work: Path = args.work.resolve()
        self.raw = self.work / "raw"  # what goes into LOGS besides the run's logs
        self.run_dir = self.work / "run"
        self.site: Path | None = None
        self.gpus: list[str] = []
        self.bench: dict[str, Any] = {}  # BENCH: the benchmarks' reports
        self.summary: dict[str, Any] = {
            "command": [sys.executable, *sys.argv],
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.start)),
            "budget_s": args.budget,
            "reserve_s": RESERVE_S,
            "steps": {},
            "skipped": {},
            "files": list(OUT_FILES),
        }

    def left(self) -> float:
        return self.end - time.time()

    def save(self) -> None:
        self.summary["elapsed_s"] = round(time.time() - self.start, 1)
        self.output.write(SUMMARY, json.dumps(self.summary, indent=1, default=str) + "\n")

    def skip(self, name: str, why: str) -> None:
        self.summary["skipped"][name] = why
        self.output.say(f"{name}: skipped ({why})")
        self.save()

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[dict[str, Any]]:
        """Time a step; its dict goes into the summary (an exception is recorded, not raised)."""
        record: dict[str, Any] = {}
        self.summary["steps"][name] = record
        self.output.say(f"{name} ...")
        began = time.monotonic()
        try:
            yield record
            record.setdefault("ok", True)
        except Exception as exc:  # the next steps still run and the files still get written
            record.update(ok=False, error=f"{type(exc).__name__}: {exc}")
        record["seconds"] = round(time.monotonic() - began, 2)
        state = "ok" if record["ok"] else f"FAILED: {record.get('error', '')}"
        self.output.say(f"{name}: {state} ({record['seconds']} s)")
        self.save()

    def python_env(self) -> dict[str, str]:
        """The environment the smoke and the benchmarks run in: this tree's packages first,
        then the archive's, then whatever PYTHONPATH held."""
        paths = [str(ROOT / "packages" / p / "src") for p in PACKAGES]
        if self.site is not None:
            paths.append(str(self.site))
        if os.environ.get("PYTHONPATH"):
            paths.append(os.environ["PYTHONPATH"])
        return {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(paths),
            "PYTHONUNBUFFERED": "1",
            "HF_HUB_OFFLINE": "1",
        }

    def fresh_work(self) -> None:
        """An earlier try's outputs out of --work (its raw outputs, run directory and console),
        so that the logs' tar holds this try's only; the unpacked archive is replaced when
        the archive is unpacked."""
        shutil.rmtree(self.raw, ignore_errors=True)
        shutil.rmtree(self.run_dir, ignore_errors=True)
        (self.work / "smoke.log").unlink(missing_ok=True)
        self.raw.mkdir(parents=True)

    # --- steps -------------------------------------------------------------------------

    def host(self) -> None:
        with self.step("host") as r:
            meminfo = (
                Path("/proc/meminfo").read_text().splitlines()[:1]
                if Path("/proc/meminfo").is_file()
                else []
            )
            r.update(
                python=sys.version.split()[0],
                executable=sys.executable,
                platform=platform.platform(),
                cpus=os.cpu_count(),
                memory=" ".join(meminfo),
            )
            self.gpus = gpu_listed()
            r["gpus"] = self.gpus
            code, freeze = run([self.args.python, "-m", "pip", "freeze"], timeout=60)
            (self.raw / "pip-freeze.txt").write_text(freeze)
            r["pip_freeze"] = f"exit {code}, {len(freeze.splitlines())} lines (raw/pip-freeze.txt)"

    def idle_gpu(self) -> None:
        if not self.gpus:
            self.skip(
                "idle GPU", "no GPU: nvidia-smi lists none (or CUDA_VISIBLE_DEVICES hides it)"
            )
            return
        with self.step("idle GPU") as r:
            r["nvidia_smi"] = smi_memory()
            _, text = run(["nvidia-smi", "-q", "-d", "MEMORY"], timeout=30)
            (self.raw / "nvidia-smi-q-memory.txt").write_text(text)
            r["nvml"] = self.snippet(NVML_SNIPPET, {**os.environ})
            r["torch_process"] = self.snippet(CONTEXT_SNIPPET, self.python_env())
            (self.raw / "idle-gpu.json").write_text(json.dumps(r, indent=1, default=str))

    def snippet(self, code: str, env: dict[str, str]) -> Any:
        rc, out = run([self.args.python, "-c", code, "0"], timeout=120, env=env)
        lines = out.strip().splitlines()
        try:
            return (
                json.loads(lines[-1]) if rc == 0 and lines else {"exit": rc, "output": out[-2000:]}
            )
        except json.JSONDecodeError:
            return {"exit": rc, "output": out[-2000:]}

    def archive(self) -> bool:
        """Check and unpack --archive; False when that failed (the smoke cannot run)."""
        if self.args.archive is None:
            self.skip(
                "archive",
                "no --archive: the smoke runs with this Python's installed packages "
                f"({self.args.python})",
            )
            return True
        with self.step("archive") as r:
            archive: Path = self.args.archive.resolve()
            expected = self.args.sha256 or read_sha256(archive)
            digest = sha256_of(archive)
            r.update(file=str(archive), bytes=archive.stat().st_size, sha256=digest)
            if digest != expected:
                raise ValueError(f"sha256 {digest} is not the expected {expected}")
            began = time.monotonic()
            unpack(archive, self.work)
            r["unpack_seconds"] = round(time.monotonic() - began, 2)
            self.site = self.work / "codefu-smoke" / "site"
            if not self.site.is_dir():
                raise FileNotFoundError(f"{self.site}: not in the archive")
            manifest = self.work / "codefu-smoke" / "manifest.json"
            if manifest.is_file():
                shutil.copy(manifest, self.raw / "archive-manifest.json")
        return bool(self.summary["steps"]["archive"]["ok"])

    def bare_generate(self) -> None:
        if not self.gpus:
            self.skip("bare generate", "no GPU")
            return
        if self.left() < GENERATE_S + RESERVE_S + self.args.smoke_needs:
            self.skip("bare generate", f"{self.left():.0f} s left, kept for the smoke")
            return
        with self.step("bare generate") as r:
            out = self.raw / "generate.json"
            argv = [
                self.args.python,
                str(ROOT / "benchmarks" / "gpu_generate.py"),
                "--out",
                str(out),
            ]
            code, text = run(argv, timeout=GENERATE_S, env=self.python_env())
            (self.raw / "generate.log").write_text(text)
            r["exit"] = code
            r["ok"] = code == 0
            if out.is_file():
                self.bench["generate"] = json.loads(out.read_text())
            self.output.write(BENCH, json.dumps(self.bench, indent=1) + "\n")

    def smoke(self) -> int:
        """`codefu-train --smoke` under its deadline and the watchdog; its exit code."""
        deadline = self.end - RESERVE_S
        shutil.rmtree(self.run_dir, ignore_errors=True)  # a fresh run, also on a second try
        self.run_dir.mkdir(parents=True)
        argv = [
            self.args.python,
            "-m",
            "codefu_trainer.training.cli",
            "--config-dir",
            str(ROOT / "conf"),
            "--smoke",
            f"run.dir={self.run_dir}",
            *self.args.overrides,
        ]
        env = {**self.python_env(), "CODEFU_SMOKE_DEADLINE": f"{deadline:.0f}"}
        code: int | None = None
        with self.step("smoke") as r:
            r.update(command=argv[1:], deadline_s=round(deadline - self.start, 1))
            proc = subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                env=env,
                start_new_session=True,
            )
            echo = threading.Thread(
                target=echo_lines, args=(proc, self.work / "smoke.log"), daemon=True
            )
            echo.start()
            r["pid"] = proc.pid
            sampler = Sampler(self, proc.pid)
            sampler.start()
            last_copy, copies = 0.0, 0
            try:
                while True:
                    try:
                        code = proc.wait(timeout=1.0)
                        break
                    except subprocess.TimeoutExpired:
                        pass
                    if time.time() > deadline + SMOKE_GRACE_S:
                        self.output.say("smoke: past its deadline and grace: ending its processes")
                        end_group(proc, sampler.seen)
                        code = EXIT_WATCHDOG
                        break
                    if time.monotonic() - last_copy > COPY_EVERY_S:
                        last_copy = time.monotonic()
                        copies += 1
                        self.copy_results(logs=copies % LOGS_EVERY == 0)
            finally:
                sampler.stop()
                end_group(proc, sampler.seen)  # whatever the smoke left behind
                echo.join(timeout=10)
            r.update(exit=code, ok=code == 0, samples=sampler.samples)
            if code != 0:  # why: the watchdog, or the smoke's last line (a missing package)
                why = "ended by the watchdog" if code == EXIT_WATCHDOG else None
                r["error"] = f"exit {code}: {why or last_line(self.work / 'smoke.log')}"
            self.copy_results(logs=True)
            self.summary["stages"] = stage_lines(self.run_dir / "smoke" / "table.txt")
        return code if code is not None else EXIT_WATCHDOG

    def fused_pass(self) -> None:
        if not self.gpus:
            self.skip("fused pass", "no GPU")
            return
        if self.left() < FUSED_S + RESERVE_S:
            self.skip("fused pass", f"{self.left():.0f} s left, it needs {FUSED_S:.0f}")
            return
        with self.step("fused pass") as r:
            out = self.raw / "old_fused.json"
            argv = [
                self.args.python,
                str(ROOT / "benchmarks" / "gpu_actor_memory.py"),
                "--paths",
                "",
                "--extra",
                "old_fused@8192,old_fused@16384,old_fused@32768",
                "--out",
                str(out),
            ]
            code, text = run(argv, timeout=self.left() - RESERVE_S, env=self.python_env())
            (self.raw / "old_fused.log").write_text(text)
            r.update(exit=code, ok=code == 0)
            if out.is_file():
                self.bench["old_fused"] = json.loads(out.read_text())
            self.output.write(BENCH, json.dumps(self.bench, indent=1) + "\n")

    # --- copies ------------------------------------------------------------------------

    def copy_results(self, logs: bool) -> None:
        smoke = self.run_dir / "smoke"
        self.output.copy(smoke / "table.txt", TABLE)
        self.output.copy(smoke / "phases.jsonl", PHASES)
        self.save()
        if logs:
            self.output.write(LOGS, logs_tar(self.work, self.run_dir, self.raw))


def echo_lines(proc: subprocess.Popen[str], log: Path) -> None:
    """The smoke's console (its own lines, quiet by default) to `log` and to this one."""
    assert proc.stdout is not None
    with log.open("w") as out:
        for line in proc.stdout:
            out.write(line)
            out.flush()
            sys.stdout.write(line)
            sys.stdout.flush()


def last_line(log: Path) -> str:
    """The last non-blank line of `log` ("" without one)."""
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1].strip() if lines else ""


def stage_lines(table: Path) -> list[str]:
    """The `stage ...` lines of the smoke's table (each stage's verdict, time and start-up)."""
    if not table.is_file():
        return []
    return [line for line in table.read_text().splitlines() if line.startswith("stage ")]


def logs_tar(work: Path, run_dir: Path, raw: Path) -> bytes:
    """One gzipped tar of the smoke's logs (the stages' with veRL's step lines, the library
    log, the plan's table, the smoke's console) and the raw outputs of the other steps."""
    members: list[tuple[Path, str]] = []
    for path in sorted((run_dir / "smoke").glob("*")):
        if path.is_file():
            members.append((path, f"smoke/{path.name}"))
    for name in ("codefu-train.log",):
        if (run_dir / name).is_file():
            members.append((run_dir / name, name))
    if (work / "smoke.log").is_file():
        members.append((work / "smoke.log", "smoke-console.log"))
    for path in sorted(raw.glob("*")) if raw.is_dir() else []:
        members.append((path, f"raw/{path.name}"))
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path, name in members:
            with contextlib.suppress(OSError):
                tar.add(path, arcname=f"logs/{name}")
    return buffer.getvalue()


def end_group(proc: subprocess.Popen[Any], seen: set[int]) -> None:
    """SIGTERM to the smoke's process group, SIGKILL after 10 s, then SIGKILL to any process
    of it seen running that is still there (one that left the group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    for pid in seen - {os.getpid()}:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


class Sampler:
    """Memory of each process of the smoke (pid → role), sampled into PROCESSES until stopped:
    on a GPU, each process NVML (else nvidia-smi) lists on it, and the GPU's `used`; on a
    CPU, the PSS of each process under the smoke."""

    def __init__(self, smoke: Smoke, root: int) -> None:
        self.smoke = smoke
        self.root = root
        self.samples = 0
        self.seen: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sampler", daemon=True)
        self._gpu = gpu_process_reader() if smoke.gpus else None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        period = GPU_SAMPLE_S if self._gpu is not None else CPU_SAMPLE_S
        began = time.monotonic()
        while not self._stop.wait(period):
            tree = process_tree(self.root)
            self.seen.update(tree)
            record: dict[str, Any] = {"t": round(time.monotonic() - began, 2)}
            if self._gpu is not None:
                used, processes = self._gpu()
                record["measure"] = "GPU 0: bytes per process (NVML or nvidia-smi)"
                record["gpu_used"] = used
                rows = [(pid, n) for pid, n in processes]
            else:
                record["measure"] = "PSS bytes per process under the smoke"
                rows = [(pid, pss_bytes(pid)) for pid in tree]
            record["processes"] = [
                {"pid": pid, "role": role_of(cmdline_of(pid)), "bytes": n}
                for pid, n in rows
                if n is not None
            ]
            self.smoke.output.append(PROCESSES, json.dumps(record))
            self.samples += 1


def gpu_process_reader() -> Callable[[], tuple[dict[str, int], list[tuple[int, int | None]]]]:
    """A function reading GPU 0's `used` (v1, and v2 where there) and each compute process's
    memory: through the host's NVML binding where it imports, else nvidia-smi."""
    try:
        import pynvml  # type: ignore[import-not-found, import-untyped, unused-ignore]

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        v2 = getattr(pynvml, "nvmlMemory_v2", None)

        def read_nvml() -> tuple[dict[str, int], list[tuple[int, int | None]]]:
            used = {"v1": int(pynvml.nvmlDeviceGetMemoryInfo(handle).used)}
            if v2 is not None:
                with contextlib.suppress(pynvml.NVMLError):
                    used["v2"] = int(pynvml.nvmlDeviceGetMemoryInfo(handle, version=v2).used)
            procs = pynvml.nvmlDeviceGetComputeRunningProcesses(handle)
            return used, [(int(p.pid), p.usedGpuMemory) for p in procs]

        read_nvml()
        return read_nvml
    except Exception:  # no binding, or the driver refuses: nvidia-smi
        pass

    def read_smi() -> tuple[dict[str, int], list[tuple[int, int | None]]]:
        fmt = "--format=csv,noheader,nounits"
        _, apps = run(["nvidia-smi", "--query-compute-apps=pid,used_memory", fmt], 10)
        _, total = run(["nvidia-smi", "--query-gpu=memory.used", fmt, "-i", "0"], 10)
        rows: list[tuple[int, int | None]] = []
        for line in apps.splitlines():
            pid, _, mib = line.partition(",")
            with contextlib.suppress(ValueError):
                rows.append((int(pid), int(float(mib) * 2**20)))
        with contextlib.suppress(ValueError, IndexError):
            return {"smi": int(float(total.split()[0]) * 2**20)}, rows
        return {}, rows

    return read_smi


def read_sha256(archive: Path) -> str:
    """The digest in ARCHIVE.sha256 (`sha256sum`'s format)."""
    sums = archive.with_name(archive.name + ".sha256")
    if not sums.is_file():
        raise FileNotFoundError(f"{sums}: missing; give --sha256 HEX or carry the .sha256 file")
    return sums.read_text().split()[0]


def sha256_of(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def unpack(archive: Path, into: Path) -> None:
    """The archive into `into` (its `codefu-smoke/` replaced), as data only: no member may
    leave the folder, nor be a device or a link outside it."""
    shutil.rmtree(into / "codefu-smoke", ignore_errors=True)
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="tools/smoke_host.py",
        description="codefu-train --smoke on this host, its files collected into --out "
        "(docs/smoke.md): idle GPU, archive, bare generate, the smoke under a deadline with "
        "per-process memory, the fused pass if time remains.",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(os.environ["OUT"]) if os.environ.get("OUT") else None,
        help="the folder for the files (default: $OUT)",
    )
    parser.add_argument("--archive", type=Path, help="the smoke archive (.tar.xz)")
    parser.add_argument("--sha256", help="its digest (default: ARCHIVE.sha256's)")
    parser.add_argument(
        "--work", type=Path, default=Path("/tmp/codefu-smoke-host"), help="unpack and run here"
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=480.0,
        help="seconds this command may take in all (default 480); the smoke's deadline is "
        f"{RESERVE_S:.0f} s before its end",
    )
    parser.add_argument(
        "--smoke-needs",
        type=float,
        default=240.0,
        help="seconds the smoke is expected to need: the bare generate runs only when they "
        "remain after it (default 240)",
    )
    parser.add_argument(
        "--python", default=sys.executable, help="the interpreter of the smoke (default: this one)"
    )
    parser.add_argument("overrides", nargs="*", help="after --: codefu-train --smoke's overrides")
    args = parser.parse_args(argv)
    if args.out is None:
        parser.error("--out DIR (or $OUT) is needed")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    output = Output(args.out)
    smoke = Smoke(args, output)
    output.say(f"budget {args.budget:.0f} s; files into {args.out}; work in {smoke.work}")
    smoke.fresh_work()
    smoke.save()
    smoke.host()
    smoke.idle_gpu()
    if not smoke.archive():
        smoke.summary["exit"] = EXIT_BEFORE_SMOKE
        smoke.copy_results(logs=True)
        return EXIT_BEFORE_SMOKE
    smoke.bare_generate()
    code = smoke.smoke()
    smoke.fused_pass()
    if not smoke.gpus:
        smoke.bench.setdefault("skipped", "no GPU: the bare generate and the fused pass need one")
    output.write(BENCH, json.dumps(smoke.bench, indent=1) + "\n")
    smoke.summary["exit"] = code
    smoke.copy_results(logs=True)
    output.say(
        f"done: exit {code} in {time.time() - smoke.start:.0f} s; files: {', '.join(OUT_FILES)}"
    )
    return code


if __name__ == "__main__":
    sys.exit(main())
