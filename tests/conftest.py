"""Fixtures shared by every test: the session's own temporary directory, the generated tokenizer
and the embedded llama.cpp server."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentload.engines.llamacpp import LocalEngine, is_installed
from agentload.engines.process import engine_threads
from agentload.engines.server import EngineServer
from agentload.engines.tokenizer import default_tokenizer_path

ENGINE_SLOTS = 4
"""Parallel slots of the shared test server."""

ENGINE_SLOT_CONTEXT = 20_480
"""KV tokens per slot: a 16K-token prompt plus room to answer, in each of the slots at once."""

NO_ENGINE_REASON = (
    "llama.cpp's server is not installed (run `make engine` or `agentload engine install`)"
)


def require_engine() -> None:
    """Skip the calling test when llama.cpp is missing; in CI (env `CI` set), fail instead."""
    if is_installed():
        return
    if os.environ.get("CI"):
        pytest.fail(f"{NO_ENGINE_REASON}; CI must test against a real server", pytrace=False)
    pytest.skip(NO_ENGINE_REASON)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses the server `engine`, so `-m "not engine"` leaves them out."""
    for item in items:
        if "llama_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.engine)


def worker_group(nodeid: str) -> str:
    """Which tests one of `make test`'s two workers runs together (`pytest -n 2 --dist
    loadgroup`): every vLLM test, since one vLLM server serves them all; every test that starts
    a Ray cluster, two of which at once would share two cores six ways; else a module's tests,
    so a module's fixture (a search on the real server, say) runs once."""
    module = nodeid.split("::")[0]
    if module.startswith("tests/engines/test_vllm"):
        return "vllm"
    if module.endswith("test_ray.py") or "ray]" in nodeid:
        return "ray"
    return module


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`--dist loadgroup` by `worker_group`: pytest-xdist 3.8's own reads `xdist_group` marks
    into a test's id, which pytest 9 no longer reads back, so it ran as `--dist load` (each
    worker starting its own vLLM server and repeating each module's searches)."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkerGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_group(nodeid)

    return ByWorkerGroup(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Tell each worker whether this process's output had a width (`COLUMNS`): xdist's workers
    start with COLUMNS=80 in their environment, where the console's rule gives a pipe 160."""
    node.workerinput["agentload_columns"] = os.environ.get("COLUMNS")


def pytest_configure(config: pytest.Config) -> None:
    """In a worker, the width the output of `pytest` itself had: none unless COLUMNS was set."""
    if not hasattr(config, "workerinput"):
        return
    columns = config.workerinput.get("agentload_columns")
    if columns is None:
        os.environ.pop("COLUMNS", None)
        os.environ.pop("LINES", None)
    else:
        os.environ["COLUMNS"] = columns


@pytest.fixture(autouse=True)
def engine_only_when_marked(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A test without the `engine` (or `vllm`) marker that launches an engine in this process
    fails, naming the marker: `make test-fast` (`-m "not engine and not vllm and not slow"`)
    must start no server."""
    if any(request.node.get_closest_marker(mark) is not None for mark in ("engine", "vllm")):
        return

    def refuse(*args: object, **kwargs: object) -> EngineServer:
        pytest.fail(f"{request.node.nodeid} starts an engine: mark it `engine`", pytrace=False)

    monkeypatch.setattr(EngineServer, "launched", classmethod(refuse))


TEMP_VARIABLES = ("TMPDIR", "RAY_TMPDIR")
"""Where Python's `tempfile`, subprocesses (the CLI, Chromium, Node) and Ray put temporary files."""


@pytest.fixture(scope="session", autouse=True)
def own_temp_directory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every temporary file the code under test, its subprocesses, Ray's local clusters and the
    browser make goes into one fresh folder, removed when the session ends: a test run leaves
    nothing in the temp directory. pytest's own `tmp_path` folders stay where pytest keeps them
    (fixed first), and only those of failed tests are kept (pyproject's retention policy)."""
    tmp_path_factory.getbasetemp()
    folder = Path(tempfile.mkdtemp(prefix="al-"))  # short: Ray's socket paths live under it
    saved = {name: os.environ.get(name) for name in TEMP_VARIABLES}
    previous = tempfile.tempdir
    os.environ.update(dict.fromkeys(TEMP_VARIABLES, str(folder)))
    tempfile.tempdir = str(folder)
    try:
        yield folder
    finally:
        tempfile.tempdir = previous
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def tokenizer_path() -> Path:
    """The generated byte-level BPE `tokenizer.json` (trained once, cached); no server needed."""
    return default_tokenizer_path()


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalEngine]:
    """One llama.cpp server for the whole session, serving the generated model.

    `ENGINE_SLOTS` slots of `ENGINE_SLOT_CONTEXT` tokens each; use `.url` (base URL, the OpenAI
    API under `/v1`), `.model` (served name) and `.tokenizer_path` (its `tokenizer.json`).
    Its log is in the session's temporary directory (`.log_path`). Like the demo's engine it
    leaves a core to the client (`engine_threads()`): llama.cpp's threads wait on each other at
    every step, so an engine on every core stalls for seconds whenever the client or another
    process takes one, as on a loaded test machine.
    """
    require_engine()
    log_dir = tmp_path_factory.mktemp("llama-server")
    with LocalEngine.start(
        parallel=ENGINE_SLOTS,
        ctx_size=ENGINE_SLOTS * ENGINE_SLOT_CONTEXT,
        log_dir=log_dir,
        threads=engine_threads(),
    ) as engine:
        yield engine
