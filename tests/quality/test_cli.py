"""The quality options on the command line: a bad `--quality-file` stops the verb before
anything starts, in one line naming the file, the line and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.cli import main


@pytest.mark.parametrize("verb", [["search"], ["run", "--agents", "1", "--duration", "5"]])
def test_a_bad_quality_file_is_one_line_before_anything_starts(
    verb: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "quality.toml"
    bad.write_text("[checks]\nshare = 0\n")
    out = tmp_path / "results"
    code = main([*verb, "--quality-file", str(bad), "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err == f"agentload: error: {bad}:2: field 'checks.share': must be more than 0, got 0"
    assert not out.exists()


def test_the_quality_options_are_on_run_search_and_demo(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for verb, switch in (("run", "--quality"), ("search", "--quality"), ("demo", "--no-quality")):
        with pytest.raises(SystemExit):
            main([verb, "--help"])
        shown = capsys.readouterr().out
        for option in (switch, "--quality-file", "--references", "--reference-url"):
            assert option in shown, (verb, option)
