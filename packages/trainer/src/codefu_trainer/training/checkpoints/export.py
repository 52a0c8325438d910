"""The final model of a run: the newest actor checkpoint merged into a Hugging Face model.

Each rank of veRL's FSDP actor writes its shard to the checkpoint root of its own host
(`global_step_N/actor/model_world_size_W_rank_R.pt`), rank 0 adds `fsdp_config.json` and
`huggingface/` (config, tokenizer), and the trainer process writes the tracker naming the
newest step. On a multi-node job those are spread over several disks. The export asks every
host what it holds (`ShardHost`: this machine, or a Ray node through tasks pinned to it),
checks each host's files against its manifests (a torn step is refused with the report of
what is wrong, as the resume reports it), links the local files and copies the others'
into a staging directory beside the checkpoint root, then runs veRL's FSDP merger on it
into the model directory (SM_MODEL_DIR, which SageMaker uploads, or <run dir>/model).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from codefu_trainer.training.checkpoints.hosts import (
    TRACKER,
    CheckpointError,
    steps_in,
    torn_report,
)
from codefu_trainer.training.checkpoints.manifest import StepCheck, check_step, list_files

CHUNK_BYTES = 64 * 1024 * 1024  # one Ray object per chunk of a copied file
IN_FLIGHT = 4  # chunks requested ahead while writing


class ShardHost(Protocol):
    """A host's checkpoint root, read from here."""

    name: str

    def files(self) -> dict[str, int]:
        """Every file under the root: relative POSIX path → size."""
        ...

    def read(self, rel: str, offset: int, length: int) -> bytes: ...

    def local_path(self, rel: str) -> Path | None:
        """The file's path when this process can open it directly, else None."""
        ...

    def check(self, step: int) -> StepCheck:
        """This host's files of step `step` against its manifests (`manifest.check_step`)."""
        ...


@dataclass
class LocalHost:
    """A checkpoint root on this machine."""

    root: Path
    name: str = "this host"

    def files(self) -> dict[str, int]:
        return list_files(self.root)

    def read(self, rel: str, offset: int, length: int) -> bytes:
        return _read(str(self.root / rel), offset, length)

    def local_path(self, rel: str) -> Path | None:
        return self.root / rel

    def check(self, step: int) -> StepCheck:
        return _check(str(self.root), step)


def _check(root: str, step: int) -> StepCheck:
    return check_step(Path(root) / f"global_step_{step}")


def _read(path: str, offset: int, length: int) -> bytes:
    with Path(path).open("rb") as f:
        f.seek(offset)
        return f.read(length)


def _list(root: str) -> dict[str, int]:
    return list_files(Path(root))


@dataclass
class RayNodeHost:
    """A checkpoint root on another node of the Ray cluster, read by tasks pinned to it."""

    node_id: str
    root: Path
    name: str = ""
    _strategy: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self.name = self.name or f"Ray node {self.node_id[:12]}"
        self._strategy = NodeAffinitySchedulingStrategy(self.node_id, soft=False)

    def _task(self, fn: Any) -> Any:
        import ray

        return ray.remote(num_cpus=0, max_retries=2)(fn).options(scheduling_strategy=self._strategy)

    def files(self) -> dict[str, int]:
        import ray

        return dict(ray.get(self._task(_list).remote(str(self.root))))

    def read(self, rel: str, offset: int, length: int) -> bytes:
        import ray

        return bytes(ray.get(self._task(_read).remote(str(self.root / rel), offset, length)))

    def read_async(self, rel: str, offset: int, length: int) -> Any:
        return self._task(_read).remote(str(self.root / rel), offset, length)

    def local_path(self, rel: str) -> Path | None:
        return None

    def check(self, step: int) -> StepCheck:
        import ray

        check: StepCheck = ray.get(self._task(_check).remote(str(self.root), step))
        return check


