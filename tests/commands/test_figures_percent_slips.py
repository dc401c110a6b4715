"""A share below 1% written with a `%` is most likely a slip: warn (issue 12, defect 4)."""

from __future__ import annotations

import pytest

from agentload.cli import main

HOSTED = ["cost", "--input-price", "1.25", "--output-price", "4.25", "--mix", "7:2:1"]


def test_a_discount_of_0_88_percent_warns_that_88_percent_was_likely_meant(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main([*HOSTED, "--cached-discount", "0.88%"]) == 0
    err = capsys.readouterr().err
    assert "warning" in err and "--cached-discount 0.88%" in err and "88%" in err


@pytest.mark.parametrize("written", ["88%", "0.88", "0.0088", "1%"])
def test_a_share_written_plainly_does_not_warn(
    capsys: pytest.CaptureFixture[str], written: str
) -> None:
    assert main([*HOSTED, "--cached-discount", written]) == 0
    assert "warning" not in capsys.readouterr().err


def test_a_typed_systems_hit_rate_below_one_percent_warns(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["compare", "--system", "A", "hit=0.97%", "--system", "B", "hit=97%"]) == 0
    assert "hit 0.97%" in capsys.readouterr().err
