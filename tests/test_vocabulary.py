"""One name per quantity and per serving unit (`agentload.vocabulary`): an output speed is per
request, an agent's share of the throughput per active agent; a deployment holds engine
instances, an engine instance data-parallel ranks, and none of them is a replica."""

from __future__ import annotations

import json
from pathlib import Path

from agentload.report.load import load_view
from agentload.report.terminal import summary_text
from agentload.results.files import SUMMARY_FILE
from agentload.results.load import read_summary
from agentload.results.summary import SimulatedDeployment, SimulationFacts
from agentload.vocabulary import data_parallel, layout_words, output_speed_header
from tests.analysis.simulated import FACTS
from tests.report.builder import build_results


def test_a_layouts_units_are_engine_instances_and_their_data_parallel_ranks() -> None:
    assert data_parallel("tp1,dp8,ep8") == 8 and data_parallel("tp4,ep4") == 1
    assert layout_words("tp1,dp8,ep8", 72) == "9 engine instances x 8 data-parallel ranks"
    assert layout_words("tp4,ep4", 2) == "2 engine instances"
    assert layout_words("tp8", 1) == "1 engine instance"
    assert layout_words("tp1,dp8", 12) == "12 data-parallel ranks"  # not whole instances


def test_an_output_speed_is_per_request() -> None:
    assert output_speed_header(25) == "p25 output speed, tok/s per request"
    assert output_speed_header() == "output speed, tok/s per request"


def test_a_simulated_deployment_is_said_in_instances_and_ranks_not_replicas(
    tmp_path: Path,
) -> None:
    """The issue's case: 72 GB300 GPUs as tp1,dp8,ep8 read `(72 replicas)`, the word the plan
    used for the whole 72-GPU deployment."""
    built = build_results(tmp_path / "r", gpus=72)
    deployment = SimulatedDeployment(
        **{
            **FACTS.deployment.model_dump(),
            "gpus": 72,
            "parallel": "tp1,dp8,ep8",
            "dp_ranks": 72,
            "gpus_per_dp_rank": 1,
        }
    )
    facts = SimulationFacts(**{**FACTS.model_dump(), "deployment": deployment})
    marked = read_summary(built.path).model_copy(update={"simulated": facts})
    (built.path / SUMMARY_FILE).write_text(marked.model_dump_json())
    text = summary_text(load_view(built.path), "text")
    assert "tp1,dp8,ep8 (9 engine instances x 8 data-parallel ranks)" in text
    assert "replica" not in text


def test_a_schema_1_summary_that_said_replicas_and_workers_still_reads(tmp_path: Path) -> None:
    """Schema 1 wrote `replicas`, `gpus_per_replica` and a pool's `workers`; schema 2 reads
    them as data-parallel ranks and engine instances, and the report says so."""
    built = build_results(tmp_path / "r", gpus=72)
    raw = json.loads(read_summary(built.path).model_dump_json())
    deployment = {
        **FACTS.deployment.model_dump(),
        "gpus": 72,
        "parallel": "tp1,dp8,ep8",
        "layout": "9A:tp1,dp8,ep8",
    }
    del deployment["dp_ranks"], deployment["gpus_per_dp_rank"]
    pool = {"role": "aggregated", "workers": 9, "parallel": "tp1,dp8,ep8", "replicas": 72,
            "gpus": 72, "kv_capacity_tokens": 1000, "step_source": "roofline (test)"}  # fmt: skip
    deployment.update(replicas=72, gpus_per_replica=1, pools=[pool])
    raw.update(schema_version=1, simulated={**FACTS.model_dump(), "deployment": deployment})
    (built.path / SUMMARY_FILE).write_text(json.dumps(raw))
    read = read_summary(built.path).simulated
    assert read is not None
    assert (read.deployment.dp_ranks, read.deployment.gpus_per_dp_rank) == (72, 1)
    assert (read.deployment.pools[0].engine_instances, read.deployment.pools[0].dp_ranks) == (9, 72)
    text = summary_text(load_view(built.path), "text")
    assert "tp1,dp8,ep8 (9 engine instances x 8 data-parallel ranks)" in text
