"""References and check calls on the real llama.cpp server: recorded alone they come back the
same (or flip only a near tie), the checker keeps as many lanes as the pace asks and writes
every call it makes, and a run checks against references given as a file or recorded on
another server, saying which."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from rich.console import Console

from agentload.client.endpoint import Endpoint
from agentload.engines.llamacpp import LocalEngine
from agentload.quality.call import CheckClient
from agentload.quality.checker import Checker
from agentload.quality.conversations import workload_conversations
from agentload.quality.figures import quality_figures
from agentload.quality.record import record_references
from agentload.quality.reference import ReferenceSet, load_references, write_references
from agentload.quality.settings import QualityOptions
from agentload.results.files import CHECKS_FILE, REFERENCES_FILE
from agentload.results.jsonl import read_jsonl
from agentload.results.quality import CheckRecord, CheckSettings, QualityThresholds
from agentload.run.execute import Execution, execute
from agentload.run.search_settings import SearchSettings
from agentload.target.deployment import TargetOptions
from agentload.workload.load import load_workload
from agentload.workload.tokenizers import FileTokenizer

WORKLOAD = (
    "synthetic:agentic-coding?sessions=8&system_tokens=256&min_input=400&mean_input=900"
    "&max_input=2000&task_median=100&calls_median=8&tool_call_output_median=12"
    "&burst_output_median=32&max_output=48&tool_time_median_s=0.02&max_tool_time_s=0.1"
)
SETTINGS = CheckSettings(share=0.5, conversations=4, max_output_tokens=16)
THRESHOLDS = QualityThresholds()
LANE_WAIT_S = 30.0


async def _recorded(engine: LocalEngine) -> ReferenceSet:
    conversations = workload_conversations(
        load_workload(WORKLOAD),
        FileTokenizer(str(engine.tokenizer_path)),
        count=SETTINGS.conversations,
        api="chat",
        max_output_tokens=SETTINGS.max_output_tokens,
        seed=SETTINGS.seed,
    )
    endpoint = Endpoint(base_url=engine.url, model=engine.model)
    async with CheckClient(endpoint, SETTINGS) as client:
        return await record_references(
            client,
            conversations,
            origin="this deployment at one agent",
            tie_margin_nats=THRESHOLDS.tie_margin_nats,
            notes=[],
        )


@pytest.fixture(scope="module")
def references(llama_server: LocalEngine, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("references") / REFERENCES_FILE
    write_references(path, asyncio.run(_recorded(llama_server)))
    return path


def test_references_recorded_alone_come_back_the_same_or_flip_a_near_tie(
    references: Path,
) -> None:
    loaded = load_references(references)
    assert len(loaded.references) == SETTINGS.conversations
    assert loaded.source.logprobs and loaded.source.settings["temperature"] == 0
    repeats = [r.repeat for r in loaded.references]
    assert all(r is not None and (r.exact or r.near_tie) for r in repeats)
    assert all(r.reply.tokens and len(r.reply.tokens) >= 1 for r in loaded.references)


async def test_the_checker_keeps_the_lanes_the_pace_asks_and_writes_every_call(
    llama_server: LocalEngine, references: Path, tmp_path: Path
) -> None:
    endpoint = Endpoint(base_url=llama_server.url, model=llama_server.model)
    loaded = load_references(references)
    async with (
        CheckClient(endpoint, SETTINGS) as client,
        Checker(
            client, loaded, THRESHOLDS, None, path=tmp_path / CHECKS_FILE, tool_time_s=0.0
        ) as checker,
    ):
        checker.pace(4)
        assert checker.lanes == 2
        async with asyncio.timeout(LANE_WAIT_S):
            while len(checker.records) < SETTINGS.conversations + 2:
                await asyncio.sleep(0.1)
        checker.pace(0)
        async with asyncio.timeout(LANE_WAIT_S):
            while checker.lanes:
                await asyncio.sleep(0.1)
        made = list(checker.records)
    written = read_jsonl(tmp_path / CHECKS_FILE, CheckRecord).items
    assert [r.id for r in written] == [r.id for r in made]
    assert {r.reference for r in made} == {r.conversation.id for r in loaded.references}
    figures = quality_figures(made)
    assert figures.checks == len(made) and figures.diverged == 0


def _run(engine: LocalEngine, out: Path, options: QualityOptions) -> None:
    request = Execution(
        workload=WORKLOAD,
        search=SearchSettings.for_run(2, 6.0, ramp_s=0.2, settle_s=1.0),
        target=TargetOptions(
            url=engine.url, model=engine.model, tokenizer=str(engine.tokenizer_path)
        ),
        out=out,
        label="quality-references",
        quality=options,
    )
    summary = execute(request, console=Console(quiet=True))
    assert summary.quality is not None and summary.quality.source is not None
    assert summary.probes[0].quality is not None


def test_a_run_checks_against_references_given_as_a_file(
    llama_server: LocalEngine, references: Path, tmp_path: Path
) -> None:
    _run(llama_server, tmp_path / "r", QualityOptions(settings=SETTINGS, references=references))
    kept = load_references(tmp_path / "r" / REFERENCES_FILE)
    assert kept.source.origin == "a file"
    assert kept.references == load_references(references).references


def test_a_run_records_its_references_on_another_server_when_asked(
    llama_server: LocalEngine, tmp_path: Path
) -> None:
    other = f"{llama_server.url}/v1"
    _run(llama_server, tmp_path / "r", QualityOptions(settings=SETTINGS, reference_url=other))
    kept = load_references(tmp_path / "r" / REFERENCES_FILE)
    assert kept.source.origin == "another deployment" and kept.source.url == other
    assert kept.source.engine is None
