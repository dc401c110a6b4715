"""One name per quantity and per serving unit (`agentload.vocabulary`): an output speed is per
request, an agent's share of the throughput per active agent; a deployment holds engine
instances, an engine instance data-parallel ranks, and none of them is a replica."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentload.errors import InputError
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


def test_a_schema_1_simulated_summary_that_said_replicas_is_refused_by_field(
    tmp_path: Path,
) -> None:
    """Schema 1 (a day old) wrote `replicas` and `gpus_per_replica`; no reader renames them:
    the refusal is one line naming the file and the field."""
    built = build_results(tmp_path / "r", gpus=72)
    raw = json.loads(read_summary(built.path).model_dump_json())
    deployment = {**FACTS.deployment.model_dump(), "gpus": 72, "replicas": 72}
    del deployment["dp_ranks"]
    raw.update(schema_version=1, simulated={**FACTS.model_dump(), "deployment": deployment})
    (built.path / SUMMARY_FILE).write_text(json.dumps(raw))
    with pytest.raises(InputError) as refused:
        read_summary(built.path)
    assert refused.value.path == str(built.path / SUMMARY_FILE)
    assert refused.value.field is not None and "simulated.deployment" in refused.value.field
