"""The roofline's structure, fitted on operator data of several systems, leave one system out.

    PYTHONPATH=src .venv/bin/python bench/roofline_structure.py            # fit, write, print
    PYTHONPATH=src .venv/bin/python bench/roofline_structure.py --markdown # the docs' tables

The roofline (`agentload.sim.steps.roofline`) charges a step's parts at each system's rates;
the shape of those parts (`agentload.sim.steps.structure.RooflineStructure`: the grouped
GEMM's efficiency at few tokens per expert, the busiest GPU of an expert group, collectives'
link efficiency and latency, attention's efficiency at its own dtype) is physics every system
shares. This fits it on aiconfigurator-core's measured operator data (`aic`):

- **MoE, dense and collectives**: sgl-project/DeepSeek-V4-Pro-FP8 on SGLang, at `LAYOUTS`
  (attention DP with EP, and pure TP with EP, at 4 and 8 GPUs) on `SYSTEMS`: decode steps
  without their attention (`decode(b, 8K) - decode_attention(b, 8K)`, batch 1-512) and the
  non-attention part of prefill steps (`shared(p, 0)`, 64-8,192 tokens). Each system has its
  own compute and bandwidth efficiencies and step overhead; the structure is common. The
  library's collectives for this model are NCCL all-gathers and reduce-scatters of every
  rank's tokens, so the fit reads the exchange that way (`all_gather`); the simulator uses the
  fitted link efficiency for DeepEP-style all-to-all (what wide-EP deployments run).
- **Attention**: meta-llama/Meta-Llama-3.1-70B (dense GQA attention; the library separates
  it) on SGLang at TP8: prefill chunks of 2K and 8K tokens over 0-32K cached tokens (compute
  bound: the efficiency relative to the BF16 peak, common to every system) and decode
  attention at batch 8-128 over 8K-128K tokens (KV reads: each system's bandwidth from the
  first fit, checked).

**Leave one system out**: the structure refitted without one system's data, then that system's
own three factors fitted with the structure fixed (how well the structure transfers), and its
tables predicted with the mean factors of the others (from datasheets alone). Writes
`src/agentload/sim/data/roofline_structure.json`; `--markdown` prints docs/simulation.md's
tables from it. About a minute of CPU.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import least_squares

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agentload import __version__  # noqa: E402
from agentload.sim.specs.hardware import gpu_spec  # noqa: E402
from agentload.sim.specs.model import ModelShape, model_shape  # noqa: E402
from agentload.sim.steps.aic import AicSource, aic_version  # noqa: E402
from agentload.sim.steps.roofline import RooflineParams, StepCost  # noqa: E402
from agentload.sim.steps.structure import RooflineStructure  # noqa: E402

OUT = REPO / "src" / "agentload" / "sim" / "data" / "roofline_structure.json"
COMMAND = "PYTHONPATH=src .venv/bin/python bench/roofline_structure.py"
MODEL = "sgl-project/DeepSeek-V4-Pro-FP8"
BACKEND = "sglang"
ATTENTION_MODEL = "meta-llama/Meta-Llama-3.1-70B"
ATTENTION_BACKEND = "sglang"
SYSTEMS = ("gb300", "gb200", "b300_sxm", "b200_sxm", "h200_sxm")
LAYOUTS = ((1, 8), (8, 1), (1, 4), (4, 1))
"""(tp, dp): DEP8, TP8 with EP8, DEP4, TP4 with EP4."""
BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
PREFILLS = (64, 256, 1024, 2048, 4096, 8192)
DECODE_CONTEXT = 8192
ATTENTION_TP = 8
ATTENTION_BATCHES = (8, 32, 128)
ATTENTION_CONTEXTS = (8192, 32768, 131072)
ATTENTION_CHUNKS = (2048, 8192)
ATTENTION_SPANS = (0, 8192, 32768)
SYSTEM_FACTORS = ("compute_efficiency", "bandwidth_efficiency", "step_overhead_s")
SHAPE_FACTORS = (
    "expert_half_tokens",
    "expert_imbalance",
    "link_efficiency",
    "collective_latency_s",
)
START = {
    "compute_efficiency": (0.5, 0.01, 1.0),
    "bandwidth_efficiency": (0.7, 0.05, 1.0),
    "step_overhead_s": (0.004, 1e-4, 0.05),
    "expert_half_tokens": (16.0, 0.1, 4096.0),
    "expert_imbalance": (1.0, 0.01, 10.0),
    "link_efficiency": (0.5, 0.02, 1.0),
    "collective_latency_s": (1e-5, 1e-7, 2e-4),
    "attention_efficiency": (0.5, 0.02, 1.0),
    "attention_latency_s": (1e-5, 1e-7, 1e-3),
}
"""Start, lower and upper bound of each factor (fitted in log space)."""
FIT_EXCHANGE = "all_gather"
PLACEHOLDER = {n: START[n][0] for n in SHAPE_FACTORS}
"""A structure for the attention rows, which use none of it."""


class Row:
    """One operator-data figure: a system, a layout, what it is and the measured seconds."""

    def __init__(self, system: str, tp: int, dp: int, kind: str, x: int, seconds: float) -> None:
        self.system, self.tp, self.dp, self.kind, self.x, self.seconds = (
            system,
            tp,
            dp,
            kind,
            x,
            seconds,
        )

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("system", "tp", "dp", "kind", "x", "seconds")}


def collect() -> tuple[list[Row], list[Row]]:
    """The operator data the fits read: MoE and dense parts of V4 steps, attention slopes of
    V3 decode steps."""
    body: list[Row] = []
    for system in SYSTEMS:
        for tp, dp in LAYOUTS:
            source = AicSource(MODEL, system, BACKEND, tp=tp, ep=tp * dp, dp=dp)
            for b in BATCHES:
                seconds = source.decode(b, DECODE_CONTEXT) - source.decode_attention(
                    b, DECODE_CONTEXT
                )
                body.append(Row(system, tp, dp, "decode", b, seconds))
            body.extend(Row(system, tp, dp, "prefill", p, source.shared(p, 0)) for p in PREFILLS)
    attention: list[Row] = []
    for system in SYSTEMS:
        source = AicSource(ATTENTION_MODEL, system, ATTENTION_BACKEND, tp=ATTENTION_TP)
        for b in ATTENTION_BATCHES:
            for c in ATTENTION_CONTEXTS:
                seconds = source.decode_attention(b, c)
                attention.append(Row(system, ATTENTION_TP, 1, f"decode@{c}", b, seconds))
        for p in ATTENTION_CHUNKS:
            for x in ATTENTION_SPANS:
                seconds = source.chunk_attention(p, x)
                attention.append(Row(system, ATTENTION_TP, 1, f"chunk@{x}", p, seconds))
    return body, attention


def _bounds(names: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    start, lower, upper = zip(*(START[n] for n in names), strict=True)
    return np.log(start), np.log(lower), np.log(upper)


def body_seconds(
    rows: Sequence[Row],
    model: ModelShape,
    params: Mapping[str, RooflineParams],
    shape: RooflineStructure,
) -> list[float]:
    """The roofline's figures for body rows (no attention), each system at its `params`."""
    costs: dict[tuple[str, int, int], StepCost] = {}
    out = []
    for row in rows:
        key = (row.system, row.tp, row.dp)
        if key not in costs:
            costs[key] = StepCost(
                model,
                gpu_spec(row.system),
                row.tp,
                params[row.system],
                shape=shape,
                data_parallel=row.dp,
            )
        out.append(params[row.system].step_overhead_s + costs[key].body(row.x))
    return out


