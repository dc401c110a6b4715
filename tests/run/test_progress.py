"""Live progress never holds up the load, even when nobody reads the terminal, and tells how far
along a search is: the probe, its window, each tier's bracket, the time spent and left."""

from __future__ import annotations

import io
import threading
import time

import pytest
from rich.console import Console

from agentload.results.tiers import Tier
from agentload.run import progress
from agentload.run.messages import Counters
from agentload.run.progress import (
    LIVE_REFRESH_PER_S,
    PROGRESS_BACKLOG,
    LiveProgress,
    ProgressBoard,
    progress_display,
    progress_printer,
)
from agentload.run.search_settings import SearchSettings
from agentload.search.plans import BISECT, DEFAULT_PLAN, choose, remaining_probes
from tests.search.curves_fake import limit, observed, probe

CALLS = 50
CALL_BUDGET_S = 0.5
"""All the calls together: each only formats a line and queues it."""


class StuckTerminal:
    """A terminal that stops reading: every write waits until `release` is set."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.lines: list[str] = []

    def write(self, text: str) -> int:
        self.release.wait()
        self.lines.append(text)
        return len(text)

    def flush(self) -> None:
        pass


def _progress(k: int) -> tuple[float, Counters]:
    counters = Counters(
        agents_started=4,
        in_flight=2,
        calls=k,
        errors=0,
        output_tokens=100 * k,
        prompt_tokens=1000 * k,
    )
    return float(k + 1), counters


def test_a_terminal_that_stops_reading_does_not_block_the_caller() -> None:
    terminal = StuckTerminal()
    show = progress_printer(Console(file=terminal, width=200))

    def caller() -> None:
        for k in range(CALLS):
            show(*_progress(k))

    thread = threading.Thread(target=caller, daemon=True)
    thread.start()
    thread.join(CALL_BUDGET_S)  # a caller blocked by the terminal would still be waiting
    stuck = thread.is_alive()
    terminal.release.set()
    assert not stuck, f"{CALLS} progress calls did not return in {CALL_BUDGET_S} s"
    deadline = time.monotonic() + 5
    while len(terminal.lines) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    printed = "".join(terminal.lines)
    # The first line, and what fitted the backlog, got through once the terminal read again;
    # the rest were dropped rather than waited for.
    assert "calls 0 " in printed
    assert printed.count("in flight") <= PROGRESS_BACKLOG + 1


# --- how far along: the board, the estimate, the live display ---------------------------------


class FakeClock:
    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


TIERS = (
    Tier(name="fast", output_speed_floor_tokens_per_s=60.0, ttft_ceiling_s=1.0),
    Tier(name="slow", output_speed_floor_tokens_per_s=20.0, ttft_ceiling_s=5.0),
)
SETTINGS = SearchSettings(
    tiers=TIERS, max_agents=128, window_s=60.0, max_window_s=180.0, settle_s=30.0, ramp_s=10.0
)


ESTIMATE_SLACK = 5
"""Probes an estimate after the first probe may be off by (the plan is run against a guess)."""


def true_probes(plan: str) -> dict[int, object]:
    """The probes the plan takes on the made-up deployment."""
    found: dict[int, object] = {}
    context = SETTINGS.plan_context()
    while (choice := choose(plan, observed(found, TIERS), context)) is not None:
        found[choice.agents] = probe(choice.agents, TIERS, index=len(found))
    return found


@pytest.mark.parametrize("plan", [DEFAULT_PLAN, BISECT])
def test_the_estimate_of_probes_left_is_near_what_the_plan_takes(plan: str) -> None:
    assert [limit(t) for t in TIERS] == [17, 100]  # the answers the plans look for
    context = SETTINGS.plan_context()
    done = list(true_probes(plan).items())
    first = dict(done[:1])
    estimate = remaining_probes(plan, observed(first, TIERS), context)
    assert abs(estimate - (len(done) - 1)) <= ESTIMATE_SLACK
    assert remaining_probes(plan, observed(dict(done), TIERS), context) == 0


def test_the_board_says_the_probe_its_window_the_brackets_and_the_time_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = FakeClock(1000.0)
    monkeypatch.setattr(progress.clock, "now", now)
    board = ProgressBoard(SETTINGS, started_at=1000.0)
    assert board.stage_words(now()) == "starting"
    board.start_probe(0, 1)
    assert board.stage_words(now()) == "probe 0: 1 agent, ramping up"
    board.settling(1040.0)
    assert board.stage_words(now()) == "probe 0: 1 agent, settling (40 s to the window)"
    now.t = 1040.0
    board.measuring(1040.0, 60.0, 180.0)
    now.t = 1052.5
    assert board.stage_words(now()) == "probe 0: 1 agent, measuring 12.5 / 60 s (up to 180 s)"
    now.t = 1110.0
    assert board.stage_words(now()) == (
        "probe 0: 1 agent, measuring 70.0 s, extended past 60 s while a verdict is inside the "
        "noise (up to 180 s)"
    )
    now.t = 1100.0
    board.finish_probe([probe(1, TIERS, probe_s=100.0)])
    assert board.tier_words() == "fast 1..?  slow 1..?"
    assert board.remaining is not None and board.remaining > 0
    left = board.left_s(now())
    assert left == pytest.approx(board.remaining * 100.0)  # the one probe so far took 100 s
    assert board.time_words(now()).startswith("1:40 spent, ~")
    board.start_probe(1, 2)
    now.t = 1130.0
    assert board.left_s(now()) == pytest.approx(70.0 + (board.remaining - 1) * 100.0)


def _eight_gpus_after_one_probe(
    monkeypatch: pytest.MonkeyPatch,
) -> tuple[ProgressBoard, FakeClock]:
    """A board of an 8-GPU search whose first probe (1 agent) took 100 s, at t=1100."""
    now = FakeClock(1000.0)
    monkeypatch.setattr(progress.clock, "now", now)
    board = ProgressBoard(SETTINGS, started_at=1000.0, gpus=8)
    board.start_probe(0, 1)
    now.t = 1100.0
    board.finish_probe([probe(1, TIERS, probe_s=100.0)])
    return board, now


def test_with_gpus_the_board_says_the_gpu_time_spent_and_to_go(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    board, now = _eight_gpus_after_one_probe(monkeypatch)
    board.start_probe(1, 2)
    now.t = 1150.0
    assert board.remaining is not None
    to_go = board.left_s(now()) * 8
    words = board.time_words(now())
    assert "; GPU time 0.333 GPU-h spent" in words  # (100 s + the current 50 s) x 8 GPUs
    assert f"~{progress.gpu_time(to_go)} to go" in words
    assert "GPU" not in ProgressBoard(SETTINGS, started_at=1000.0).time_words(now())


def test_after_each_probe_the_search_accounts_for_its_gpu_time_and_what_remains(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    board, now = _eight_gpus_after_one_probe(monkeypatch)
    assert board.remaining is not None and board.remaining > 0
    words = board.cost_words(now())
    assert words.startswith("search so far 100 s of probes (0.222 GPU-h); ")
    assert f"~{board.remaining} probes to go" in words
    assert f"(~{progress.gpu_time(board.remaining * 100.0 * 8)}) more (estimate)" in words
    done = list(true_probes(DEFAULT_PLAN).items())
    board.finish_probe([p for _, p in done])
    assert board.cost_words(now()).endswith("; every tier settled")
    without = ProgressBoard(SETTINGS, started_at=1000.0)
    without.finish_probe([probe(1, TIERS, probe_s=100.0)])
    assert "GPU" not in without.cost_words(now())


def test_a_plain_runs_time_left_is_its_length_left(monkeypatch: pytest.MonkeyPatch) -> None:
    now = FakeClock(1030.0)
    monkeypatch.setattr(progress.clock, "now", now)
    board = ProgressBoard(SearchSettings.for_run(4, 90.0), started_at=1000.0)
    board.start_probe(0, 4)
    assert board.left_s(now()) == pytest.approx(60.0)
    assert board.stage_words(now()).startswith("run: 4 agents")


@pytest.mark.slow
def test_on_a_terminal_the_display_is_live_and_in_a_pipe_it_is_lines() -> None:
    board = ProgressBoard(SETTINGS, started_at=progress.clock.now())
    board.start_probe(3, 8)
    terminal = io.StringIO()
    with progress_display(Console(file=terminal, force_terminal=True, width=100), board) as show:
        assert isinstance(getattr(show, "__self__", None), LiveProgress)
        show(*_progress(1))
        time.sleep(1.0 / LIVE_REFRESH_PER_S + 0.2)
    assert "probe 3: 8 agents" in terminal.getvalue()
    pipe = io.StringIO()
    with progress_display(Console(file=pipe, width=200), board) as show:
        show(*_progress(1))
        deadline = time.monotonic() + 5
        while "in flight" not in pipe.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
    assert "probe 3: 8 agents, ramping up | agents 4  in flight 2" in pipe.getvalue()


def test_simulated_time_is_said_as_simulated_and_gpu_time_is_in_one_unit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A simulated search's clock is virtual: its spans never read as wall time (a 21 s run
    said `~25:31 more`), and GPU time reads in GPU-hours however small (it switched between
    `~3,035 GPU-s` and `~3.4 GPU-h`)."""
    board, now = _eight_gpus_after_one_probe(monkeypatch)
    board.simulated = True
    words = board.cost_words(now())
    assert words.startswith("search so far 100 s of simulated probes (0.222 GPU-h); ")
    assert "of simulated time (~" in words and "GPU-s" not in words
    assert "1:40 of simulated time spent" in board.time_words(now())
    assert (
        progress.probe_cost_words(90.0, 8, True) == "  |  cost 90 s of simulated time (0.200 GPU-h)"
    )
    assert (
        progress.gpu_time(3_035.0) == "0.843 GPU-h" and progress.gpu_time(12_240.0) == "3.40 GPU-h"
    )


