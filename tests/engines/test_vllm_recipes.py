"""Every vLLM flag agentload writes is one vLLM's own argument parser takes: the embedded
engine's command line, the `vllm serve` recipes of docs/engines.md, and each vLLM flag named in
the docs and in the fixes agentload prints (`vLLM --max-model-len`). A flag vLLM removes or
renames, or one misspelt here, fails this test; it needs vLLM installed (no GPU)."""

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
NAMING_VLLM_FLAGS = (
    REPO / "src" / "agentload" / "target" / "deployment.py",
    REPO / "docs" / "doctor.md",
    ENGINES_DOC,
)
"""Where agentload tells a user which vLLM flag to set."""
_NAMED = re.compile(r"vLLM `?(--[a-z0-9][a-z0-9-]*)")
_FLAG = re.compile(r"`(--[a-z0-9][a-z0-9-]*)")


@cache
def vllm_parser() -> argparse.ArgumentParser:
    """vLLM's own server parser (`vllm serve` and the OpenAI api_server take the same)."""
    from vllm.entrypoints.launchers.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    return make_arg_parser(FlexibleArgumentParser())  # type: ignore[no-any-return]


def _options() -> set[str]:
    return {flag for action in vllm_parser()._actions for flag in action.option_strings}


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end >= 0 else len(text)]


def _recipes(markdown: str) -> list[list[str]]:
    """Each `vllm serve ...` command in the markdown's bash blocks, as argv after `serve`
    (line continuations joined)."""
    joined = markdown.replace("\\\n", " ")
    commands = [line for line in joined.splitlines() if line.startswith("vllm serve ")]
    return [shlex.split(line.removeprefix("vllm serve ")) for line in commands]


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
    named = {flag for path in NAMING_VLLM_FLAGS for flag in _NAMED.findall(path.read_text())}
    section = _section(ENGINES_DOC.read_text(), "## vLLM")
    named |= set(_FLAG.findall(section))
    assert "--max-model-len" in named and "--enable-prompt-tokens-details" in named
    assert not named - _options()


@pytest.mark.vllm
def test_a_misspelt_flag_would_fail() -> None:
    require_vllm()
    with pytest.raises(SystemExit):
        vllm_parser().parse_args(["MODEL", "--enable-prefix-cacheing"])
    assert "--tensor-parallel-size" in _options() and "--enable-expert-parallel" in _options()


def test_recipes_are_read_from_the_doc_s_blocks() -> None:
    text = "```bash\nvllm serve M --enable-prefix-caching \\\n  --max-model-len 8\n```\n"
    assert _recipes(text) == [["M", "--enable-prefix-caching", "--max-model-len", "8"]]