def attention_seconds(row: Row, model: ModelShape, params: RooflineParams, latency: float) -> float:
    """The roofline's attention for an attention row: `decode@c` (batch `x` over `c` tokens
    each) or `chunk@s` (a chunk of `x` tokens over `s` cached ones and itself)."""
    cost = StepCost(
        model,
        gpu_spec(row.system),
        row.tp,
        params,
        shape=_shape(PLACEHOLDER, (0.5, latency)),
        data_parallel=row.dp,
    )
    kind, at = row.kind.split("@")
    if kind == "decode":
        return cost.attention(row.x, row.x * int(at), row.x * int(at))
    span = int(at)
    return cost.attention(row.x, row.x * (span + (row.x + 1) / 2), span)


def _shape(
    values: Mapping[str, float], attention: tuple[float, float] = (0.5, 0.0)
) -> RooflineStructure:
    return RooflineStructure(
        **{n: values[n] for n in SHAPE_FACTORS},
        attention_efficiency=attention[0],
        attention_latency_s=attention[1],
        ep_exchange=FIT_EXCHANGE,
    )


def _params(values: Mapping[str, float]) -> RooflineParams:
    return RooflineParams(**{n: values[n] for n in SYSTEM_FACTORS})


def _solve(
    residuals: Callable[[dict[str, float]], list[float]], names: list[str]
) -> dict[str, float]:
    x0, lower, upper = _bounds([n.split("/")[-1] for n in names])

    def fun(x: np.ndarray) -> np.ndarray:
        return np.array(residuals({n: float(math.exp(v)) for n, v in zip(names, x, strict=True)}))

    found = least_squares(fun, x0, bounds=(lower, upper))
    return {n: float(math.exp(v)) for n, v in zip(names, found.x, strict=True)}