def test_in_a_pipe_progress_is_a_log_line_per_state_change_never_wrapped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """In a pipe (or a log) a line when the probe's state changes, or every 30 s, each one
    physical line however narrow the width: not a line every 2 s wrapped at the edge."""
    now = FakeClock(1000.0)
    monkeypatch.setattr(progress.clock, "now", now)
    pipe = io.StringIO()
    board = ProgressBoard(SETTINGS, started_at=1000.0)
    show = progress_printer(Console(file=pipe, width=40), board)
    board.start_probe(0, 4)
    for k in range(10):  # ten snapshots while it ramps: one line
        now.t += 2.0
        show(*_progress(k))
    board.settling(now.t + 30.0)  # told by the search: a line, between snapshots
    now.t += 31.0
    board.measuring(now.t, 60.0, 180.0)
    show(*_progress(11))
    deadline = time.monotonic() + 5
    while pipe.getvalue().count("\n") < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    lines = pipe.getvalue().splitlines()
    assert [line.split("probe 0: 4 agents, ")[1].split(" ")[0] for line in lines] == [
        "ramping",
        "settling",
        "measuring",
    ]
    assert lines[0].startswith("0:02  probe 0") and len(lines[0]) > 40  # one line, not wrapped


def test_a_tier_settled_at_the_cap_reads_as_its_answer_does() -> None:
    """`tps20 done: 64..?` read as if its upper end were still sought: it is `64+`."""
    settings = SearchSettings(tiers=TIERS, max_agents=2, window_s=60.0, settle_s=30.0)
    board = ProgressBoard(settings, started_at=1000.0)
    board.finish_probe([probe(1, TIERS, index=0), probe(2, TIERS, index=1)])
    assert board.tier_words() == "fast done: 2+  slow done: 2+"
