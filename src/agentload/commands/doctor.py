"""`agentload doctor`: check a deployment before spending GPU time on it, one line per check.

reachable, model, context, streaming, usage, ignore_eos, cached tokens, metrics, power, client
headroom (`agentload.doctor.diagnose`). Takes the options `run` takes for the target, the
workload, the agents and the power source. Exit status 0 when nothing failed (warnings are
allowed), `EXIT_CHECK_FAILED` when a check failed; `--json` prints the checks as JSON.
"""

from __future__ import annotations

import argparse

from agentload.commands.options import add_power_arguments, add_workload_arguments, power_from
from agentload.commands.target_options import add_target_arguments, target_from
from agentload.config_file import add_config_argument
from agentload.console import err_console, print_json, wide_console
from agentload.errors import at_least_one

EXIT_CHECK_FAILED = 3
"""A check failed (1 is an internal error, 2 a usage error)."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="check a deployment before a costly run: one line per check, pass/warn/fail",
        description="Checks reachability, the model name, the workload's fit to the server's "
        "context, streaming, usage reporting, cached-token reporting on a repeated prefix, "
        "ignore_eos, the metrics endpoint and its cache counters, the power source, and the "
        "client's headroom on this machine for --agents. With no --url, starts the embedded "
        f"engine as run would. Exit status {EXIT_CHECK_FAILED} when a check failed.",
    )
    add_workload_arguments(parser)
    parser.add_argument(
        "--agents", type=int, default=1, help="agents planned (client headroom; default: 1)"
    )
    parser.add_argument(
        "--workers", type=int, default=1, metavar="N", help="client processes planned (default: 1)"
    )
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    add_power_arguments(parser)
    add_target_arguments(parser)
    add_config_argument(parser)
    parser.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from agentload.doctor.diagnose import DoctorOptions, diagnose, print_checks
    from agentload.target.checks import any_failed
    from agentload.target.context import Fit
    from agentload.target.deployment import check_target_options
    from agentload.workload.load import load_workload

    at_least_one("--agents", args.agents)
    at_least_one("--workers", args.workers)
    target = target_from(args)
    check_target_options(target, args.api)
    workload = load_workload(args.workload, skip_bad_lines=args.skip_bad_lines)
    options = DoctorOptions(
        target=target,
        api=args.api,
        fit=Fit(workload, recorded_history=args.history == "recorded"),
        agents=args.agents,
        workers=args.workers,
        power=power_from(args),
    )
    checks = diagnose(options, err_console())
    if args.json:
        print_json({"ok": not any_failed(checks), "checks": [c.model_dump() for c in checks]})
    else:
        print_checks(checks, wide_console())
    return EXIT_CHECK_FAILED if any_failed(checks) else 0