def ray_hosts(root: Path) -> list[ShardHost]:
    """This host and every other alive node of the connected Ray cluster (none if not)."""
    hosts: list[ShardHost] = [LocalHost(root)]
    try:
        import ray
    except ImportError:  # pragma: no cover - ray comes with veRL
        return hosts
    if not ray.is_initialized():
        return hosts
    here = ray.get_runtime_context().get_node_id()
    for node in ray.nodes():
        if node.get("Alive") and node["NodeID"] != here:
            name = f"Ray node {node.get('NodeManagerAddress', node['NodeID'][:12])}"
            hosts.append(RayNodeHost(node["NodeID"], root, name=name))
    return hosts


@dataclass(frozen=True)
class Listing:
    """What every host holds: per host, relative path → size."""

    hosts: Sequence[ShardHost]
    files: Sequence[dict[str, int]]

    @classmethod
    def of(cls, hosts: Sequence[ShardHost]) -> Listing:
        return cls(hosts, [h.files() for h in hosts])

    def newest_step(self) -> int | None:
        """The step the trainer's tracker names (on whichever host it is), else the newest."""
        tracked = []
        for host, files in zip(self.hosts, self.files, strict=True):
            if TRACKER in files:
                try:
                    tracked.append(int(host.read(TRACKER, 0, 64).decode().strip()))
                except ValueError:
                    continue
        if tracked:
            return max(tracked)
        steps = set().union(*(steps_in(f) for f in self.files)) if self.files else set()
        return max(steps) if steps else None

    def where(self, rel: str) -> tuple[ShardHost, int] | None:
        """The first host holding `rel`, this host first, and the file's size there."""
        for host, files in zip(self.hosts, self.files, strict=True):
            if rel in files:
                return host, files[rel]
        return None


def merge_inputs(actor_rel: str, listing: Listing) -> list[str]:
    """The files veRL's merger reads: fsdp_config.json, huggingface/*, every rank's model."""
    import json

    config_rel = f"{actor_rel}/fsdp_config.json"
    found = listing.where(config_rel)
    if found is None:
        raise CheckpointError(
            f"No host holds {config_rel} (rank 0 writes it); hosts searched: "
            f"{', '.join(h.name for h in listing.hosts)}. The checkpoint is incomplete: "
            "export an earlier step with `python -m verl.model_merger`."
        )
    host, size = found
    world = int(json.loads(host.read(config_rel, 0, size))["world_size"])
    every = set().union(*listing.files)
    names = [f"{actor_rel}/model_world_size_{world}_rank_{r}.pt" for r in range(world)]
    missing = [n for n in names if n not in every]
    hf = sorted(r for r in every if r.startswith(f"{actor_rel}/huggingface/"))
    if missing or not any(r.endswith("/config.json") for r in hf):
        lacking = [n.rsplit("/", 1)[1] for n in missing] or ["huggingface/config.json"]
        raise CheckpointError(
            f"{actor_rel} lacks {', '.join(lacking)} on every host searched "
            f"({', '.join(h.name for h in listing.hosts)}): a node left the Ray cluster "
            "before the export, or its disk lost the files. Export from the S3 checkpoint "
            "prefix after the job with `python -m verl.model_merger merge --backend fsdp`."
        )
    return [config_rel, *hf, *names]


def verify_step(step: int, listing: Listing) -> list[str]:
    """The merge inputs of step `step`; CheckpointError with the torn-step report (which
    file, what is wrong, on any host) unless every host's files match their manifests."""
    checks = [host.check(step) for host in listing.hosts]
    problems = torn_report(step, checks, ["actor/fsdp_config.json"])
    inputs: list[str] = []
    if not problems:
        inputs = merge_inputs(f"global_step_{step}/actor", listing)
        base = f"global_step_{step}/"
        problems = torn_report(step, checks, [rel.removeprefix(base) for rel in inputs])
    if problems:
        hosts = ", ".join(h.name for h in listing.hosts)
        raise CheckpointError(
            f"global_step_{step} is torn (hosts searched: {hosts}), no final model written:\n  "
            + "\n  ".join(problems)
            + "\nRun the same job again: it resumes from the newest whole step and saves "
            "again. Or export a whole earlier step yourself: `python -m verl.model_merger "
            "merge --backend fsdp --local_dir <checkpoints>/global_step_M/actor --target_dir "
            "<model dir>`."
        )
    return inputs


