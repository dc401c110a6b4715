"""`agentload export`: records, probes and tiers as CSV and Parquet tables."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from agentload.cli import main
from agentload.results.load import load_results
from tests.report.builder import build_results


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_results(tmp_path_factory.mktemp("results") / "search").path


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_csv_export_writes_one_row_per_record_probe_and_tier(
    results: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(results), "--out", str(tmp_path)]) == 0
    files = load_results(results)
    assert files.summary is not None
    records = _csv(tmp_path / "records.csv")
    probes = _csv(tmp_path / "probes.csv")
    tiers = _csv(tmp_path / "tiers.csv")
    assert (len(records), len(probes), len(tiers)) == (
        len(files.records),
        len(files.summary.probes),
        len(files.summary.tiers),
    )
    first = files.records[0]
    assert records[0]["id"] == first.id
    assert float(records[0]["latency_s"]) == pytest.approx(first.t_done - first.t_send)
    assert json.loads(records[0]["gaps_s"]) == list(first.gaps_s)
    probe = files.summary.probes[0]
    assert int(probes[0]["agents"]) == probe.agents
    assert {k for k in probes[0] if k.startswith("verdict.")} == {
        f"verdict.{name}" for name in probe.verdicts
    }
    assert tiers[0]["name"] == files.summary.tiers[0].name
    assert "records.csv" in capsys.readouterr().out


def test_parquet_export_keeps_types_and_lists(results: Path, tmp_path: Path) -> None:
    assert main(["export", str(results), "--format", "parquet", "--out", str(tmp_path)]) == 0
    records = pq.read_table(tmp_path / "records.parquet")
    files = load_results(results)
    assert records.num_rows == len(files.records)
    assert records.column("t_send").type == "double"
    assert records.column("gaps_s").to_pylist()[0] == list(files.records[0].gaps_s)
    assert files.summary is not None
    assert pq.read_table(tmp_path / "tiers.parquet").num_rows == len(files.summary.tiers)


def test_export_defaults_to_an_export_folder_inside_the_results(results: Path) -> None:
    assert main(["export", str(results)]) == 0
    assert (results / "export" / "probes.csv").is_file()


def test_exporting_a_missing_directory_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(tmp_path / "nowhere")]) == 2
    assert capsys.readouterr().err.strip().endswith("no such results directory")
