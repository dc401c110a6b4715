"""What every embedded engine shares: a model ready to serve, a server process started on a
free port and waited for, stopped with everything it started, its state for `engine status`,
and the facts a results directory keeps about it.

An engine (`engines/llamacpp.py`, `engines/vllm.py`) subclasses `EngineServer` and says only
what is its own: its name, its command line and environment, where its log goes, what a taken
port looks like in that log, and its own facts (build, version, flags, sizing).
"""

from __future__ import annotations

import atexit
import contextlib
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import ConfigDict

from agentload.engines.errors import EngineError
from agentload.engines.model_gen import GeneratedModelSpec
from agentload.engines.process import (
    HEALTH_POLL_S,
    HOST,
    HTTP_TIMEOUT_S,
    STOP_GRACE_S,
    default_threads,
    free_port,
    http_get_json,
    log_tail,
    pid_alive,
    terminate_pid,
)
from agentload.engines.process import launch as start_process
from agentload.frozen import Frozen, same_named
from agentload.home import agentload_home

EngineName = Literal["llama.cpp", "vllm"]
"""The embedded engines, as `--engine` names them."""
ENGINE_NAMES: tuple[EngineName, ...] = ("llama.cpp", "vllm")
DEFAULT_ENGINE: EngineName = "llama.cpp"
PORT_ATTEMPTS = 3
"""Launches tried on fresh free ports when another process grabs the chosen one first."""

E = TypeVar("E", bound="EngineServer")
Command = tuple[list[str], Mapping[str, str] | None]
"""A server's command line, and its environment (None: this process's)."""


class ResolvedModel(Frozen):
    """A model ready to serve: its file or folder, the name it is served as, and its
    tokenizer if known."""

    name: str
    path: Path
    source: str
    """'generated', 'gemma3-270m', 'file' (a GGUF) or 'folder' (a Hugging Face directory)."""
    tokenizer_path: Path | None = None
    spec: GeneratedModelSpec | None = None

    def size_bytes(self) -> int:
        """Bytes of the model's file, or of every file in its folder."""
        if self.path.is_dir():
            return sum(p.stat().st_size for p in self.path.rglob("*") if p.is_file())
        return self.path.stat().st_size

    def facts(self) -> dict[str, Any]:
        """What a results directory keeps about the model."""
        facts: dict[str, Any] = {
            "name": self.name,
            "source": self.source,
            "path": str(self.path),
            "size_bytes": self.size_bytes(),
            "tokenizer_path": str(self.tokenizer_path) if self.tokenizer_path else None,
        }
        if self.spec is not None:
            facts["spec"] = self.spec.model_dump()
            facts["parameters"] = self.spec.parameter_count()
        return facts


class EngineState(Frozen):
    """What a detached engine leaves in its state file, so other commands can find it."""

    model_config = ConfigDict(extra="ignore")  # a state file another version wrote may hold more

    engine: EngineName = DEFAULT_ENGINE
    """Which engine (a state file written before vLLM was embedded is llama.cpp's)."""
    pid: int
    url: str
    port: int
    model: str
    model_path: Path
    tokenizer_path: Path | None
    log_path: Path
    parallel: int
    ctx_size: int
    """Tokens of KV cache in all (llama.cpp: split over the slots; vLLM: shared in blocks)."""
    started_at: float
    """Epoch seconds."""


_STATE_AS_NAMED = EngineState.model_fields.keys() - {"engine", "model_path"}
"""What a state file keeps that an `EngineServer` names the same way."""


@dataclass(frozen=True)
class Launch:
    """How a start launches its server, whatever the engine (`EngineServer.prepared`)."""

    parallel: int
    """Requests served at once."""
    threads: int
    log_dir: Path
    nice: int
    """How much the server's priority is lowered."""
    detach: bool
    """Left running after this process exits."""
    ready_timeout_s: float


class PortTaken(EngineError):
    """The server could not bind its port (someone took it after `free_port()` chose it)."""


_ATTACHED: set[EngineServer] = set()


def _stop_attached() -> None:
    for engine in list(_ATTACHED):
        engine.stop()


atexit.register(_stop_attached)


