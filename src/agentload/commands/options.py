"""Options `run`, `search` and `demo` share, and the settings built from them (one-line errors).

Groups: the workload and how agents play it; the target (a URL, or the embedded engine); where
agents run (workers, Ray); power and server metrics; the results directory and resume.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

import orjson
from rich.text import Text

from agentload.console import err_console
from agentload.engines.server import DEFAULT_ENGINE, ENGINE_NAMES
from agentload.errors import AgentloadError
from agentload.measure.power_spec import PowerSpec, power_spec_from_options
from agentload.option_errors import named_options
from agentload.run.execute import Backend, HostOptions, default_out_dir
from agentload.run.settings import AgentSettings
from agentload.target.deployment import TargetOptions
from agentload.workload.synthetic import PROFILE, SPEC_PREFIX

DEFAULT_WORKLOAD = SPEC_PREFIX + PROFILE
_LABEL = re.compile(r"[^A-Za-z0-9._-]+")
MAX_NICE = 19
"""The most a process's priority can be lowered (Linux niceness 0..19 without privileges)."""


class _RefuseKey(argparse.Action):
    """`--api-key`: refused, without repeating the key, pointing at `--api-key-env`."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        parser.error(
            "--api-key: keys are never taken on the command line (they would land in shell "
            "history and process lists); put the key in an environment variable and name it "
            "with --api-key-env VAR"
        )


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


def add_engine_argument(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """--engine: which embedded engine serves (run, search, doctor, demo, engine start)."""
    parser.add_argument(
        "--engine",
        choices=ENGINE_NAMES,
        default=DEFAULT_ENGINE,
        help="the embedded engine: llama.cpp, or vLLM's CPU build (installed by `agentload "
        "engine install --engine vllm`) (default: %(default)s)",
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
    target.add_argument("--api", choices=("chat", "completions"), default="chat")
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


def add_worker_arguments(parser: argparse.ArgumentParser) -> None:
    """--workers, --backend and --ray-address."""
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
    parser.add_argument("--label", default=verb, help=f"a name for this {verb} in reports")


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


def target_from(args: argparse.Namespace) -> TargetOptions:
    if args.insecure:
        err_console().print(
            Text("agentload: warning: --insecure: the server's TLS certificate is not verified")
        )
    return TargetOptions(
        url=args.url,
        model=args.model,
        api_key_env=args.api_key_env,
        tokenizer=args.tokenizer,
        engine=args.engine,
        engine_model=args.engine_model,
        engine_parallel=_positive(args.engine_parallel, "--engine-parallel"),
        engine_ctx_per_slot=_positive(args.engine_ctx, "--engine-ctx"),
        engine_threads=_positive(args.engine_threads, "--engine-threads"),
        engine_nice=_nice(args.engine_nice),
        request_timeout_s=args.request_timeout,
        metrics_url=args.metrics_url,
        headers=tuple(_header(spec) for spec in args.header),
        extra_body=_extra_body(args.extra_body),
        ca_bundle=args.ca_bundle,
        insecure=args.insecure,
    )


def _positive(value: int | None, option: str) -> int | None:
    if value is not None and value < 1:
        raise AgentloadError(f"{option}: must be at least 1, got {value}")
    return value


def _nice(value: int | None) -> int | None:
    if value is not None and not 0 <= value <= MAX_NICE:
        raise AgentloadError(f"--engine-nice: must be 0 to {MAX_NICE}, got {value}")
    return value


def _header(spec: str) -> tuple[str, str]:
    """`Name: value` as (name, value); one line naming the option when malformed."""
    name, sep, value = spec.partition(":")
    if not sep or not name.strip():
        raise AgentloadError("--header: expected 'Name: value'")
    return name.strip(), value.strip()


def _extra_body(text: str | None) -> dict[str, Any] | None:
    """--extra-body as a JSON object; one line naming the option when it is not one."""
    if text is None:
        return None
    try:
        body = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise AgentloadError(f"--extra-body: not valid JSON ({exc.msg})") from None
    if not isinstance(body, dict):
        raise AgentloadError("--extra-body: expected a JSON object")
    return body


def hosts_from(args: argparse.Namespace) -> HostOptions:
    """Where agents run, checked: --ray-address implies the Ray backend."""
    if args.workers < 1:
        raise AgentloadError(f"--workers: must be at least 1, got {args.workers}")
    backend: Backend = "ray" if args.ray_address else args.backend
    return HostOptions(workers=args.workers, backend=backend, ray_address=args.ray_address)


def power_from(args: argparse.Namespace) -> PowerSpec | None:
    return power_spec_from_options(
        args.power, args.gpu_watts, args.gpus, interval_s=args.power_interval
    )


def label_from(args: argparse.Namespace, verb: str) -> str:
    return clean_label(args.label, verb)


def clean_label(text: str, verb: str) -> str:
    """A label safe in a directory name (letters, digits, `._-`), or the verb when none is left."""
    return _LABEL.sub("-", text).strip("-") or verb


def out_from(args: argparse.Namespace, label: str) -> Path:
    """The results directory: --resume DIR, else --out, else results/<time>-<label>."""
    if args.resume is not None and args.out is not None and args.out != args.resume:
        raise AgentloadError("--resume DIR writes into DIR; leave out --out (or give the same)")
    out: Path = args.resume or args.out or default_out_dir(label)
    return out
