"""What is said of quality: a probe's line, and a tier's sentence when the gate set its answer,
when it held, and where it could not judge."""

from __future__ import annotations

from agentload.quality.gate import judge_quality
from agentload.quality.words import probe_words, tier_quality
from agentload.results.quality import QualityThresholds
from tests.quality.checks import gated, probe, window


def _judged(same: int, differing: int):  # type: ignore[no-untyped-def]
    figures = window(same, differing, agent_calls=200)
    gate = judge_quality(figures, None, QualityThresholds())
    if gate.outcome == "fail":
        gate = gate.model_copy(update={"overturned": ("t",)})
    return figures.model_copy(update={"gate": gate})


def test_a_probe_line_names_the_outcome_the_reason_and_the_checks_share() -> None:
    line = probe_words(_judged(11, 5))
    assert line.startswith("quality FAIL: 31% of 16 check calls diverge from their reference")
    assert line.endswith("; beside 200 agent calls")


def test_the_tier_says_where_the_gate_failed_and_what_held_below() -> None:
    probes = [probe(1, _judged(10, 0)), probe(4, _judged(12, 0)), probe(6, _judged(11, 5))]
    quality = tier_quality(probes, answer=4)
    assert quality is not None and quality.limited and quality.outcome_at_answer == "pass"
    assert quality.words == (
        "31% of check calls diverge from their reference from token 12 on at 6 agents; "
        "0% at 1-4 agents"
    )


def test_a_gate_that_held_says_so_and_where_it_could_not_judge() -> None:
    unjudged = gated(window(2, 0), "unjudged")
    assert probe_words(unjudged) == "quality not judged: 2 check calls, too few"
    probes = [probe(1, unjudged), probe(2, _judged(9, 0)), probe(4, _judged(12, 1))]
    quality = tier_quality(probes, answer=4)
    assert quality is not None and not quality.limited
    assert quality.words == (
        "held at 2-4 agents: at most 8% of check calls diverge; drift at most 0.001 "
        "nats per token; not judged at 1 agent (too few check calls)"
    )


def test_no_checks_no_sentence() -> None:
    assert tier_quality([probe(1, None)], answer=1) is None
