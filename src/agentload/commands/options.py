"""Options `run`, `search` and `demo` share, and the settings built from them (one-line errors).

Groups: the workload and how agents play it; where agents run (workers, Ray); power; the
results directory and resume. The target's options (a URL, or the embedded engine) are in
`agentload.commands.target_options`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from agentload.files import clean_label
from agentload.measure.power_spec import PowerSpec, power_spec_from_options
from agentload.option_errors import Renamed, named_options
from agentload.run.execute import HOST_KINDS, HostKind, HostOptions, results_dir
from agentload.run.settings import AgentSettings
from agentload.workload.load import DEFAULT_WORKLOAD


def add_renamed(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup, old: str, new: str, what: str
) -> None:
    """`old`, an option's former name, refused in one line naming `new` (hidden from --help;
    a config file's old key is read as the new one: `agentload.config_file.RENAMED_KEYS`)."""
    parser.add_argument(old, action=Renamed, new=new, what=what, help=argparse.SUPPRESS)


def add_verb(subparsers: argparse._SubParsersAction, name: str, doc: str | None) -> Any:
    """A verb's parser, its help and description from its module docstring (`doc`): the first
    paragraph after "`agentload VERB ...`: ", and the second (argparse wraps both anew)."""
    first, description = [*(doc or "").split("\n\n"), "", ""][:2]
    return subparsers.add_parser(
        name, help=first.split("`: ", 1)[-1], description=description or None
    )


def add_workload_arguments(parser: argparse.ArgumentParser) -> None:
    """What agents send and how: the workload, its seed and salt, the history policy."""
    parser.add_argument(
        "--workload", default=DEFAULT_WORKLOAD, help="workload source (default: %(default)s)"
    )
    parser.add_argument("--skip-bad-lines", action="store_true", help="skip malformed lines")
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of every random draw the agents make (which sessions, start calls, tool "
        "times); the same seed plays the same load (default: %(default)s)",
    )
    parser.add_argument("--salt", help="run salt (default: random, so runs never share a cache)")
    parser.add_argument(
        "--history",
        choices=("server", "recorded"),
        default="server",
        help="assistant turns in the history: the server's reply or the recorded one "
        "(default: %(default)s)",
    )


def add_turn_zero_argument(parser: argparse.ArgumentParser) -> None:
    """--start-at-turn-zero (a search's agents start mid-session by default)."""
    parser.add_argument(
        "--start-at-turn-zero",
        action="store_true",
        help="agents start at their session's first call (default: a random call, full prefix)",
    )


def add_worker_arguments(parser: argparse.ArgumentParser) -> None:
    """--workers, --host and --ray-address (`--backend`, its old name, refused)."""
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="client processes to split the agents across (one core each; default: 1)",
    )
    parser.add_argument(
        "--host",
        choices=HOST_KINDS,
        default="local",
        help="where the agents' worker processes run: local (this machine) or ray (Ray "
        "actors across a cluster; pip install 'agentload[ray]') (default: %(default)s)",
    )
    add_renamed(parser, "--backend", "--host", "where the agents run: local or ray")
    parser.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="a running Ray cluster (e.g. ray://head:10001 or auto); default: start a local one",
    )


def add_power_arguments(parser: argparse.ArgumentParser) -> None:
    """--power/--gpu-watts/--power-interval/--gpus."""
    power = parser.add_argument_group("power (per-MW figures)")
    power.add_argument(
        "--power",
        metavar="SPEC",
        help="measure accelerator power: nvml[:0,1], amdsmi[:0,1], dcgm:URL, "
        "prometheus:URL#metric=NAME, command:CMD (prints watts), or rapl (CPU packages)",
    )
    power.add_argument(
        "--gpu-watts",
        type=float,
        metavar="W",
        help="declare watts per GPU instead of measuring (every figure is marked assumed)",
    )
    power.add_argument("--power-interval", type=float, metavar="S", help="sampling interval, s")
    power.add_argument("--gpus", type=int, help="accelerators serving the model (per-GPU figures)")


def add_output_arguments(parser: argparse.ArgumentParser, verb: str) -> None:
    """--out, --resume and --label."""
    parser.add_argument(
        "--out", type=Path, help=f"results directory (default: results/<time>-{verb})"
    )
    parser.add_argument(
        "--resume",
        type=Path,
        metavar="DIR",
        help=f"continue the interrupted {verb} in DIR from what it finished "
        "(give the same options it was started with)",
    )
    parser.add_argument(
        "--label", default=verb, help=f"a name for this {verb} in reports (default: %(default)s)"
    )


def agents_from(
    args: argparse.Namespace, *, start_mid_session: bool, api: str | None = None
) -> AgentSettings:
    """AgentSettings from parsed arguments (`api` for a verb without `--api`: the demo)."""
    values: dict[str, object] = {
        "start_mid_session": start_mid_session,
        "reply_history": args.history,
        "api": api or args.api,
        "seed": args.seed,
    }
    if args.salt:
        values["run_salt"] = args.salt
    with named_options(args, reply_history="history", run_salt="salt"):
        return AgentSettings.model_validate(values)


def hosts_from(args: argparse.Namespace) -> HostOptions:
    """Where agents run: --ray-address implies `--host ray` (`--workers` is checked where
    they run, `agentload.run.execute`)."""
    kind: HostKind = "ray" if args.ray_address else args.host
    return HostOptions(workers=args.workers, kind=kind, ray_address=args.ray_address)


def power_from(args: argparse.Namespace) -> PowerSpec | None:
    return power_spec_from_options(
        args.power, args.gpu_watts, args.gpus, interval_s=args.power_interval
    )


def label_from(args: argparse.Namespace, verb: str) -> str:
    return clean_label(args.label, verb)


def out_from(args: argparse.Namespace, label: str) -> Path:
    """The results directory: --resume DIR, else --out, else results/<time>-<label>
    (`agentload.run.execute.results_dir`)."""
    return results_dir(label, out=args.out, resume=args.resume)
