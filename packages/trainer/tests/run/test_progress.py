"""codefu_trainer.run.progress: a line every few seconds of a long loop, and at its end."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from codefu_trainer.run.progress import Heartbeat, Progress


class Clock:
    """Time that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_line_when_the_interval_has_passed_with_elapsed_and_time_left() -> None:
    clock, out = Clock(), io.StringIO()
    progress = Progress("warm start", 300, every_s=5.0, clock=clock, out=out)
    clock.now += 4.0
    progress.update(40, loss=2.5)
    assert out.getvalue() == ""  # 4 s: too soon
    clock.now += 2.0
    progress.update(60, loss=1.25)
    assert out.getvalue() == "warm start: 60/300, loss 1.250, 6s elapsed, ~24s left\n"


def test_time_left_is_paced_by_the_steps_after_the_first() -> None:
    """The first step's one-off costs (10 s here, the others 1 s) do not inflate the estimate."""
    clock, out = Clock(), io.StringIO()
    progress = Progress("warm start", 300, every_s=5.0, clock=clock, out=out)
    clock.now += 10.0
    progress.update(1)
    for done in range(2, 7):
        clock.now += 1.0
        progress.update(done)
    assert out.getvalue().splitlines() == [
        "warm start: 1/300, 10s elapsed",  # no pace yet: no estimate
        "warm start: 6/300, 15s elapsed, ~294s left",  # 294 steps at 1 s, not 735 s
    ]


@given(st.lists(st.floats(min_value=0.0, max_value=30.0), min_size=1, max_size=60))
def test_no_silence_longer_than_the_interval_plus_one_step_and_the_end_is_shown(
    step_seconds: list[float],
) -> None:
    clock, out = Clock(), io.StringIO()
    total = len(step_seconds)
    progress = Progress("p", total, every_s=5.0, clock=clock, out=out)
    printed_at = [clock.now]
    for done, seconds in enumerate(step_seconds, start=1):
        clock.now += seconds
        before = out.getvalue().count("\n")
        progress.update(done)
        if out.getvalue().count("\n") > before:
            printed_at.append(clock.now)
        # Since the last line: at most the interval, plus the step that just ended.
        assert clock.now - printed_at[-1] < 5.0 or printed_at[-1] == clock.now
    assert out.getvalue().splitlines()[-1].startswith(f"p: {total}/{total},")


def test_heartbeat_names_the_phase_beats_while_it_runs_and_stops_after() -> None:
    import threading

    out = io.StringIO()
    beats = threading.Semaphore(0)

    class Counting(io.StringIO):
        def write(self, text: str) -> int:
            if "elapsed" in text:
                beats.release()
            return out.write(text)

    stream = Counting()
    with Heartbeat("starting Ray", every_s=0.01, out=stream):
        # Wait (no timing asserted) until two beats were printed inside the block.
        assert beats.acquire(timeout=60) and beats.acquire(timeout=60)
    lines = out.getvalue().splitlines()
    assert lines[0] == "starting Ray..." and len(lines) >= 3
    assert all(
        line.startswith("starting Ray: ") and line.endswith("s elapsed") for line in lines[1:]
    )
    with Heartbeat("step 1/2", every_s=0.01, out=stream) as beat:
        assert beats.acquire(timeout=60)
        beat.mark("step 2/2")
        while "step 2/2: " not in out.getvalue():  # later beats carry the new label
            assert beats.acquire(timeout=60)
    after = out.getvalue()
    with Heartbeat("next", every_s=60.0, out=stream):
        pass
    assert out.getvalue() == after + "next...\n"  # the first one's thread has ended