def copy_file(host: ShardHost, rel: str, size: int, dest: Path) -> None:
    """Copy one file from `host` into `dest`, in chunks (Ray hosts: a few in flight)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".part")
    offsets = list(range(0, size, CHUNK_BYTES)) or [0]
    with tmp.open("wb") as out:
        read_async = getattr(host, "read_async", None)
        if read_async is None:
            for off in offsets:
                out.write(host.read(rel, off, CHUNK_BYTES))
        else:
            import ray

            pending = [read_async(rel, off, CHUNK_BYTES) for off in offsets[:IN_FLIGHT]]
            for i in range(len(offsets)):
                out.write(bytes(ray.get(pending[i])))
                pending[i] = None  # release the chunk
                if i + IN_FLIGHT < len(offsets):
                    pending.append(read_async(rel, offsets[i + IN_FLIGHT], CHUNK_BYTES))
    if tmp.stat().st_size != size:
        raise CheckpointError(
            f"Copied {tmp.stat().st_size} of {size} bytes of {rel} from {host.name}: the file "
            "changed during the export. Run the export again once training has stopped."
        )
    tmp.replace(dest)


def stage(inputs: Sequence[str], listing: Listing, staging: Path) -> None:
    """One directory holding every input of the merge: links to local files, copies of others."""
    shutil.rmtree(staging, ignore_errors=True)
    for rel in inputs:
        found = listing.where(rel)
        assert found is not None  # merge_inputs checked
        host, size = found
        dest = staging / rel
        local = host.local_path(rel)
        if local is not None:
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.symlink_to(local.resolve())
        else:
            print(f"codefu-train: export copies {rel} ({size / 2**20:.0f} MiB) from {host.name}")
            copy_file(host, rel, size, dest)


def merge(actor_dir: Path, out_dir: Path, trust_remote_code: bool = False) -> None:
    """veRL's FSDP merger (its CLI, in a child process) from `actor_dir` into `out_dir`."""
    cmd = [
        sys.executable, "-m", "verl.model_merger", "merge", "--backend", "fsdp",
        "--local_dir", str(actor_dir), "--target_dir", str(out_dir),
    ]  # fmt: skip
    if trust_remote_code:
        cmd.append("--trust-remote-code")
    subprocess.run(cmd, check=True)


def export_final_model(
    ckpt_root: Path,
    out_dir: Path,
    *,
    trust_remote_code: bool = False,
    hosts: Sequence[ShardHost] | None = None,
) -> Path | None:
    """Merge the newest actor checkpoint, wherever its shards are, into `out_dir`.

    `hosts` defaults to this machine and every other node of the connected Ray cluster.
    Returns `out_dir`, or None when no host holds a checkpoint. Raises CheckpointError,
    with the report, when the step does not match its manifests on every host.
    """
    hosts = list(hosts) if hosts is not None else ray_hosts(ckpt_root)
    listing = Listing.of(hosts)
    step = listing.newest_step()
    if step is None:
        print(
            f"codefu-train: no actor checkpoint under {ckpt_root} on "
            f"{', '.join(h.name for h in hosts)}; no final model written.",
            flush=True,
        )
        return None
    inputs = verify_step(step, listing)
    staging = ckpt_root.with_name(ckpt_root.name + ".export")  # beside the root: not synced
    try:
        stage(inputs, listing, staging)
        merge(staging / f"global_step_{step}/actor", out_dir, trust_remote_code)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    print(f"codefu-train: final model of step {step} written to {out_dir}", flush=True)
    return out_dir
