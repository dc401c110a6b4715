"""The tiers a verb is asked for: a preset's, custom specs and a file's, in that order, each name
once; the default preset when none is asked for."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agentload.errors import InputError
from agentload.results.tiers import asked_tiers, preset


def test_nothing_asked_is_the_default_preset_at_the_ceiling_given() -> None:
    tiers = asked_tiers(None, [], None, default="local-cpu", ttft_ceiling_s=9.0)
    assert tiers == preset("local-cpu", ttft_ceiling_s=9.0)
    assert {t.ttft_ceiling_s for t in tiers} == {9.0}


def test_a_preset_then_specs_then_a_file_in_that_order(tmp_path: Path) -> None:
    file = tmp_path / "tiers.json"
    file.write_bytes(
        orjson.dumps([{"name": "f", "output_speed_floor_tokens_per_s": 5, "ttft_ceiling_s": 3}])
    )
    tiers = asked_tiers("agentperf", ["fast:100:2"], file, default="local-cpu")
    names = [t.name for t in tiers]
    assert names == [*(t.name for t in preset("agentperf")), "fast", "f"]


def test_a_name_asked_twice_is_refused() -> None:
    with pytest.raises(InputError, match="two tiers are named 'a'"):
        asked_tiers(None, ["a:10:2", "a:20:2"], None, default="agentperf")
