"""Where a run's results go: the directory resumed, else the one given, else a new one named by
time and label; `--out` other than the directory resumed is one line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentload.errors import AgentloadError
from agentload.run.execute import results_dir


def test_a_resumed_directory_then_the_one_given_then_a_new_one() -> None:
    assert results_dir("x", resume=Path("r")) == Path("r")
    assert results_dir("x", out=Path("r"), resume=Path("r")) == Path("r")
    assert results_dir("x", out=Path("o")) == Path("o")
    new = results_dir("my-label")
    assert new.parent == Path("results") and re.fullmatch(r"\d{8}T\d{6}Z-my-label", new.name)


def test_out_other_than_the_directory_resumed_is_refused() -> None:
    with pytest.raises(AgentloadError, match="--resume DIR writes into DIR; leave out --out"):
        results_dir("x", out=Path("o"), resume=Path("r"))
