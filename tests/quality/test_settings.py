"""The `--quality` file: defaults, values read, and bad input named by file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.errors import InputError
from agentload.quality.settings import load_quality_file, quality_options
from agentload.results.quality import CheckSettings, QualityThresholds


def test_no_file_means_the_stated_defaults() -> None:
    options = quality_options(None)
    assert options.settings == CheckSettings() and options.thresholds == QualityThresholds()
    assert options.thresholds.max_diverged_share == 0.10
    assert options.settings.share == 0.05


def test_a_file_sets_what_it_names_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "quality.toml"
    path.write_text("[checks]\nshare = 0.2\ntasks = 40\n\n[gate]\nmax_diverged_share = 0.3\n")
    loaded = load_quality_file(path)
    assert loaded.checks.share == 0.2 and loaded.checks.tasks == 40
    assert loaded.gate.max_diverged_share == 0.3
    assert loaded.gate.min_checks == QualityThresholds().min_checks


def test_a_bad_value_names_the_file_the_line_and_the_key(tmp_path: Path) -> None:
    path = tmp_path / "quality.toml"
    path.write_text("[checks]\nshare = 0.2\n\n[gate]\n# comment\nmax_diverged_share = 2\n")
    with pytest.raises(InputError) as caught:
        load_quality_file(path)
    assert str(caught.value) == (
        f"{path}:6: field 'gate.max_diverged_share': must be at most 1, got 2"
    )


def test_an_unknown_key_or_table_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "quality.toml"
    path.write_text("[gate]\nmax_drift = 1\n")
    with pytest.raises(InputError, match=r":2: field 'gate.max_drift': is not a known field"):
        load_quality_file(path)
    path.write_text("share = 0.1\n")
    with pytest.raises(InputError, match=r":1: field 'share': not a table of a quality file"):
        load_quality_file(path)


def test_a_file_that_is_not_toml_says_so(tmp_path: Path) -> None:
    path = tmp_path / "quality.toml"
    path.write_text("[gate\n")
    with pytest.raises(InputError, match="not valid TOML"):
        load_quality_file(path)
