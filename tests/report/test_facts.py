"""The report's Run facts (issue 33: a raw dump of about 150 keys, `engine.args [24 items]`
hiding the flags the README promises): the groups a reader wants first, the engine's command
line in full, the workload with its parameters, and every fact folded below; the header names
the workload's parameters."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import orjson
import pytest

from agentload.report.facts import fact_groups
from agentload.report.html import render_report
from agentload.report.load import load_view
from agentload.results.files import MANIFEST_FILE
from tests.paths import REPO
from tests.report.builder import build_results

DEMO = REPO / "bench" / "data" / "sim-validation" / "demo"
GROUPS = ["Engine", "Model", "Hardware", "Workload", "Power", "Search", "Tool"]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, object], str]:
    path = shutil.copytree(DEMO, tmp_path_factory.mktemp("demo") / "demo")
    manifest = orjson.loads((path / MANIFEST_FILE).read_bytes())
    return manifest, render_report(load_view(path))


def _rows(manifest: dict[str, object]) -> dict[str, dict[str, str]]:
    return {name: dict(rows) for name, rows in fact_groups(manifest)}


def test_the_groups_a_reader_wants_come_first_and_the_dump_folded_below(
    demo: tuple[dict[str, object], str],
) -> None:
    manifest, document = demo
    assert [name for name, _ in fact_groups(manifest)] == GROUPS
    facts = document[document.index("<h2>Run facts</h2>") :]
    places = [facts.index(f'<th colspan="2">{name}</th>') for name in GROUPS]
    assert places == sorted(places)
    assert places[-1] < facts.index("<details><summary>Every fact in manifest.json")


def test_the_engines_command_line_is_there_in_full(demo: tuple[dict[str, object], str]) -> None:
    manifest, _ = demo
    engine = manifest["engine"]
    assert isinstance(engine, dict)
    rows = _rows(manifest)
    assert shlex.split(rows["Engine"]["command line"]) == engine["args"]
    assert rows["Engine"]["calls at once, KV"].startswith("12 calls, 221,184 tokens of KV")
    assert rows["Model"]["parameters"] == "4,196,608"
    assert rows["Hardware"]["engine on"] == "CPU, 1 thread"
    assert rows["Power"]["source"].startswith("assumed 2.2 W")
    assert rows["Tool"]["agentload"] == "0.1.0"


def test_the_workload_is_named_with_its_parameters_in_the_facts_and_the_header(
    demo: tuple[dict[str, object], str],
) -> None:
    manifest, document = demo
    workload = _rows(manifest)["Workload"]
    assert workload["source"] == "synthetic:agentic-coding"
    assert workload["· mean_input"] == "4000" and workload["· max_tool_time_s"] == "3"
    assert workload["theoretical cache hit rate"].startswith("96.5%")
    header = document[: document.index("<h2>")]
    assert "workload parameters: sessions=64 · system_tokens=1024 · min_input=1500" in header


def test_a_server_agentload_did_not_start_is_named_as_such(tmp_path: Path) -> None:
    built = build_results(tmp_path / "r")
    manifest = orjson.loads((built.path / MANIFEST_FILE).read_bytes())
    engine = _rows(manifest)["Engine"]
    assert engine["server"] == (
        "http://127.0.0.1:8000/v1 (not started by agentload: its flags are its own)"
    )


def test_the_folded_dump_shows_no_float_as_python_holds_it(
    demo: tuple[dict[str, object], str],
) -> None:
    """`0.9649423466932137` in manifest.json reads `0.965` in the dump (the file keeps it)."""
    manifest, document = demo
    dump = document[document.index("<details><summary>Every fact in manifest.json") :]
    dump = dump[: dump.index("</details>")]
    assert "." in dump and not re.findall(r"\d\.0*[1-9]\d{4,}", dump)
    assert re.search(r"\d\.0*[1-9]\d{4,}", orjson.dumps(manifest).decode())  # it had some
