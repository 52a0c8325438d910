"""No silent phase in nox: an environment install says what it installs and how long it
takes the first time, then prints a line every few seconds until it ends."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from repo import ROOT

sys.path.insert(0, str(ROOT))
import noxfile

PROBE_NOXFILE = """
import sys, time
sys.path.insert(0, {root!r})
import nox
from noxfile import heartbeat

@nox.session(python=False)
def probe(session):
    with heartbeat(session, "waiting", every=0.5):
        time.sleep(1.8)
    session.log("done")
"""


def test_a_long_step_prints_a_line_every_few_seconds(tmp_path: Path) -> None:
    noxfile_path = tmp_path / "noxfile.py"
    noxfile_path.write_text(PROBE_NOXFILE.format(root=str(ROOT)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOX")}
    done = subprocess.run(
        [sys.executable, "-m", "nox", "-f", str(noxfile_path), "-s", "probe"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    beats = [line for line in done.stderr.splitlines() if "... still waiting (" in line]
    assert len(beats) >= 2, done.stderr
    # The beats stop with the step: none after its end.
    assert done.stderr.rindex("still waiting") < done.stderr.index("nox > done")


def test_each_install_names_what_it_brings_and_its_first_time() -> None:
    train = noxfile.editables(trainer="train", launcher="submit")
    tests = noxfile.editables(trainer="test,train")
    reward = noxfile.editables(trainer="test")
    data = noxfile.editables(data="")
    assert "training stack" in noxfile.install_summary(tuple(train))
    assert "training stack" in noxfile.install_summary(tuple(tests))
    assert "reward and judge stack" in noxfile.install_summary(tuple(reward))
    for requirements in (train, tests, reward, data):
        assert "the first time" in noxfile.install_summary(tuple(requirements))
