"""Headless Chromium (Debian's `chromium`) driven by Playwright, with the network off.

`open_page(binary, path, drawn)` starts a fresh browser (Playwright's own browser builds are
not needed: it drives the system's Chromium), opens the file in an offline context and waits
until the JavaScript expression `drawn.found` reaches `drawn.count` (the charts are drawn by the
page's script after load) and two frames are painted. It yields a `Shown`: the Playwright page,
when the charts were drawn, what the page tried to fetch beyond its own file, and its errors.
Used by the browser test and by `bench/report_charts.py`.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from playwright.async_api import Page, async_playwright

CHROMIUM_NAMES = ("chromium", "chromium-browser")
ARGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
WINDOW = (1280, 1400)
"""The page's viewport (width, height), pixels."""
TIMEOUT_MS = 90_000
OWN_SCHEMES = ("file:", "data:", "blob:", "about:")
"""Requests with these schemes are the page itself, not the network."""
DRAWN_AT = """
async () => {
  const frame = () => new Promise(r => requestAnimationFrame(() => r()));
  await frame();
  await frame();
  return performance.now();
}
"""
"""The page's clock (ms since navigation) two painted frames later."""


def find_chromium() -> str | None:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass(frozen=True)
class Drawn:
    """What to wait for: a JavaScript expression (`found`) reaching `count`."""

    found: str
    count: int

    @classmethod
    def css(cls, selector: str, count: int) -> Drawn:
        """`count` elements matching the CSS `selector`."""
        return cls(f"document.querySelectorAll({orjson.dumps(selector).decode()}).length", count)


@dataclass
class Shown:
    """A page once its charts are drawn."""

    page: Page
    drawn_ms: float = 0.0
    """When the charts were drawn, ms after navigation (the page's clock)."""
    requests: list[str] = field(default_factory=list)
    """URLs the page tried to fetch beyond itself (none when it works offline)."""
    errors: list[str] = field(default_factory=list)
    """Uncaught JavaScript exceptions and console errors."""


@contextlib.asynccontextmanager
async def open_page(
    binary: str, path: Path, drawn: Drawn, window: tuple[int, int] = WINDOW
) -> AsyncIterator[Shown]:
    """A fresh headless Chromium, network off, showing `path` once `drawn` holds, in a
    viewport of `window` (width, height) pixels."""
    width, height = window
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=binary, args=list(ARGS))
        try:
            context = await browser.new_context(
                viewport={"width": width, "height": height}, offline=True
            )
            page = await context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            shown = Shown(page)
            page.on(
                "request",
                lambda r: None if r.url.startswith(OWN_SCHEMES) else shown.requests.append(r.url),
            )
            page.on("pageerror", lambda exc: shown.errors.append(str(exc)))
            page.on(
                "console",
                lambda m: shown.errors.append(m.text) if m.type == "error" else None,
            )
            await page.goto(path.resolve().as_uri())
            await page.wait_for_function(f"({drawn.found}) >= {drawn.count}")
            shown.drawn_ms = float(await page.evaluate(DRAWN_AT))
            yield shown
        finally:
            await browser.close()
