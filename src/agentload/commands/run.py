"""`agentload run`: many agents against a server (or the embedded engine), one window measured."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from pydantic import ValidationError

from agentload.errors import AgentloadError, first_problem
from agentload.run.settings import DEFAULT_DRAIN_S, DEFAULT_SETTLE_S, RunSettings
from agentload.run.target import Target
from agentload.workload.synthetic import PROFILE, SPEC_PREFIX

DEFAULT_WORKLOAD = SPEC_PREFIX + PROFILE
_LABEL = re.compile(r"[^A-Za-z0-9._-]+")


class _RefuseKey(argparse.Action):
    """`--api-key`: refused, without repeating the key, pointing at `--api-key-env`."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        parser.error(
            "--api-key: keys are never taken on the command line (they would land in shell "
            "history and process lists); put the key in an environment variable and name it "
            "with --api-key-env VAR"
        )


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    """--url/--model/--api-key-env and the local-engine options, shared by run and demo."""
    target = parser.add_argument_group("target (default: the embedded local llama.cpp engine)")
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
    target.add_argument("--api", choices=("chat", "completions"), default="chat")
    target.add_argument(
        "--tokenizer",
        help="tokenizer.json for making prompts of exact length "
        "(default: the local engine's, or the server's tokenize endpoint)",
    )
    target.add_argument(
        "--engine-model",
        default="generated",
        help="local engine model: generated, gemma3-270m or a GGUF path (default: generated)",
    )
    target.add_argument(
        "--engine-parallel", type=int, help="local engine slots (default: --agents)"
    )
    target.add_argument("--request-timeout", type=float, metavar="S", help="per-request limit, s")


def add_workload_arguments(parser: argparse.ArgumentParser) -> None:
    """What agents send and how: the workload, its seed and salt, the history policy."""
    parser.add_argument(
        "--workload", default=DEFAULT_WORKLOAD, help="workload source (default: %(default)s)"
    )
    parser.add_argument("--skip-bad-lines", action="store_true", help="skip malformed lines")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--salt", help="run salt (default: random, so runs never share a cache)")
    parser.add_argument(
        "--history",
        choices=("server", "recorded"),
        default="server",
        help="assistant turns in the history: the server's reply or the recorded one",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run many agents against a server and measure one steady-state window",
        description="Run N agents in a closed loop for a duration; records every call and "
        "reports window metrics. With no --url, starts the embedded llama.cpp engine.",
    )
    add_workload_arguments(parser)
    parser.add_argument("--agents", type=int, required=True, help="concurrent agents")
    parser.add_argument(
        "--duration", type=float, required=True, metavar="S", help="measurement length, s"
    )
    parser.add_argument(
        "--ramp", type=float, default=0.0, metavar="S", help="agents start over this many s"
    )
    parser.add_argument(
        "--settle",
        type=float,
        default=DEFAULT_SETTLE_S,
        metavar="S",
        help="steady state starts once the last agent has been active this long, s "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--drain", type=float, default=DEFAULT_DRAIN_S, metavar="S", help=argparse.SUPPRESS
    )
    parser.add_argument(
        "--start-mid-session",
        action="store_true",
        help="each agent starts at a random call of its first session (steady state comes sooner)",
    )
    parser.add_argument(
        "--out", type=Path, help="results directory (default: results/<time>-<label>)"
    )
    parser.add_argument("--label", default="run", help="a name for this run in reports")
    parser.add_argument(
        "--gpus", type=int, help="accelerators serving the model, for per-GPU figures"
    )
    add_worker_arguments(parser)
    add_target_arguments(parser)
    parser.set_defaults(func=handle)


def add_worker_arguments(parser: argparse.ArgumentParser) -> None:
    """--workers, --backend and --ray-address (run and search)."""
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="client processes to split the agents across (one core each; default: 1)",
    )
    parser.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="where worker processes run: this machine, or Ray across a cluster "
        "(pip install 'agentload[ray]')",
    )
    parser.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="a running Ray cluster (e.g. ray://head:10001 or auto); default: start a local one",
    )


def workers_from(args: argparse.Namespace) -> tuple[int, str]:
    """(workers, backend), checked: --ray-address implies the Ray backend."""
    if args.workers < 1:
        raise AgentloadError(f"--workers: must be at least 1, got {args.workers}")
    return args.workers, "ray" if args.ray_address else args.backend


def settings_from(args: argparse.Namespace) -> RunSettings:
    """RunSettings from parsed arguments, with a one-line error for invalid values."""
    values = {
        "agents": args.agents,
        "duration_s": args.duration,
        "ramp_s": args.ramp,
        "settle_s": args.settle,
        "drain_s": args.drain,
        "start_mid_session": args.start_mid_session,
        "reply_history": args.history,
        "api": args.api,
        "seed": args.seed,
    }
    if args.salt:
        values["run_salt"] = args.salt
    try:
        return RunSettings(**values)
    except ValidationError as exc:
        field, message = first_problem(exc)
        raise AgentloadError(f"{field or 'settings'}: {message}") from None


def target_from(args: argparse.Namespace) -> Target:
    return Target(
        url=args.url,
        model=args.model,
        api_key_env=args.api_key_env,
        tokenizer=args.tokenizer,
        engine_model=args.engine_model,
        engine_parallel=args.engine_parallel,
        request_timeout_s=args.request_timeout,
    )


def handle(args: argparse.Namespace) -> int:
    from agentload.cli import EXIT_INTERRUPTED
    from agentload.run.execute import RunRequest, default_out_dir, execute_run

    label = _LABEL.sub("-", args.label).strip("-") or "run"
    workers, backend = workers_from(args)
    request = RunRequest(
        workload=args.workload,
        settings=settings_from(args),
        target=target_from(args),
        out=args.out or default_out_dir(label),
        label=label,
        gpus=args.gpus,
        skip_bad_lines=args.skip_bad_lines,
        workers=workers,
        backend=backend,
        ray_address=args.ray_address,
    )
    result = execute_run(request)
    return 0 if result.complete else EXIT_INTERRUPTED
