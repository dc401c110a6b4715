"""A resumed run starts its agents as the run did: the draw its manifest names, or the uniform
draw of runs made before the manifest named one; the draw is not a mismatch."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.run.resume import Resumption, check_matches


def _resumption(agents: dict[str, object]) -> Resumption:
    manifest = {"settings": {"agents": agents, "search": {"max_agents": 4}}}
    return Resumption(out=Path("r"), manifest=manifest, probes=(), number=1)


@pytest.mark.parametrize(
    ("agents", "draw"),
    [({"start_draw": "stationary"}, "stationary"), ({"start_draw": "uniform"}, "uniform"),
     ({}, "uniform")],
)  # fmt: skip
def test_a_resumed_run_keeps_the_draw_it_started_with(agents: dict[str, object], draw: str) -> None:
    assert _resumption({"seed": 0, **agents}).start_draw == draw


def test_a_run_made_before_the_draw_was_named_can_be_resumed() -> None:
    older = _resumption({"seed": 0}).manifest
    now = {"settings": {"agents": {"seed": 0, "start_draw": "stationary"}}}
    check_matches(older, now, source=Path("r/manifest.json"))  # no "cannot resume"
