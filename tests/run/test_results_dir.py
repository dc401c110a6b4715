"""A run's manifest names the processor it ran on: a local engine's device, so a simulation of
it can pick the right CPU (an EPYC and a Xeon vCPU differ twofold in FP32 peak)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentload.run import results_dir


def test_the_processor_is_read_from_the_kernels_cpu_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)\n")
    monkeypatch.setattr(results_dir, "CPU_INFO", info)
    assert results_dir.cpu_model() == "Intel(R) Xeon(R)"


def test_without_a_cpu_list_the_platforms_word_or_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(results_dir, "CPU_INFO", tmp_path / "missing")
    monkeypatch.setattr(results_dir.platform, "processor", lambda: "")
    assert results_dir.cpu_model() is None
