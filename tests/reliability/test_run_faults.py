"""Whole runs against a misbehaving server: every fault recorded with its cause, counted per
window in the summary, and the run never crashes."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import orjson
import pytest

from agentload.cli import main
from agentload.client import errors
from agentload.engines.tokenizer import default_tokenizer_path
from agentload.measure.verdict import DEFAULT_MAX_ERROR_RATE
from agentload.results.record import load_records
from tests.reliability.conftest import SMALL_WORKLOAD, PlannedServer, StartServer, write_usage_log

REQUEST_TIMEOUT_S = 1.0
"""Per-request limit of the fault run: a stalled stream is cut off after this."""

FAULTS: list[tuple[dict[str, Any], str | None]] = [
    ({}, None),
    ({"mode": "status", "status": 429}, errors.HTTP_STATUS),
    ({"mode": "status", "status": 500}, errors.HTTP_STATUS),
    ({"mode": "status", "status": 503}, errors.HTTP_STATUS),
    ({"mode": "reset"}, errors.DISCONNECTED),
    ({"mode": "truncated"}, errors.DISCONNECTED),
    ({"mode": "bad_json"}, errors.MALFORMED),
    ({"mode": "no_data_prefix"}, errors.MALFORMED),
    ({"mode": "no_usage"}, errors.MISSING_USAGE),
    ({"mode": "cut_clean"}, errors.INCOMPLETE),
    ({"mode": "error_event"}, errors.STREAM_ERROR),
    ({"mode": "stall", "stall_s": 5.0}, errors.TOTAL_TIMEOUT),
    ({"mode": "split", "text": "é日🚀 ", "split_bytes": 5, "tokens": 6}, None),
    ({"mode": "no_done"}, None),
    ({"mode": "crlf"}, None),
]
"""Each fault the server plays, and the error kind its record must carry (None: a tolerated
shape, recorded as a success). UTF-8 split across reads and a missing [DONE] are tolerated."""

EXPECTED = {orjson.dumps(fake, option=orjson.OPT_SORT_KEYS): kind for fake, kind in FAULTS}


def _expected_kind(fake: dict[str, Any]) -> str | None:
    planned = {k: v for k, v in fake.items() if k not in ("first_ms", "gap_ms", "after")}
    return EXPECTED[orjson.dumps(planned, option=orjson.OPT_SORT_KEYS)]


def run_args(url: str, out: Path, *extra: str) -> list[str]:
    return [
        "run", "--url", url, "--model", "fake-model",
        "--tokenizer", str(default_tokenizer_path()), "--workload", SMALL_WORKLOAD,
        "--out", str(out), *extra,
    ]  # fmt: skip


@pytest.mark.slow
def test_a_run_against_a_misbehaving_server_records_every_fault(
    planned_server: StartServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = planned_server(plan=[fake for fake, _ in FAULTS])
    out = tmp_path / "faults"
    args = run_args(server.base_url, out, "--agents", "4", "--duration", "7", "--settle", "1")
    code = main([*args, "--request-timeout", str(REQUEST_TIMEOUT_S)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "Traceback" not in captured.err + captured.out

    records = load_records(out / "records.jsonl").records
    plan = server.plan()
    seen: set[str | None] = set()
    for record in records:
        fake = plan[record.id]
        expected = _expected_kind(fake)
        assert record.error == expected, (fake, record.error, record.error_detail)
        if expected is not None:
            assert record.error_detail, record
        if fake.get("mode") == "status":
            assert record.status == fake["status"]
        if expected == errors.TOTAL_TIMEOUT:
            assert record.t_done - record.t_send == pytest.approx(REQUEST_TIMEOUT_S, abs=0.5)
        seen.add(expected)
    assert seen == {kind for _, kind in FAULTS}, "every fault came up at least once"

    summary = orjson.loads((out / "summary.json").read_bytes())
    assert summary["complete"] is True
    probe = summary["probes"][0]
    start, end = probe["window_start"], probe["window_end"]
    closed = [r for r in records if start <= r.t_done < end]
    failed = [r for r in closed if not r.ok]
    assert probe["requests_failed"] == len(failed) > 0
    assert probe["requests_ok"] == len(closed) - len(failed)
    assert probe["error_rate"] == pytest.approx(len(failed) / len(closed))
    by_kind: dict[str, int] = {}
    for r in failed:
        by_kind[r.error] = by_kind.get(r.error, 0) + 1  # type: ignore[index]
    assert probe["errors_by_kind"] == by_kind
    assert "errors by kind" in captured.out


def test_connection_refused_is_one_line_and_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as sock:  # a port that was free a moment ago, nothing listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    args = run_args(f"http://127.0.0.1:{port}/v1", tmp_path / "refused")
    code = main([*args, "--agents", "1", "--duration", "2"])
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert (
        f"cannot reach the server at http://127.0.0.1:{port}/v1 (--url) while listing its "
        "models (GET /v1/models): connection refused"
    ) in lines[0]
    assert "Traceback" not in err


ONE_IN_FOUR_FAILS = [{}, {}, {}, {"mode": "status", "status": 500}]
EASY_TIER = "easy:1:30"
"""A tier the fake server meets by far on latency: only its errors can fail it."""


def _search(server: PlannedServer, out: Path, *extra: str) -> dict[str, Any]:
    args = [
        "search", "--url", server.base_url, "--model", "fake-model",
        "--tokenizer", str(default_tokenizer_path()),
        "--workload", write_usage_log(out.with_suffix(".jsonl")), "--tier", EASY_TIER,
        "--max-agents", "2", "--settle", "0.2", "--window", "1.5", "--max-window", "1.5",
        "--ramp", "0", "--min-samples", "3", "--out", str(out), *extra,
    ]  # fmt: skip
    assert main(args) == 0
    return orjson.loads((out / "summary.json").read_bytes())


@pytest.mark.slow
def test_a_probe_over_the_error_rate_threshold_fails_its_tier(
    planned_server: StartServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A quarter of the calls fail: every probe fails the tier although its latencies pass,
    and the same search with a 50% threshold passes it."""
    server = planned_server(plan=ONE_IN_FOUR_FAILS)
    strict = _search(server, tmp_path / "strict")
    (probe,) = strict["probes"]
    assert probe["error_rate"] > DEFAULT_MAX_ERROR_RATE
    assert probe["errors_by_kind"] == {errors.HTTP_STATUS: probe["requests_failed"]}
    assert probe["p25_output_tokens_per_s"] >= 1 and probe["p95_ttft_s"] <= 30  # fast enough
    assert probe["verdicts"] == {"easy": "fail"}
    assert strict["tiers"][0]["max_agents"] is None

    lenient = _search(server, tmp_path / "lenient", "--max-error-rate", "0.5")
    assert all(p["verdicts"] == {"easy": "pass"} for p in lenient["probes"])
    assert lenient["tiers"][0]["max_agents"] == 2
    capsys.readouterr()