def fit_body(
    rows: Sequence[Row],
    model: ModelShape,
    systems: Sequence[str],
    fixed: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Per-system factors (`system/factor`) and, unless `fixed`, the shared structure,
    minimising squared log errors over `rows`."""
    names = [f"{s}/{f}" for s in systems for f in SYSTEM_FACTORS]
    if fixed is None:
        names += list(SHAPE_FACTORS)

    def residuals(values: dict[str, float]) -> list[float]:
        return body_errors(rows, model, {**(fixed or {}), **values})

    return {**(fixed or {}), **_solve(residuals, names)}


def body_errors(rows: Sequence[Row], model: ModelShape, values: Mapping[str, float]) -> list[float]:
    """Each row's log error with fitted `values` (per-system factors and structure)."""
    systems = {row.system for row in rows}
    params = {s: _params({f: values[f"{s}/{f}"] for f in SYSTEM_FACTORS}) for s in systems}
    predicted = body_seconds(rows, model, params, _shape(values))
    return [math.log(p / row.seconds) for p, row in zip(predicted, rows, strict=True)]


ATTENTION_FACTORS = ["attention_efficiency", "attention_latency_s"]


def attention_errors(
    rows: Sequence[Row],
    model: ModelShape,
    bandwidth: Mapping[str, float],
    attention: tuple[float, float],
) -> list[float]:
    """Each attention row's log error, each system at its own bandwidth efficiency."""
    out = []
    for row in rows:
        params = RooflineParams(
            bandwidth_efficiency=bandwidth[row.system], attention_efficiency=attention[0]
        )
        predicted = attention_seconds(row, model, params, attention[1])
        out.append(math.log(predicted / row.seconds))
    return out


def fit_attention(
    rows: Sequence[Row], model: ModelShape, bandwidth: Mapping[str, float]
) -> tuple[tuple[float, float], list[float]]:
    """The attention efficiency and latency per layer common to `rows`' systems, and each
    row's log error."""

    def residuals(values: dict[str, float]) -> list[float]:
        pair = (values["attention_efficiency"], values["attention_latency_s"])
        return attention_errors(rows, model, bandwidth, pair)

    found = _solve(residuals, ATTENTION_FACTORS)
    pair = (found["attention_efficiency"], found["attention_latency_s"])
    return pair, attention_errors(rows, model, bandwidth, pair)


def _summary(errors: Sequence[float]) -> dict[str, float]:
    """RMS and largest log error, and the largest as a relative error."""
    worst = max(errors, key=abs)
    return {
        "rms_log_error": math.sqrt(sum(e * e for e in errors) / len(errors)),
        "largest_error": math.expm1(worst),
        "rows": len(errors),
    }


def leave_one_out(
    body: Sequence[Row], slopes: Sequence[Row], v4: ModelShape, v3: ModelShape
) -> dict[str, Any]:
    """Per held-out system: the structure fitted without it, then its own factors fitted with
    the structure fixed, and its tables from the others' mean factors."""
    out: dict[str, Any] = {}
    for held in SYSTEMS:
        train = [s for s in SYSTEMS if s != held]
        values = fit_body([r for r in body if r.system != held], v4, train)
        shape = {n: values[n] for n in SHAPE_FACTORS}
        mine = [r for r in body if r.system == held]
        own = fit_body(mine, v4, [held], fixed=shape)
        mean = {
            f"{held}/{f}": math.exp(sum(math.log(values[f"{s}/{f}"]) for s in train) / len(train))
            for f in SYSTEM_FACTORS
        }
        bandwidth = {s: values[f"{s}/bandwidth_efficiency"] for s in train}
        attention, _ = fit_attention([r for r in slopes if r.system != held], v3, bandwidth)
        held_slopes = [r for r in slopes if r.system == held]
        slope_errors = attention_errors(
            held_slopes, v3, {held: own[f"{held}/bandwidth_efficiency"]}, attention
        )
        out[held] = {
            "structure": {
                **shape,
                "attention_efficiency": attention[0],
                "attention_latency_s": attention[1],
            },
            "own_factors": _summary(body_errors(mine, v4, own)),
            "mean_factors": _summary(body_errors(mine, v4, {**shape, **mean})),
            "attention": _summary(slope_errors),
        }
    return out


def by_layout(rows: Sequence[Row], errors: Sequence[float]) -> dict[str, dict[str, float]]:
    """The fit's errors per kind and layout."""
    groups: dict[str, list[float]] = {}
    for row, error in zip(rows, errors, strict=True):
        layout = f"tp{row.tp}" + (f",dp{row.dp}" if row.dp > 1 else "") + f",ep{row.tp * row.dp}"
        groups.setdefault(f"{row.kind} {layout}", []).append(error)
    return {key: _summary(values) for key, values in sorted(groups.items())}


def render_markdown(results: Mapping[str, Any]) -> str:
    """docs/simulation.md's tables for the roofline's structure (pure)."""
    s = results["structure"]
    meta = results["meta"]
    lines = [
        f"Produced by `{COMMAND}` on {meta['date']} (agentload {meta['agentload']}, "
        f"aiconfigurator-core {meta['aiconfigurator_core']}, {meta['cpu_s']:.0f} s of CPU) into "
        "`src/agentload/sim/data/roofline_structure.json`; `--markdown` prints these tables.",
        "",
        "| structure (shared by every system) | fitted | all systems' rows: RMS log error | "
        "largest error |",
        "| --- | ---: | ---: | ---: |",
    ]
    fit = results["fit"]
    lines += [
        f"| tokens per expert at half the grouped GEMM's efficiency | "
        f"{s['expert_half_tokens']:.3g} | {fit['body']['rms_log_error']:.3f} | "
        f"{_pct(fit['body']['largest_error'])} |",
        f"| busiest GPU of the expert group (x z(G) x sd) | {s['expert_imbalance']:.3g} | | |",
        f"| link efficiency of collectives | {s['link_efficiency']:.3g} | | |",
        f"| latency per collective | {s['collective_latency_s'] * 1e6:.1f} us | | |",
        f"| attention efficiency (of its dtype's peak) | {s['attention_efficiency']:.3g} | "
        f"{fit['attention']['rms_log_error']:.3f} | {_pct(fit['attention']['largest_error'])} |",
        f"| attention latency per layer | {s['attention_latency_s'] * 1e6:.1f} us | | |",
        "",
        "Each system's own factors on the operator data (the roofline calibrated on measured "
        "kernels), and leaving it out: the structure refitted without it, then its three "
        "factors fitted with that structure (it transfers), or the others' mean factors "
        "(from its datasheet alone); the attention efficiency fitted without it, on its "
        "attention rows:",
        "",
        "| system | compute | bandwidth | overhead | fit: RMS / largest | left out, own factors: "
        "RMS / largest | left out, mean factors: RMS / largest | left out, attention: RMS / "
        "largest |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for system in SYSTEMS:
        f = results["systems"][system]
        held = results["leave_one_out"][system]
        lines.append(
            f"| {system} | {f['compute_efficiency']:.3f} | {f['bandwidth_efficiency']:.3f} | "
            f"{f['step_overhead_s'] * 1e3:.2f} ms | {_pair(f['fit'])} | "
            f"{_pair(held['own_factors'])} | {_pair(held['mean_factors'])} | "
            f"{_pair(held['attention'])} |"
        )
    lines += [
        "",
        "Per kind and layout (all systems, fitted factors):",
        "",
        "| rows | RMS log error | largest error |",
        "| --- | ---: | ---: |",
    ]
    for key, summary in results["by_layout"].items():
        lines.append(
            f"| {key} | {summary['rms_log_error']:.3f} | {_pct(summary['largest_error'])} |"
        )
    return "\n".join(lines) + "\n"


def _pair(summary: Mapping[str, float]) -> str:
    return f"{summary['rms_log_error']:.3f} / {_pct(summary['largest_error'])}"


def _pct(x: float) -> str:
    return f"{x:+.0%}"


def run() -> dict[str, Any]:
    """Collect, fit, leave out: the file's content."""
    began = time.process_time()
    v4, v3 = model_shape(MODEL), model_shape(ATTENTION_MODEL)
    body, slopes = collect()
    values = fit_body(body, v4, SYSTEMS)
    errors = body_errors(body, v4, values)
    bandwidth = {s: values[f"{s}/bandwidth_efficiency"] for s in SYSTEMS}
    attention, attention_errors = fit_attention(slopes, v3, bandwidth)
    structure = RooflineStructure(
        **{n: values[n] for n in SHAPE_FACTORS},
        attention_efficiency=attention[0],
        attention_latency_s=attention[1],
    )
    systems = {}
    for system in SYSTEMS:
        mine = [e for r, e in zip(body, errors, strict=True) if r.system == system]
        systems[system] = {
            **{f: values[f"{system}/{f}"] for f in SYSTEM_FACTORS},
            "fit": _summary(mine),
        }
    return {
        "_about": (
            "The roofline's structure (agentload.sim.steps.structure), fitted on "
            "aiconfigurator-core's operator data by bench/roofline_structure.py, with each "
            "system's own factors on that data and the leave-one-system-out errors."
        ),
        "structure": structure.model_dump(),
        "basis": (
            f"fitted on aiconfigurator-core {aic_version()} operator data: {MODEL} on "
            f"{BACKEND} ({', '.join(SYSTEMS)}; DEP4, DEP8, TP4, TP8; decode and prefill steps "
            f"without attention) and {ATTENTION_MODEL} on {ATTENTION_BACKEND} (TP8; prefill "
            "and decode attention, 2K-128K of context)"
        ),
        "fit": {"body": _summary(errors), "attention": _summary(attention_errors)},
        "systems": systems,
        "by_layout": by_layout(body, errors),
        "leave_one_out": leave_one_out(body, slopes, v4, v3),
        "rows": {"body": [r.as_dict() for r in body], "attention": [r.as_dict() for r in slopes]},
        "meta": {
            "date": datetime.datetime.now(datetime.UTC).date().isoformat(),
            "agentload": __version__,
            "aiconfigurator_core": aic_version(),
            "cpu_s": time.process_time() - began,
            "python": sys.version.split()[0],
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--markdown", action="store_true", help="print the docs' tables only")
    args = parser.parse_args(argv)
    if args.markdown:
        print(render_markdown(json.loads(args.out.read_text())), end="")
        return 0
    results = run()
    args.out.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    print(render_markdown(results), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
