"""tools/smoke_host.py, the borrowed GPU host's one command, before its smoke: the archive's
check and unpacking, the roles of the smoke's processes, and the files it leaves when a step
before the smoke fails. The whole command runs on the CPU in the trainer's suite
(packages/trainer/tests/training/test_smoke.py's fixture)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from repo import ROOT

sys.path.insert(0, str(ROOT))
from tools import smoke_host


def _archive(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:xz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _command(tmp_path: Path, *args: str) -> tuple[int, dict, Path]:
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "smoke_host.py"), "--out", str(out),
         "--work", str(tmp_path / "work"), *args],
        capture_output=True, text=True, timeout=300, check=False,
        env={"PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": ""},
    )  # fmt: skip
    return done.returncode, json.loads((out / smoke_host.SUMMARY).read_text()), out


def test_the_roles_of_the_smokes_processes_come_from_rays_titles() -> None:
    assert smoke_host.role_of("ray::WorkerDict.actor_rollout_compute_log_prob") == (
        "actor and reference (veRL FSDP worker)"
    )
    assert smoke_host.role_of("ray::HFServer.generate") == "rollout server (hf)"
    assert smoke_host.role_of("ray::CodeFuTaskRunner.run") == "veRL task runner"
    assert smoke_host.role_of("python -m codefu_trainer.training.cli --smoke run.dir=x") == (
        "codefu-train --smoke"
    )
    assert smoke_host.role_of("python -m codefu_trainer.training.cli --verbose a=b") == (
        "codefu-train stage (veRL's driver)"
    )
    assert smoke_host.role_of("/usr/bin/foo --bar") == "foo"


def test_an_archive_whose_digest_differs_stops_before_the_smoke_with_its_files(
    tmp_path: Path,
) -> None:
    archive = _archive(tmp_path / "a.tar.xz", {"codefu-smoke/site/x.py": b"x = 1\n"})
    (tmp_path / "a.tar.xz.sha256").write_text("0" * 64 + "  a.tar.xz\n")
    for earlier in ("raw/generate.json", "run/smoke/resume.log", "smoke.log"):  # a first try's
        (tmp_path / "work" / earlier).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "work" / earlier).write_text("an earlier try")
    code, summary, out = _command(tmp_path, "--archive", str(archive))
    assert code == smoke_host.EXIT_BEFORE_SMOKE
    assert summary["steps"]["archive"]["ok"] is False
    assert "is not the expected " + "0" * 64 in summary["steps"]["archive"]["error"]
    assert summary["skipped"]["idle GPU"].startswith("no GPU") and "smoke" not in summary["steps"]
    assert {p.name for p in out.iterdir()} <= set(smoke_host.OUT_FILES)
    with tarfile.open(out / smoke_host.LOGS) as tar:
        assert sorted(tar.getnames()) == ["logs/raw/pip-freeze.txt"]  # this try's only


def test_an_archive_is_unpacked_as_data_only(tmp_path: Path) -> None:
    good = _archive(tmp_path / "good.tar.xz", {"codefu-smoke/site/x.py": b"x = 1\n"})
    smoke_host.unpack(good, tmp_path / "work")
    assert (tmp_path / "work" / "codefu-smoke" / "site" / "x.py").read_text() == "x = 1\n"
    bad = _archive(tmp_path / "bad.tar.xz", {"../escaped.txt": b"no"})
    with pytest.raises(tarfile.OutsideDestinationError):
        smoke_host.unpack(bad, tmp_path / "work2")
    assert not (tmp_path / "escaped.txt").exists()


def test_an_archive_without_the_smokes_packages_is_refused(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "a.tar.xz", {"other/x.py": b""})
    digest = smoke_host.sha256_of(archive)
    code, summary, _ = _command(tmp_path, "--archive", str(archive), "--sha256", digest)
    assert code == smoke_host.EXIT_BEFORE_SMOKE
    assert "codefu-smoke/site: not in the archive" in summary["steps"]["archive"]["error"]


def test_a_smoke_that_fails_at_once_is_reported_by_its_last_line(tmp_path: Path) -> None:
    """A Python without the smoke's packages (no --archive on a bare host): the smoke step's
    error is the smoke's own last line, not an empty one."""
    python = tmp_path / "bin" / "python3"
    python.parent.mkdir()
    python.write_text("#!/bin/sh\necho Traceback\necho 'ModuleNotFoundError: no x'\nexit 1\n")
    python.chmod(0o755)
    code, summary, _ = _command(tmp_path, "--python", str(python))
    assert code == 1
    smoke = summary["steps"]["smoke"]
    assert smoke["ok"] is False
    assert smoke["error"] == "exit 1: ModuleNotFoundError: no x"


