"""The ceiling a window's cache hit rate is compared with: what that window's own calls could
have reused (each its previous prompt and reply), from the records; the saved demo's every
window measured under it, though above the workload's whole-session rate."""

from __future__ import annotations

from agentload.measure.window import Window
from agentload.report.cache_ceiling import window_ceiling
from agentload.results.load import load_results
from agentload.results.record import RequestRecord
from tests.paths import REPO

DEMO = REPO / "bench" / "data" / "sim-validation" / "demo"


def _call(
    turn: int, prompt: int, cached: int, out: int, t: float, session: str = "a"
) -> RequestRecord:
    return RequestRecord(
        id=f"{session}-{turn}",
        agent=0,
        session=session,
        turn=turn,
        phase="probe-0",
        t_send=t,
        t_first=t + 0.1,
        t_last=t + 0.5,
        t_done=t + 0.5,
        gaps_s=(),
        intended_prompt_tokens=prompt,
        intended_output_tokens=out,
        prompt_tokens=prompt,
        cached_tokens=cached,
        completion_tokens=out,
        status=200,
    )


def test_a_call_could_reuse_its_previous_prompt_and_reply_and_a_first_call_what_was_served() -> (
    None
):
    calls = [
        _call(3, 1_000, 200, 50, 0.0),  # the agent's first call: counted as served (200)
        _call(4, 1_100, 1_000, 40, 2.0),  # could reuse 1,000 + 50 of its 1,100
        _call(5, 1_200, 1_100, 30, 4.0),  # could reuse 1,100 + 40
    ]
    ceiling = window_ceiling(calls, Window(0.0, 10.0))
    assert ceiling is not None and ceiling.calls == 3
    assert ceiling.with_replies == (200 + 1_050 + 1_140) / 3_300
    assert ceiling.prompts_only == (200 + 1_000 + 1_100) / 3_300
    late = window_ceiling(calls, Window(1.0, 10.0))  # the window sees only the later calls
    assert late is not None and late.with_replies == (1_050 + 1_140) / 2_300 > ceiling.with_replies


def test_every_window_of_the_saved_demo_measured_under_its_own_ceiling() -> None:
    """Verified on the saved demo (and the 2026-12-05 llama.cpp and vLLM demos): each window's
    rate lies under its calls' ceiling with replies, while windows late in sessions pass the
    workload's whole-session 96.5%."""
    files = load_results(DEMO)
    assert files.summary is not None
    workload = files.manifest["workload"]["theoretical_cache_hit_rate"]
    above_workload = 0
    for probe in files.summary.probes:
        ceiling = window_ceiling(files.records, Window(probe.window_start, probe.window_end))
        assert ceiling is not None and probe.cache_hit_rate is not None
        assert probe.cache_hit_rate <= ceiling.with_replies
        above_workload += probe.cache_hit_rate > workload
    assert above_workload  # the line the chart used to draw was no ceiling
