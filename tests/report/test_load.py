"""Reading results directories: finished, killed, torn, written by an older tool, or not one."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from agentload.errors import InputError
from agentload.measure.metrics import window_metrics
from agentload.measure.window import Window
from agentload.report.load import (
    SOURCE_PROBES,
    SOURCE_RECORDS,
    SOURCE_SUMMARY,
    STATUS_INCOMPLETE,
    STATUS_UNREADABLE,
    load_view,
)
from agentload.results.files import (
    MANIFEST_FILE,
    POWER_FILE,
    PROBES_FILE,
    RECORDS_FILE,
    SUMMARY_FILE,
)
from tests.report.builder import SETTLE_S, T0, build_results, build_run


def test_a_finished_search_reads_its_summary_probes_and_power(tmp_path: Path) -> None:
    built = build_results(tmp_path / "r")
    view = load_view(built.path)
    assert view.summary is not None and view.summary_problem is None
    assert view.status == "complete" and view.complete
    assert view.kind == "search"
    assert [p.source for p in view.points] == [SOURCE_SUMMARY] * len(built.probes)
    assert [p.figures for p in view.points] == sorted(built.probes, key=lambda p: p.agents)
    assert len(view.records) == built.records
    assert view.power and all(s.watts > 0 for s in view.power)
    assert view.gpus == 2 and view.model == "synthetic-model"
    assert view.notes == ()


def test_a_killed_search_reports_from_probes_and_drops_the_torn_line(tmp_path: Path) -> None:
    built = build_results(tmp_path / "r", summary=False, torn_line=True)
    view = load_view(built.path)
    assert view.summary is None and view.summary_missing
    assert view.status == STATUS_INCOMPLETE and not view.complete
    assert SUMMARY_FILE in (view.summary_problem or "")
    assert view.kind == "search"
    assert [p.source for p in view.points] == [SOURCE_PROBES] * len(built.probes)
    assert len(view.records) == built.records
    assert any("torn" in note for note in view.notes)


def test_a_killed_search_gets_provisional_tiers_from_its_probes(tmp_path: Path) -> None:
    finished = load_view(build_results(tmp_path / "done").path)
    killed = load_view(build_results(tmp_path / "killed", summary=False).path)
    assert not finished.tiers_provisional and killed.tiers_provisional
    assert finished.summary is not None
    assert [(t.name, t.max_agents, t.first_failing_agents) for t in killed.tiers] == [
        (t.name, t.max_agents, t.first_failing_agents) for t in finished.summary.tiers
    ]
    assert all(t.agents_per_mw is not None for t in killed.tiers if t.max_agents)


def test_a_killed_plain_run_is_measured_over_the_steady_state_from_manifest_times(
    tmp_path: Path,
) -> None:
    built = build_run(tmp_path / "r", agents=4, torn_line=True)
    view = load_view(built.path)
    assert view.status == STATUS_INCOMPLETE and view.kind == "run"
    window = view.run_window
    assert window is not None and window.description == "steady-state window"
    assert window.window.start == pytest.approx(T0 + SETTLE_S)
    (point,) = view.points
    assert point.source == SOURCE_RECORDS
    assert point.figures.agents == 4
    expected = built.probes[0]
    assert point.figures.total_tokens_per_s == pytest.approx(expected.total_tokens_per_s)
    assert point.figures.p25_output_tokens_per_s == pytest.approx(expected.p25_output_tokens_per_s)


def test_without_times_the_whole_run_as_the_records_cover_it_is_the_window(
    tmp_path: Path,
) -> None:
    built = build_run(tmp_path / "r", times=False)
    view = load_view(built.path)
    window = view.run_window
    assert window is not None and window.description.startswith("whole run")
    covering = Window.covering(view.records)
    assert window.window == covering
    metrics = window_metrics(view.records, covering)
    assert view.points[0].figures.total_tokens_per_s == pytest.approx(metrics.tokens_per_s.total)


def test_a_summary_not_matching_the_schema_is_said_in_one_line_and_records_speak(
    tmp_path: Path,
) -> None:
    built = build_run(tmp_path / "r", legacy_summary=True, agents=6)
    view = load_view(built.path)
    assert view.summary is None and not view.summary_missing
    assert view.status == STATUS_UNREADABLE
    problem = view.summary_problem or ""
    assert "\n" not in problem and "probes[0].index" in problem
    assert view.points[0].source == SOURCE_RECORDS and view.points[0].figures.agents == 6


def test_a_summary_that_is_not_json_is_unreadable_not_fatal(tmp_path: Path) -> None:
    built = build_results(tmp_path / "r")
    (built.path / SUMMARY_FILE).write_bytes(b'{"kind": "sea')
    view = load_view(built.path)
    assert view.status == STATUS_UNREADABLE and "not valid JSON" in (view.summary_problem or "")
    assert [p.source for p in view.points] == [SOURCE_PROBES] * len(built.probes)


def test_bad_probe_and_power_lines_are_skipped_with_a_note(tmp_path: Path) -> None:
    built = build_results(tmp_path / "r", summary=False)
    with open(built.path / PROBES_FILE, "ab") as f:
        f.write(b'{"agents": 0}\nnot json\n')
    with open(built.path / POWER_FILE, "ab") as f:
        f.write(b'{"t": 1, "watts": -5, "device_watts": [], "devices": []}\n')
    view = load_view(built.path)
    assert len(view.points) == len(built.probes)
    notes = " ".join(view.notes)
    assert PROBES_FILE in notes and POWER_FILE in notes and "not valid JSON" in notes


def test_a_missing_manifest_is_a_note_not_an_error(tmp_path: Path) -> None:
    built = build_results(tmp_path / "r")
    (built.path / MANIFEST_FILE).unlink()
    view = load_view(built.path)
    assert view.manifest == {} and view.model is None
    assert any(MANIFEST_FILE in note for note in view.notes)
    assert view.gpus == 2  # the summary still says


def test_a_summary_without_records_still_loads(tmp_path: Path) -> None:
    built = build_results(tmp_path / "r")
    (built.path / RECORDS_FILE).unlink()
    view = load_view(built.path)
    assert view.records == [] and len(view.points) == len(built.probes)
    assert any(RECORDS_FILE in note for note in view.notes)


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda p: None, "no such results directory"),
        (lambda p: p.write_text("x"), "not a directory"),
        (lambda p: p.mkdir(), "not a results directory"),
    ],
    ids=["missing", "a-file", "empty"],
)
def test_nothing_to_report_from_is_a_one_line_error(
    tmp_path: Path, make: Callable[[Path], object], reason: str
) -> None:
    path = tmp_path / "r"
    make(path)
    with pytest.raises(InputError) as caught:
        load_view(path)
    message = str(caught.value)
    assert reason in message and str(path) in message and "\n" not in message


def test_a_bad_record_in_the_middle_is_skipped_with_a_note(tmp_path: Path) -> None:
    built = build_run(tmp_path / "r")
    path = built.path / RECORDS_FILE
    lines = path.read_bytes().split(b"\n")
    lines[3] = orjson.dumps({"id": "x"})
    path.write_bytes(b"\n".join(lines))
    view = load_view(built.path)
    assert len(view.records) == built.records - 1
    assert any("skipped 1 bad line" in note for note in view.notes)
    assert not math.isnan(view.points[0].figures.total_tokens_per_s)


def test_a_probes_note_that_its_tiers_carry_is_said_once_under_the_probe(tmp_path: Path) -> None:
    built = build_results(tmp_path / "r")
    summary_file = built.path / SUMMARY_FILE
    summary = orjson.loads(summary_file.read_bytes())
    note = "decided inside the noise after 120 s: slow"
    probe = next(p for p in summary["probes"] if p["agents"] == summary["tiers"][0]["max_agents"])
    probe["notes"] = [note]
    for tier in summary["tiers"]:
        tier["notes"] = [note, f"{tier['name']}'s own note"]
    summary_file.write_bytes(orjson.dumps(summary))
    notes = load_view(built.path).report_notes()
    assert [n for n in notes if note in n] == [f"probe at {probe['agents']} agents: {note}"]
    assert all(f"tier {t['name']}: {t['name']}'s own note" in notes for t in summary["tiers"])
