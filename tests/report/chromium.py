"""Headless Chromium (Debian's `chromium`) over the DevTools protocol, with the network off.

`open_page(path)` starts a fresh browser and profile, emulates an offline network, opens the
file and waits until `drawn` matches `count` elements (the charts are drawn by the page's
script after load) and two frames are painted. The `Opened` page then evaluates JavaScript,
moves the mouse, takes screenshots and lists what the page tried to fetch beyond its own file.
Used by the browser test and by `bench/report_charts.py`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import shutil
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson

CHROMIUM_NAMES = ("chromium", "chromium-browser")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-port=0",
    "--hide-scrollbars",
)
WINDOW = (1280, 1400)
"""The page's viewport (width, height), pixels."""
START_TIMEOUT_S = 60.0
TIMEOUT_S = 90.0
OWN_SCHEMES = ("file:", "data:", "blob:", "about:", "chrome:", "devtools:")
"""Requests with these schemes are the page itself, not the network."""
WAIT_JS = """
new Promise((resolve, reject) => {
  const limit = performance.now() + %(timeout_ms)d;
  const frame = () => new Promise(r => requestAnimationFrame(() => r()));
  (async () => {
    while ((%(found)s) < %(count)d) {
      if (performance.now() > limit) {
        reject(new Error("drawn: " + (%(found)s)));
        return;
      }
      await frame();
    }
    await frame();
    await frame();
    resolve(performance.now());
  })();
})
"""
"""Resolves with the page's clock (ms since navigation) once `found` reaches `count`."""


def find_chromium() -> str | None:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


class Opened:
    """One tab of a headless Chromium, spoken to over its DevTools websocket."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self._ws = ws
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.events: list[dict[str, Any]] = []
        self.drawn_ms = 0.0
        """When the awaited elements were drawn, ms after navigation (the page's clock)."""
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self._ws:
            data = orjson.loads(message.data)
            if "id" in data and data["id"] in self._pending:
                self._pending.pop(data["id"]).set_result(data)
            elif "method" in data:
                self.events.append(data)

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        message = {"id": self._next_id, "method": method, "params": params}
        await self._ws.send_str(orjson.dumps(message).decode())
        reply = await asyncio.wait_for(future, TIMEOUT_S)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    async def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression (awaited when it is a promise)."""
        result = await self.call(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise RuntimeError(details.get("exception", {}).get("description") or details)
        return result["result"].get("value")

    async def hover(self, x: float, y: float) -> None:
        await self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)

    async def screenshot(self, *, full: bool = False) -> bytes:
        image = await self.call("Page.captureScreenshot", format="png", captureBeyondViewport=full)
        return base64.b64decode(image["data"])

    def requests(self) -> list[str]:
        """URLs the page tried to fetch beyond itself (none when it works offline)."""
        return [
            e["params"]["request"]["url"]
            for e in self.events
            if e["method"] == "Network.requestWillBeSent"
            and not e["params"]["request"]["url"].startswith(OWN_SCHEMES)
        ]

    def errors(self) -> list[str]:
        """Uncaught JavaScript exceptions and console errors."""
        found = [
            str(e["params"]["exceptionDetails"].get("exception", {}).get("description", "error"))
            for e in self.events
            if e["method"] == "Runtime.exceptionThrown"
        ]
        found += [
            " ".join(str(a.get("value", a.get("description", ""))) for a in e["params"]["args"])
            for e in self.events
            if e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] == "error"
        ]
        return found

    async def wait(self, method: str) -> dict[str, Any]:
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            for event in self.events:
                if event["method"] == method:
                    return event
            await asyncio.sleep(0.01)
        raise TimeoutError(method)


@dataclass(frozen=True)
class Drawn:
    """What to wait for: a JavaScript expression (`found`) reaching `count`."""

    found: str
    count: int

    @classmethod
    def css(cls, selector: str, count: int) -> Drawn:
        """`count` elements matching the CSS `selector`."""
        return cls(f"document.querySelectorAll({orjson.dumps(selector).decode()}).length", count)


@contextlib.asynccontextmanager
async def open_page(binary: str, path: Path, drawn: Drawn) -> AsyncIterator[Opened]:
    """A fresh headless Chromium, network off, showing `path` once `drawn` holds."""
    profile = Path(tempfile.mkdtemp(prefix="agentload-chromium-"))
    width, height = WINDOW
    command = [binary, *FLAGS, f"--window-size={width},{height}", f"--user-data-dir={profile}"]
    proc = subprocess.Popen(
        [*command, "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + START_TIMEOUT_S
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("chromium did not start")
            await asyncio.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/json/list") as reply:
                targets = await reply.json()
            url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
            async with session.ws_connect(url, max_msg_size=0) as ws:
                page = Opened(ws)
                try:
                    for domain in ("Page", "Network", "Runtime"):
                        await page.call(f"{domain}.enable")
                    await page.call(
                        "Network.emulateNetworkConditions",
                        offline=True,
                        latency=0,
                        downloadThroughput=-1,
                        uploadThroughput=-1,
                    )
                    await page.call(
                        "Emulation.setDeviceMetricsOverride",
                        width=width,
                        height=height,
                        deviceScaleFactor=1,
                        mobile=False,
                    )
                    await page.call("Page.navigate", url=path.resolve().as_uri())
                    await page.wait("Page.loadEventFired")
                    script = WAIT_JS % {
                        "found": drawn.found,
                        "count": drawn.count,
                        "timeout_ms": int(TIMEOUT_S * 1000),
                    }
                    page.drawn_ms = float(await page.evaluate(script))
                    yield page
                finally:
                    page._reader.cancel()
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)