@dataclass(eq=False, repr=False)
class EngineServer:
    """A running engine server; a subclass's `start(...)` makes one, ideally used as a context
    manager. Stopped at `stop()`, at the end of a `with` block, at interpreter exit and (Linux)
    when the thread that started it dies, unless started detached."""

    name: ClassVar[EngineName]
    title: ClassVar[str]
    """How the engine is written for people (`llama.cpp`, `vLLM`)."""
    bind_failures: ClassVar[tuple[str, ...]]
    """What its log says when its port is taken."""
    log_stem: ClassVar[str]
    """The start of its log files' names."""
    command_mark: ClassVar[bytes]
    """What its server's command line holds (a recorded pid is still this engine's server)."""

    process: subprocess.Popen[bytes] | None
    pid: int
    port: int
    resolved: ResolvedModel
    log_path: Path
    parallel: int
    """Requests served at once (llama.cpp's slots, vLLM's `--max-num-seqs`)."""
    ctx_size: int
    """Tokens of KV cache in all."""
    slot_tokens: int
    """The longest call, prompt and output, tokens."""
    threads: int
    args: list[str]
    started_at: float
    ready_s: float = 0.0
    """Seconds from launch to the first healthy /health."""
    nice: int = 0
    """How much the server's priority was lowered (0: the default priority)."""

    @property
    def url(self) -> str:
        """Base URL, e.g. `http://127.0.0.1:PORT` (the OpenAI API is under `/v1`)."""
        return f"http://{HOST}:{self.port}"

    @property
    def model(self) -> str:
        """The name the model is served as."""
        return self.resolved.name

    @property
    def tokenizer_path(self) -> Path | None:
        """The model's HF `tokenizer.json` (None for models without one, e.g. Gemma)."""
        return self.resolved.tokenizer_path

    @classmethod
    def start(
        cls,
        *,
        model: str | Path,
        parallel: int,
        slot_tokens: int | None,
        port: int | None,
        log_dir: Path | None,
        threads: int | None,
        nice: int,
        detach: bool,
    ) -> EngineServer:
        """Start this engine for `parallel` calls of up to `slot_tokens` tokens each (the
        engine's default when None) and wait until it is healthy; each engine adds its own
        options."""
        raise NotImplementedError

    @staticmethod
    def prepared(
        parallel: int,
        threads: int | None,
        log_dir: Path | None,
        *,
        nice: int,
        detach: bool,
        ready_timeout_s: float,
    ) -> Launch:
        """How a start launches its server: the threads (every usable CPU when not given) and
        the log folder (made; the agentload home's `logs` when not given); an `EngineError`
        for no calls."""
        if parallel < 1:
            raise EngineError(f"parallel must be at least 1, got {parallel}")
        folder = Path(log_dir) if log_dir else agentload_home() / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        threads = threads or default_threads()
        return Launch(parallel, threads, folder, nice, detach, ready_timeout_s)

    @classmethod
    def serve(
        cls: type[E],
        port: int | None,
        command: Callable[[int], Command],
        launch: Launch,
        **own: Any,
    ) -> E:
        """The server `command(port)` starts, launched as `launch` says, once healthy: on
        `port`, or on fresh free ports (a few tries) when none was given and another process
        takes the chosen one first. `own` are the engine's fields (its model and sizing)."""
        attempts = PORT_ATTEMPTS if port is None else 1
        for attempt in range(1, attempts + 1):
            try:
                return cls.launched(command, launch, port or free_port(), own)
            except PortTaken:
                if attempt == attempts:
                    raise
        raise AssertionError("unreachable")

    @classmethod
    def launched(
        cls: type[E],
        command: Callable[[int], Command],
        launch: Launch,
        port: int,
        own: dict[str, Any],
    ) -> E:
        """Start `command(port)`, its log in the launch's folder, and return once `/health`
        answers 200 (the server stopped and an `EngineError` with its log's tail if not)."""
        argv, env = command(port)
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        log_path = launch.log_dir / f"{cls.log_stem}-{stamp}-{port}.log"
        attached = not launch.detach and threading.current_thread() is threading.main_thread()
        began = time.monotonic()
        process = start_process(argv, log_path, env=env, nice=launch.nice, die_with_parent=attached)
        engine = cls(
            process=process,
            pid=process.pid,
            port=port,
            log_path=log_path,
            args=list(argv),
            started_at=time.time(),
            parallel=launch.parallel,
            threads=launch.threads,
            nice=launch.nice,
            **own,
        )
        if not launch.detach:
            _ATTACHED.add(engine)
        try:
            engine._wait_ready(launch.ready_timeout_s)
        except BaseException:
            engine.stop()
            raise
        engine.ready_s = time.monotonic() - began
        return engine

    def _wait_ready(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            if self.process is not None and self.process.poll() is not None:
                tail = log_tail(self.log_path)
                if any(failure in tail for failure in self.bind_failures):
                    raise PortTaken(f"port {self.port} is taken:\n{tail}")
                raise EngineError(
                    f"{self.log_stem} exited with status {self.process.returncode} while "
                    f"starting (log: {self.log_path}):\n{tail}"
                )
            if self.healthy():
                return
            if time.monotonic() > deadline:
                raise EngineError(
                    f"{self.log_stem} not healthy after {timeout_s:.0f} s "
                    f"(log: {self.log_path}):\n{log_tail(self.log_path)}"
                )
            time.sleep(HEALTH_POLL_S)

    def healthy(self) -> bool:
        """Whether `/health` answers 200 now."""
        return http_get_json(f"{self.url}/health", timeout=HTTP_TIMEOUT_S)[0] == 200

    def running(self) -> bool:
        """Whether the server process is still alive."""
        if self.process is not None:
            return self.process.poll() is None
        return pid_alive(self.pid)

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGTERM to the server's process group, then SIGKILL after `grace_s`; returns once
        every process of it is gone (a second stop is harmless), and its temporary files."""
        _ATTACHED.discard(self)
        terminate_pid(self.pid, grace_s, group=True)
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(grace_s)
        self.remove_scratch(self.log_path.parent, self.port)

    @classmethod
    def remove_scratch(cls, log_dir: Path, port: int) -> None:
        """Remove the temporary files the server on `port` (logging to `log_dir`) left; those
        of a detached one too, stopped from another process. None by default."""

    def state(self) -> EngineState:
        """The facts a state file keeps about this engine (its own, by the same names)."""
        return EngineState(
            engine=self.name, model_path=self.resolved.path, **same_named(self, _STATE_AS_NAMED)
        )

    def facts(self) -> dict[str, Any]:
        """Provenance for a results directory: what every engine says (a subclass adds its
        build, version and sizing)."""
        return {
            "engine": self.name,
            "url": self.url,
            "args": self.args,
            "parallel": self.parallel,
            "ctx_size_tokens": self.ctx_size,
            "slot_ctx_tokens": self.slot_tokens,
            "threads": self.threads,
            "nice": self.nice,
            "ready_s": round(self.ready_s, 3),
            "log": str(self.log_path),
            "model": self.resolved.facts(),
        }

    def __enter__(self: E) -> E:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(url={self.url!r}, model={self.model!r}, pid={self.pid})"