def test_the_watchdog_ends_a_smoke_past_its_deadline_and_the_files_are_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A smoke that does not stop at its deadline (a hang) is ended with its process group once
    the grace is over: exit 124, the files still written. (The constants shortened.)"""
    python = tmp_path / "bin" / "python3"
    python.parent.mkdir()
    python.write_text('#!/bin/sh\n[ "$2" = pip ] && exit 0\nexec sleep 600\n')
    python.chmod(0o755)
    monkeypatch.setattr(smoke_host, "RESERVE_S", 0.0)
    monkeypatch.setattr(smoke_host, "SMOKE_GRACE_S", 1.0)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    out = tmp_path / "out"
    argv = ["--out", str(out), "--work", str(tmp_path / "work"), "--budget", "2"]
    assert smoke_host.main([*argv, "--python", str(python)]) == smoke_host.EXIT_WATCHDOG
    summary = json.loads((out / smoke_host.SUMMARY).read_text())
    assert summary["steps"]["smoke"]["error"] == "exit 124: ended by the watchdog"
    assert summary["exit"] == smoke_host.EXIT_WATCHDOG
    assert {p.name for p in out.iterdir()} == set(smoke_host.OUT_FILES) - {
        smoke_host.TABLE,  # the stand-in smoke writes neither
        smoke_host.PHASES,
        smoke_host.PROCESSES,  # no sample in its 3 s (one every 5 s on a CPU)
    }


# A stand-in nvidia-smi answering the queries the command makes, in the real one's format.
FAKE_SMI = """#!/bin/sh
case "$*" in
  "-L") echo "GPU 0: NVIDIA H200 (UUID: GPU-0)" ;;
  *query-compute-apps*) printf '4242, 1234\\n4343, 567\\n' ;;
  *memory.reserved*) echo "0, NVIDIA H200, 143771, 614, 1, 143155, 580.159.04" ;;
  *query-gpu=memory.used*) echo "1801" ;;
  *) exit 2 ;;
esac
"""


@pytest.fixture
def fake_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    smi = tmp_path / "bin" / "nvidia-smi"
    smi.parent.mkdir()
    smi.write_text(FAKE_SMI)
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{smi.parent}:/usr/bin:/bin")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


@pytest.mark.usefixtures("fake_smi")
def test_the_gpu_readings_parse_what_nvidia_smi_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    """The GPU steps run only on a GPU host: their nvidia-smi readings are checked here on a
    stand-in, and their Python snippets compile."""
    assert smoke_host.gpu_listed() == ["GPU 0: NVIDIA H200 (UUID: GPU-0)"]
    (row,) = smoke_host.smi_memory()["gpus"]
    assert row == {
        "index": "0", "name": "NVIDIA H200", "total": "143771", "reserved": "614", "used": "1",
        "free": "143155", "driver_version": "580.159.04",
    }  # fmt: skip
    monkeypatch.setitem(sys.modules, "pynvml", None)  # no NVML binding: nvidia-smi's figures
    used, processes = smoke_host.gpu_process_reader()()
    assert used == {"smi": 1801 * 2**20}
    assert processes == [(4242, 1234 * 2**20), (4343, 567 * 2**20)]
    for snippet in (smoke_host.NVML_SNIPPET, smoke_host.CONTEXT_SNIPPET):
        compile(snippet, "snippet", "exec")
