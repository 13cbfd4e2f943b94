"""The stage clock an ingest reports its time by: a nested stage counts to itself only, a
thread started with the run's context counts into the run, and outside a run nothing counts."""

from __future__ import annotations

import contextvars
import threading
import time

import pytest

from config.stageclock import StageClock, clock_for_run, stage


def test_a_nested_stage_counts_to_itself_and_pauses_the_outer_one() -> None:
    clock = StageClock()
    with clock_for_run(clock):
        with stage("write rows"):
            time.sleep(0.05)
            with stage("keys"):
                time.sleep(0.2)
            time.sleep(0.05)
    seconds = clock.totals()
    assert 0.19 <= seconds["keys"] <= 0.4
    # The outer stage holds its own 0.1 s, not the 0.3 s it was open for.
    assert 0.09 <= seconds["write rows"] < 0.19


def test_a_thread_started_with_the_runs_context_counts_into_the_run() -> None:
    clock = StageClock()

    def write() -> None:
        with stage("write rows"):
            time.sleep(0.05)

    with clock_for_run(clock):
        context = contextvars.copy_context()
        worker = threading.Thread(target=context.run, args=(write,))
        worker.start()
        with stage("encode"):
            time.sleep(0.05)
        worker.join()
    assert clock.totals()["write rows"] >= 0.04 and clock.totals()["encode"] >= 0.04


def test_nothing_counts_outside_a_run_and_an_unknown_stage_is_refused() -> None:
    clock = StageClock()
    with stage("encode"):
        time.sleep(0.01)
    assert set(clock.totals().values()) == {0.0}
    with clock_for_run(clock), pytest.raises(ValueError, match="unknown stage 'encoding'"):
        with stage("encoding"):
            pass
