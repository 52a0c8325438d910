"""The Ray judge pool's metrics on a local cluster's metrics endpoint, its window and audit."""

from __future__ import annotations

import json
import re
import socket
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from codefu_sandbox import CheckerConfig
from codefu_trainer.reward.config import RewardConfig, WorkerConfig
from codefu_trainer.reward.rules import JUDGE_ERROR
from codefu_trainer.reward.service import RewardService, run_blocking
from codefu_trainer.reward.step_metrics import step_metrics
from codefu_trainer.reward.worker import JudgeJob

from ..conftest import own_ray_cluster
from .problems import (
    COMPILE_ERROR_PROGRAM,
    DIFF_PROGRAM,
    SUM_PROGRAM,
    cpp_request,
    respond,
    sum_ground_truth,
)

pytestmark = [pytest.mark.ray, pytest.mark.slow]
ray = pytest.importorskip("ray")
pytest.importorskip("codefu_sandbox")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def metrics_port() -> Iterator[int]:
    port = _free_port()
    with own_ray_cluster(
        num_cpus=2,
        _metrics_export_port=port,
        _system_config={"metrics_report_interval_ms": 500},
    ):
        yield port


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return str(r.read().decode())


def _value(text: str, name: str, **tags: str) -> float | None:
    """The sum of a metric's samples whose labels include ``tags`` (None: no sample)."""
    total, found = 0.0, False
    for line in text.splitlines():
        m = re.match(rf"^{re.escape(name)}(\{{[^}}]*\}})? (\S+)$", line)
        if not m:
            continue
        labels = m.group(1) or ""
        if all(f'{k}="{v}"' in labels for k, v in tags.items()):
            total += float(m.group(2))
            found = True
    return total if found else None


def _dashboard_metrics() -> set[str]:
    dashboard = Path(__file__).parents[4] / "docs" / "grafana" / "judge.json"
    exprs = [t["expr"] for p in json.loads(dashboard.read_text())["panels"] for t in p["targets"]]
    return {n for e in exprs for n in re.findall(r"ray_codefu_judge_\w+", e)}


def test_pool_metrics_window_and_audit_on_a_local_cluster(
    metrics_port: int, tmp_path: Path
) -> None:
    config = RewardConfig(
        worker=WorkerConfig(cache_dir=str(tmp_path / "cache"), num_workers=2, audit_share=1.0)
    )
    truth = sum_ground_truth(n_private=3)
    responses = [
        respond(SUM_PROGRAM),
        respond(DIFF_PROGRAM),
        respond(SUM_PROGRAM),
        respond(COMPILE_ERROR_PROGRAM),
    ]
    service = RewardService(config)
    try:
        results = service.score(responses, [truth] * 4)
        assert service.drain_audits() >= 0
        window = service.take_window()
        stats = service.stats()
        # A judge that raises (here: a checker program that is gone when the job is
        # judged, so a checker it does not know) is a judge failure.
        gone = tmp_path / "no-such-checker"
        gone.write_text("#!/bin/sh\nexit 0\n")
        checker = CheckerConfig(str(gone))
        gone.unlink()
        bad = JudgeJob(SUM_PROGRAM, [("1 2\n", "3\n")], cpp_request(checker), 60)
        [failed] = run_blocking(service._pool.run_many([bad]))
        assert failed.failure == JUDGE_ERROR and "no-such-checker" in failed.detail
        # Ray's metrics agent exports what the pool actor recorded (reports every 0.5 s).
        wanted = {
            ("ray_codefu_judge_jobs_total", ()): 4.0,
            ("ray_codefu_judge_failures_total", (("kind", "JUDGE_ERROR"),)): 1.0,
            ("ray_codefu_judge_verdicts_total", (("verdict", "AC"),)): 1.0,
            ("ray_codefu_judge_verdicts_total", (("verdict", "CE"),)): 1.0,
            ("ray_codefu_judge_audits_total", ()): 3.0,
        }
        text = ""
        give_up = time.monotonic() + 90
        while time.monotonic() < give_up:
            text = _scrape(metrics_port)
            if all(_value(text, n, **dict(t)) == v for (n, t), v in wanted.items()):
                break
            time.sleep(1)
    finally:
        service.close()
    assert [r["verdict"] for r in results] == ["AC", "WA", "AC", "CE"]
    for (name, tags), value in wanted.items():
        assert _value(text, name, **dict(tags)) == value, (name, tags, text[-3000:])
    assert _value(text, "ray_codefu_judge_duplicates_total") == 1.0
    assert _value(text, "ray_codefu_judge_latency_seconds_count") == 4.0
    assert _value(text, "ray_codefu_judge_workers") == 2.0
    assert _value(text, "ray_codefu_judge_in_flight") == 0.0
    assert _value(text, "ray_codefu_judge_flips_total") in (None, 0.0)
    # Every series the Grafana dashboard charts is one the pool exports (flips: none yet).
    for name in _dashboard_metrics() - {"ray_codefu_judge_flips_total"}:
        assert _value(text, name) is not None, name
    # The window of this step: three submissions judged, one shared, each audited.
    assert (window["jobs"], window["duplicates"], window["audited"], window["flips"]) == (
        3,
        1,
        3,
        0,
    )
    assert window["cpus"] == 2.0 and window["queue_high_water"] >= 1
    assert stats["audits"] == 3 and stats["flips"] == 0
    m = step_metrics(results, window)
    assert m["judge/cpu_seconds"] > 0 and m["judge/wall_seconds"] > 0
    assert m["judge/wall_over_bound"] == pytest.approx(
        m["judge/wall_seconds"] / (m["judge/cpu_seconds"] / 2)
    )
