"""The self-check flags a client that fell behind, and only such a client."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from rich.console import Console

from agentload.engines.tokenizer import default_tokenizer_path
from agentload.files import read_json, write_json_atomic
from agentload.measure.selfcheck import (
    CPU_SHARE_LIMIT,
    LAG_P99_LIMIT_S,
    SEND_DELAY_P99_LIMIT_S,
    SelfCheck,
    combine,
    judge,
)
from agentload.report.html import write_report
from agentload.report.load import load_view
from agentload.run.execute import Execution, execute
from agentload.run.search_settings import SearchSettings
from agentload.target.deployment import TargetOptions
from bench.mock import MockServer
from tests.scale.conftest import FAST_WORKLOAD

PROBE_S = 0.6
BLOCK_S = 0.08
"""Each block holds the event loop this long: far past the lag limit."""


async def measure(block_every_s: float | None) -> SelfCheck:
    """Run the self-check for PROBE_S while (optionally) a callback blocks the loop."""
    check = SelfCheck(interval_s=0.01)
    loop = asyncio.get_running_loop()
    handles = []
    if block_every_s is not None:
        t = block_every_s
        while t < PROBE_S:
            handles.append(loop.call_later(t, time.sleep, BLOCK_S))
            t += block_every_s
    check.start()
    await asyncio.sleep(PROBE_S)
    await check.stop()
    for handle in handles:
        handle.cancel()
    return check


@pytest.mark.slow
async def test_a_blocked_event_loop_is_flagged() -> None:
    figures = (await measure(block_every_s=0.1)).figures()
    assert not figures.ok
    assert figures.loop_lag_max_s is not None and figures.loop_lag_max_s >= BLOCK_S * 0.8
    assert any("event-loop lag" in note for note in figures.notes)


HEALTHY_TRIES = 3
"""A loaded machine can deschedule this process for tens of ms at any moment, which the check
rightly flags; a healthy loop passes in one of this many 0.6 s measurements."""


@pytest.mark.slow
async def test_a_healthy_event_loop_is_not_flagged() -> None:
    for _ in range(HEALTHY_TRIES):
        figures = (await measure(block_every_s=None)).figures()
        if figures.ok:
            break
    assert figures.lag_samples > 10
    assert figures.loop_lag_p99_s is not None and figures.loop_lag_p99_s < LAG_P99_LIMIT_S
    assert figures.ok, figures.notes


def test_each_limit_is_judged_and_named() -> None:
    fine = judge([0.001] * 100, [0.002] * 100, cpu_s=1.0, wall_s=10.0)
    assert fine.ok and not fine.notes
    late_sends = judge([0.001] * 100, [SEND_DELAY_P99_LIMIT_S * 2] * 100, cpu_s=1.0, wall_s=10.0)
    assert not late_sends.ok and "send delay" in late_sends.notes[0]
    busy = judge([0.001] * 100, [], cpu_s=CPU_SHARE_LIMIT * 10 + 0.5, wall_s=10.0)
    assert not busy.ok and "CPU" in busy.notes[0]
    merged = combine([fine, busy])
    assert not merged.ok and merged.processes == 2
    assert merged.cpu_share == busy.cpu_share and merged.notes[0].startswith("worker 1:")


@pytest.mark.slow
def test_every_run_records_its_self_check(mock_server: MockServer, tmp_path: Path) -> None:
    settings = SearchSettings.for_run(4, 2.0, ramp_s=0.2, settle_s=0.5, drain_s=2.0)
    request = Execution(
        workload=FAST_WORKLOAD,
        search=settings,
        target=TargetOptions(
            url=mock_server.url, model="mock", tokenizer=str(default_tokenizer_path())
        ),
        out=tmp_path / "run",
        label="selfcheck",
    )
    execute(request, console=Console(quiet=True))
    summary = read_json(tmp_path / "run" / "summary.json")
    check = summary["selfcheck"]
    assert check["lag_samples"] > 10 and check["sends"] > 4
    assert check["send_delay_p99_s"] is not None and check["cpu_share"] is not None
    assert summary["client_ok"] == check["ok"]
    # A client that fell behind is flagged in the HTML report, with the reason.
    flagged = {**summary, "client_ok": False}
    flagged["selfcheck"] = {**check, "ok": False, "notes": ["client CPU 97% of a core > 90%"]}
    write_json_atomic(tmp_path / "run" / "summary.json", flagged)
    page = write_report(load_view(tmp_path / "run")).read_text()
    assert "fell behind its schedule" in page and "client CPU 97% of a core" in page
