"""What `run` and `search` share: the options after their own (`add_measured_run_arguments`),
and once parsed, one request built from them, executed, and its results printed and reported
(`finish`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from agentload.commands.options import (
    add_output_arguments,
    add_power_arguments,
    add_worker_arguments,
    agents_from,
    hosts_from,
    label_from,
    out_from,
    power_from,
)
from agentload.commands.quality_options import add_quality_arguments, quality_from
from agentload.commands.target_options import add_target_arguments, target_from
from agentload.config_file import add_config_argument, effective_config
from agentload.run.search_settings import SearchSettings


def add_measured_run_arguments(
    parser: argparse.ArgumentParser, verb: str, *groups: Callable[[argparse.ArgumentParser], None]
) -> None:
    """The results directory, the workers, power, the verb's own `groups`, the target, the
    quality gate (off unless asked) and `--config`, in that order (--help's)."""
    add_output_arguments(parser, verb)
    add_worker_arguments(parser)
    add_power_arguments(parser)
    for group in groups:
        group(parser)
    add_target_arguments(parser)
    add_quality_arguments(parser, by_default=False)
    add_config_argument(parser)


def measured_run(
    args: argparse.Namespace, verb: str, search: SearchSettings, *, start_mid_session: bool
) -> int:
    """Measure `search` as the options say; the exit code (interrupted: incomplete)."""
    from agentload.commands.finish import execute_and_finish
    from agentload.run.execute import Execution

    label = label_from(args, verb)
    request = Execution(
        workload=args.workload,
        search=search,
        target=target_from(args),
        out=out_from(args, label),
        label=label,
        agents=agents_from(args, start_mid_session=start_mid_session),
        gpus=args.gpus,
        power=power_from(args),
        skip_bad_lines=args.skip_bad_lines,
        resume=args.resume is not None,
        hosts=hosts_from(args),
        config=effective_config(args, verb),
        quality=quality_from(args),
    )
    return execute_and_finish(request)
