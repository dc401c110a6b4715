"""What `run` and `search` share once their arguments are parsed: one request built from the
options, executed, and its results printed and reported (`finish`)."""

from __future__ import annotations

import argparse

from agentload.commands.options import (
    agents_from,
    hosts_from,
    label_from,
    out_from,
    power_from,
)
from agentload.commands.quality_options import quality_from
from agentload.commands.target_options import target_from
from agentload.config_file import effective_config
from agentload.errors import EXIT_INTERRUPTED
from agentload.run.search_settings import SearchSettings


def measured_run(
    args: argparse.Namespace, verb: str, search: SearchSettings, *, start_mid_session: bool
) -> int:
    """Measure `search` as the options say; the exit code (interrupted: incomplete)."""
    from agentload.commands.finish import finish
    from agentload.run.execute import Execution, execute

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
    summary = execute(request)
    finish(summary, request.out)
    return 0 if summary.complete else EXIT_INTERRUPTED
