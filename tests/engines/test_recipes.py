"""Every engine flag agentload writes is one the engine's own argument parser takes: the
embedded vLLM engine's command line, the `vllm serve` and `python -m sglang.launch_server`
recipes of docs/engines.md, and each vLLM and SGLang flag named in the docs and in the fixes
agentload prints (`vLLM --max-model-len`, `SGLang --context-length`). A flag an engine removes
or renames, or one misspelt here, fails this test. vLLM's parser needs vLLM installed (the
`vllm` extra, no GPU); SGLang's needs `sglang` (0.5.23 installs from PyPI with CUDA's torch,
about 8 GB, and its `server_args` imports without a GPU; not in CI: docs/engines.md)."""

from __future__ import annotations

import argparse
import re
import shlex
from functools import cache

import pytest

from agentload.engines import vllm
from tests.engines.conftest import require_vllm
from tests.paths import REPO

ENGINES_DOC = REPO / "docs" / "engines.md"
NAMING_FLAGS = (
    REPO / "src" / "agentload" / "target" / "deployment.py",
    REPO / "docs" / "doctor.md",
    ENGINES_DOC,
)
"""Where agentload tells a user which engine flag to set."""
SGLANG_LAUNCH = "python -m sglang.launch_server "
_FLAG = re.compile(r"`(--[a-z0-9][a-z0-9-]*)")


@cache
def vllm_parser() -> argparse.ArgumentParser:
    """vLLM's own server parser (`vllm serve` and the OpenAI api_server take the same)."""
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    return make_arg_parser(FlexibleArgumentParser())  # type: ignore[no-any-return]


@cache
def sglang_parser() -> argparse.ArgumentParser:
    """SGLang's own server parser (`python -m sglang.launch_server`)."""
    server_args = pytest.importorskip(
        "sglang.srt.server_args", reason="SGLang is not installed (pip install sglang)"
    )
    parser = argparse.ArgumentParser()
    server_args.ServerArgs.add_cli_args(parser)
    return parser


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings}


def _named(engine: str, heading: str) -> set[str]:
    """The flags agentload names for `engine` (`vLLM --flag`), and every flag in backticks in
    that engine's section of docs/engines.md."""
    said = re.compile(engine + r" `?(--[a-z0-9][a-z0-9-]*)")
    named = {flag for path in NAMING_FLAGS for flag in said.findall(path.read_text())}
    return named | set(_FLAG.findall(_section(ENGINES_DOC.read_text(), heading)))


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


def _recipes(markdown: str, command: str = "vllm serve ") -> list[list[str]]:
    """Each `command ...` line in the markdown's bash blocks, as the argv after it (line
    continuations joined)."""
    joined = markdown.replace("\\\n", " ")
    lines = [line for line in joined.splitlines() if line.startswith(command)]
    return [shlex.split(line.removeprefix(command)) for line in lines]


@pytest.mark.vllm
def test_the_embedded_engine_s_flags_parse() -> None:
    require_vllm()
    args = vllm.server_args(vllm.resolve_model(), 8000, 4, 8192, 1 << 30)
    parsed = vllm_parser().parse_args(args)
    assert parsed.enable_prefix_caching and parsed.enable_prompt_tokens_details
    assert parsed.max_model_len == 8192 and parsed.max_num_seqs == 4
    assert parsed.kv_cache_memory_bytes == 1 << 30 and parsed.enforce_eager


@pytest.mark.vllm
def test_the_docs_vllm_serve_recipes_parse() -> None:
    require_vllm()
    recipes = _recipes(ENGINES_DOC.read_text())
    assert recipes, "docs/engines.md has no `vllm serve` recipe"
    for argv in recipes:
        parsed = vllm_parser().parse_args(argv)
        assert parsed.enable_prefix_caching, argv


@pytest.mark.vllm
def test_every_vllm_flag_agentload_names_exists() -> None:
    require_vllm()
    named = _named("vLLM", "## vLLM")
    assert "--max-model-len" in named and "--enable-prompt-tokens-details" in named
    assert not named - _options(vllm_parser())


@pytest.mark.vllm
def test_a_misspelt_flag_would_fail() -> None:
    require_vllm()
    with pytest.raises(SystemExit):
        vllm_parser().parse_args(["MODEL", "--enable-prefix-cacheing"])
    options = _options(vllm_parser())
    assert "--tensor-parallel-size" in options and "--enable-expert-parallel" in options


def test_recipes_are_read_from_the_doc_s_blocks() -> None:
    text = "```bash\nvllm serve M --enable-prefix-caching \\\n  --max-model-len 8\n```\n"
    assert _recipes(text) == [["M", "--enable-prefix-caching", "--max-model-len", "8"]]


def test_the_docs_sglang_recipes_and_named_flags_parse() -> None:
    parser = sglang_parser()
    recipes = _recipes(ENGINES_DOC.read_text(), SGLANG_LAUNCH)
    assert recipes, "docs/engines.md has no SGLang recipe"
    for argv in recipes:
        parsed = parser.parse_args(argv)
        assert parsed.enable_cache_report and parsed.enable_metrics, argv
    named = _named("SGLang", "## SGLang")
    assert "--context-length" in named and "--enable-cache-report" in named
    assert not named - _options(parser)
