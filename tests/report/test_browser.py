"""The HTML report renders in headless Chromium with the curve visible (Debian's `chromium`).

Skipped when Chromium is missing, except in CI (env `CI` set), where it fails: CI installs it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from agentload.report.html import write_report
from agentload.report.load import load_view
from agentload.report.svg import BLUE
from tests.report.builder import build_results
from tests.report.png import decode

CHROMIUM_NAMES = ("chromium", "chromium-browser")
BROWSER_TIMEOUT_S = 120
WINDOW = (1280, 1400)
"""Browser window (width, height), pixels: the header, the tier cards and the curve."""
COLOR_TOLERANCE = 24
"""Largest per-channel difference from the probe colour that still counts as a probe pixel."""
MIN_POINT_PIXELS = 40
"""Fewest probe-coloured pixels each drawn probe point must add (a 5.5-unit circle is ~95)."""
MIN_INK_SHARE = 0.02
"""Fewest non-white pixels, as a share of the screenshot: a blank page has none."""
WHITE_LEVEL = 245


def chromium() -> str:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed; CI must render the report", pytrace=False)
    pytest.skip("chromium is not installed (apt-get install chromium)")


def run_chromium(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    command = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, timeout=BROWSER_TIMEOUT_S, check=False)


def _hex(color: str) -> tuple[int, int, int]:
    return int(color[1:3], 16), int(color[3:5], 16), int(color[5:7], 16)


def test_the_report_renders_with_the_curve_visible(tmp_path: Path) -> None:
    binary = chromium()
    built = build_results(tmp_path / "results")
    report = write_report(load_view(built.path))
    url = report.resolve().as_uri()

    dom = run_chromium(binary, tmp_path / "profile-dom", "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr.decode(errors="replace")[-2000:]
    html = dom.stdout.decode()
    start = html.index('id="curve"')
    curve = html[start : html.index("</svg>", start)]
    assert curve.count('class="probe-point"') == len(built.probes)
    assert 'class="tier-point"' in curve

    shot = tmp_path / "shot.png"
    width, height = WINDOW
    result = run_chromium(
        binary,
        tmp_path / "profile-shot",
        f"--screenshot={shot}",
        f"--window-size={width},{height}",
        "--hide-scrollbars",
        url,
    )
    assert result.returncode == 0 and shot.exists(), result.stderr.decode(errors="replace")[-2000:]
    image = decode(shot.read_bytes())
    assert (image.width, image.height) == WINDOW
    pixels = image.rgb().astype(int)
    probe = np.array(_hex(BLUE))
    probe_pixels = int((np.abs(pixels - probe).max(axis=2) <= COLOR_TOLERANCE).sum())
    assert probe_pixels >= MIN_POINT_PIXELS * len(built.probes)
    ink = int((pixels.min(axis=2) < WHITE_LEVEL).sum())
    assert ink >= MIN_INK_SHARE * image.width * image.height
