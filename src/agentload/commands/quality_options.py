"""The quality options `run`, `search` and `demo` share: whether to check the outputs under
load, the `--quality-file` of thresholds, and where the references come from
(`agentload.quality`). `run` and `search` check when asked (any of them); `demo` checks unless
told `--no-quality`."""

from __future__ import annotations

import argparse
from pathlib import Path

from agentload.quality.settings import QualityOptions, quality_options


def add_quality_arguments(parser: argparse.ArgumentParser, *, by_default: bool) -> None:
    """The quality group; `by_default`: the checks run unless `--no-quality` (the demo)."""
    group = parser.add_argument_group(
        "quality under load (greedy check calls against references; the gate on every probe)"
    )
    if by_default:
        group.add_argument(
            "--no-quality", action="store_true", help="do not check the outputs under load"
        )
    else:
        group.add_argument(
            "--quality",
            action="store_true",
            help="check the outputs under load: a tier's answer is the most agents that meet "
            "its speed and pass the quality gate",
        )
    group.add_argument(
        "--quality-file",
        type=Path,
        metavar="FILE",
        help="the checks' settings and the gate's thresholds, TOML (docs/quality.md)",
    )
    group.add_argument(
        "--references",
        type=Path,
        metavar="FILE",
        help="check against these references (a references.json of another run) instead of "
        "recording them on this deployment alone",
    )
    group.add_argument(
        "--reference-url",
        metavar="URL",
        help="record the references on this server (same model name and API: e.g. a BF16 "
        "deployment) instead of on this deployment alone",
    )


def quality_from(args: argparse.Namespace, *, share: float | None = None) -> QualityOptions | None:
    """The quality options asked for (`share`: the checks' share without a quality file, a
    preset's); None when the outputs are not checked."""
    wanted = (
        not args.no_quality
        if hasattr(args, "no_quality")
        else args.quality
        or any(v is not None for v in (args.quality_file, args.references, args.reference_url))
    )
    if not wanted:
        return None
    return quality_options(
        args.quality_file,
        share=share,
        references=args.references,
        reference_url=args.reference_url,
    )
