"""The parallel layout's grammar: pipeline stages beside tensor, data and expert parallelism,
how many GPUs a copy takes and schedulers it runs as, and when a copy crosses a domain."""

from __future__ import annotations

import pytest

from agentload.errors import InputError
from agentload.sim.specs.parallel import Layout, parse_parallel


def test_pipeline_stages_multiply_a_copys_gpus_and_its_schedulers() -> None:
    layout = parse_parallel("tp8,pp2,ep8")
    assert (layout.tp, layout.pp, layout.ep, layout.dp) == (8, 2, 8, 1)
    assert layout.group == 16 and layout.schedulers == 2
    assert layout.spec == "tp8,pp2,ep8"
    assert parse_parallel(layout.spec) == layout
    assert parse_parallel("tp4,dp2,pp3,ep8").spec == "tp4,dp2,pp3,ep8"


def test_a_copy_spans_a_domain_when_it_needs_more_gpus_than_the_domain_has() -> None:
    assert Layout(tp=16, ep=16).spans(8)
    assert Layout(tp=8, pp=2, ep=8).spans(8)
    assert not Layout(tp=1, dp=72, ep=72).spans(72)


def test_experts_wider_than_one_pipeline_stage_are_refused_in_one_line() -> None:
    with pytest.raises(InputError, match="beyond a pipeline stage's tp \\* dp GPUs"):
        parse_parallel("tp8,pp2,ep16")
