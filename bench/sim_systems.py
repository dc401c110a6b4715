"""Roofline factors per system, fitted on InferenceX's published figures of that system, per regime.

    PYTHONPATH=src .venv/bin/python bench/sim_systems.py            # fit, write, print tables
    PYTHONPATH=src .venv/bin/python bench/sim_systems.py --markdown # the docs' tables only

The roofline's structure is common to every system (`bench/roofline_structure.py`, fitted on
operator data); what differs per system is how close its kernels get to its datasheet. For
each system with a `calibration` group in `bench/data/inferencex/dsr1.json` (DeepSeek-R1, one
node, aggregated, one software date: InferenceX's per-GPU throughput, median interactivity and
median TTFT), this fits the roofline's compute efficiency, bandwidth efficiency, step overhead
and, where the group has long prompts, attention efficiency to the throughput and the
interactivity of its points, replaying InferenceX's client on the simulated deployment
(`bench.servebench`), with the points at `HELD_OUT_CONC` concurrent requests held out. It
reports the fit **per regime** of prompt and output lengths (1K/1K, 8K/1K, 1K/8K): the fitted
points' RMS log error and the held-out points' largest error. The **long-context** regime's
held-out error (8K input tokens: agents' calls average ~27K) is the system's stated
uncertainty (`simulated.uncertainty.error_band` and `long_context_band` of every simulated
result on it). Two checks beside it: the same factors fitted on the 1K/1K points alone and
their error at 8K/1K (what a short-prompt calibration misses), and every `validation` group of
the system (another engine, precision or date) predicted with the calibration.

The band of a system nothing calibrates is the largest error of the default factors over the
calibration groups. The band of aiconfigurator-core's operator data (GB300, B300, H200 and the
other NVIDIA systems it has): its own long-context error on the published points where it has
their model at their precision (`OPERATOR_DATA`), every point predicted, nothing fitted. TTFT
is compared, not fitted (the simulated engine has no HTTP server, tokenizer or scheduler queue
in front of it).

It writes `src/agentload/sim/data/roofline_systems.json` (the factors and bands the simulator
uses, with every error) and `--markdown` prints docs/simulation.md's tables from it; a test
checks the docs hold exactly them. A few minutes of CPU.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agentload import __version__  # noqa: E402
from agentload.sim.calibration.fit import Factor, fit  # noqa: E402
from agentload.sim.predict import ProbePoint  # noqa: E402
from agentload.sim.setup.build import DeploymentSpec, build_deployment  # noqa: E402
from agentload.sim.specs.model import ModelShape, model_shape  # noqa: E402
from agentload.sim.steps.roofline import RooflineParams  # noqa: E402
from agentload.sim.steps.structure import structure  # noqa: E402
from bench import roofline_structure  # noqa: E402
from bench.servebench import BenchFigures, ServeBench, run_servebench  # noqa: E402

POINTS = REPO / "bench" / "data" / "inferencex" / "dsr1.json"
OUT = REPO / "src" / "agentload" / "sim" / "data" / "roofline_systems.json"
COMMAND = "PYTHONPATH=src .venv/bin/python bench/sim_systems.py"
MODELS = {"dsr1": "deepseek-ai/DeepSeek-V3", "dsv4": "deepseek-ai/DeepSeek-V4-Pro"}
"""InferenceX's model names: DeepSeek-R1 has DeepSeek-V3's architecture (its config is the one
shipped here); DeepSeek-V4-Pro as released (FP4 experts)."""
FAMILIES = {"dsv4": "deepseek-v4"}
"""Models whose calibration is their own (`steps.systems.FAMILIES`); every other model a
system simulates takes the system's DeepSeek-R1 calibration."""
BACKEND = "sglang"
HELD_OUT_CONC = (8, 32)
"""Points at these concurrencies are held out (predicted, not fitted), in every regime; in a
group of several layouts, each layout without such a point has its median concurrency held
out too (`held_out`)."""
LONG_INPUT = 8192
"""Input tokens from which a regime counts as long-context."""
FIGURES = ("total_tokens_per_s", "p50_output_tokens_per_s")
"""Fitted: per-GPU throughput (`total_tokens_per_s` carries it) and interactivity (the median
per-request speed carries it)."""
BAND_FIGURES = ("tput_per_gpu", "median_intvty")
FACTORS = (
    Factor(name="compute_efficiency", start=0.5, lower=0.02, upper=1.0),
    Factor(name="bandwidth_efficiency", start=0.7, lower=0.02, upper=1.0),
    Factor(name="step_overhead_s", start=0.004, lower=1e-4, upper=0.05),
)
ATTENTION = Factor(name="attention_efficiency", start=0.5, lower=0.02, upper=1.0)
"""Fitted where the calibration group has long prompts (they identify it); else the
structure's, fitted on operator data."""
GLOBAL_SAMPLES = 32
EVALUATIONS = 120


def regime(point: Mapping[str, Any]) -> str:
    """`8K/1K`: a point's input / output lengths in thousands of tokens."""
    return f"{point['isl'] // 1024}K/{point['osl'] // 1024}K"


def spec_for(group: Mapping[str, Any]) -> ModelShape:
    """The group's model at its published precision. DeepSeek-R1: FP8 as shipped; FP4 (NVFP4 /
    MXFP4 checkpoints quantise the routed experts) counted as every weight at 4 bits, computed
    at FP4. DeepSeek-V4-Pro: as released (FP8, FP4 experts)."""
    name = MODELS[group["model"]]
    base = model_shape(name)
    if group["precision"] == "fp8" or group["model"] != "dsr1":
        return base
    precision = group["precision"]
    return base.model_copy(
        update={"name": f"{name}-{precision}", "weight_dtype": precision, "expert_dtype": None}
    )


def layout_of(group: Mapping[str, Any], point: Mapping[str, Any]) -> str:
    """A point's parallel layout: its own where the source gives one, else the group's."""
    return str(point.get("parallel") or f"tp{group['tp']},ep{group['ep']}")


def request_for(group: Mapping[str, Any], params: RooflineParams, parallel: str) -> DeploymentSpec:
    return DeploymentSpec(
        system=group["system"],
        backend=BACKEND,
        model=MODELS[group["model"]],
        gpus=group["tp"],
        parallel=parallel,
        steps="roofline",
        roofline=params,
    )


def predict(
    group: Mapping[str, Any], params: RooflineParams, points: Sequence[Mapping[str, Any]] = ()
) -> list[BenchFigures]:
    """Each point of the group (or `points`) simulated with these factors."""
    model = spec_for(group)
    configs = {}
    out = []
    for p in points or group["points"]:
        parallel = layout_of(group, p)
        if parallel not in configs:
            configs[parallel] = build_deployment(request_for(group, params, parallel), model).config
        out.append(
            run_servebench(
                configs[parallel], ServeBench(isl=p["isl"], osl=p["osl"], conc=p["conc"])
            )
        )
    return out


def probe(figures: BenchFigures | Mapping[str, Any], conc: int) -> ProbePoint:
    get = figures.get if isinstance(figures, Mapping) else figures.__getattribute__
    return ProbePoint(
        agents=conc,
        window_s=0.0,
        requests=0,
        total_tokens_per_s=get("tput_per_gpu"),
        p50_output_tokens_per_s=get("median_intvty"),
        p50_ttft_s=get("median_ttft"),
    )


def errors(
    points: Sequence[Mapping[str, Any]], predicted: Sequence[BenchFigures]
) -> list[dict[str, Any]]:
    """Each point's published figures beside the simulated ones, with the errors."""
    rows = []
    for point, guess in zip(points, predicted, strict=True):
        rows.append(
            {
                "isl": point["isl"],
                "osl": point["osl"],
                "conc": point["conc"],
                "regime": regime(point),
                "fitted": False,
                **{
                    name: {
                        "published": point[name],
                        "simulated": getattr(guess, name),
                        "error": None
                        if point[name] is None
                        else getattr(guess, name) / point[name] - 1,
                    }
                    for name in ("tput_per_gpu", "median_intvty", "median_ttft")
                },
            }
        )
    return rows


def largest_error(rows: Sequence[Mapping[str, Any]]) -> float | None:
    """The largest throughput or interactivity error of `rows` (None: no rows)."""
    values = [abs(row[name]["error"]) for row in rows for name in BAND_FIGURES]
    return max(values) if values else None


def _rms(rows: Sequence[Mapping[str, Any]]) -> float | None:
    logs = [math.log1p(row[name]["error"]) for row in rows for name in BAND_FIGURES]
    return math.sqrt(sum(v * v for v in logs) / len(logs)) if logs else None


def held_out(group: Mapping[str, Any], point: Mapping[str, Any]) -> bool:
    """Whether a point is held out: at `HELD_OUT_CONC`, or the median concurrency of a layout of
    the group that has no point there (DeepSeek V4 on MI355X: DP8 attention at 128-512)."""
    if point["conc"] in HELD_OUT_CONC:
        return True
    layout = layout_of(group, point)
    mine = sorted(p["conc"] for p in group["points"] if layout_of(group, p) == layout)
    return not set(mine) & set(HELD_OUT_CONC) and point["conc"] == mine[len(mine) // 2]


def fit_points(
    group: Mapping[str, Any], points: Sequence[Mapping[str, Any]]
) -> tuple[RooflineParams, float, int]:
    """The factors fitted on `points` of `group`: (factors, RMS log error, evaluations)."""
    subset = {**group, "points": list(points)}
    lengths = {p["isl"] for p in points}
    factors = [f for f in FACTORS if len(lengths) > 1 or f.name != "compute_efficiency"]
    if max(lengths) >= LONG_INPUT:
        factors.append(ATTENTION)

    def model(values: Mapping[str, float]) -> list[ProbePoint]:
        guesses = predict(subset, RooflineParams(**values))
        return [probe(g, p["conc"]) for g, p in zip(guesses, points, strict=True)]

    found = fit(
        [probe(p, p["conc"]) for p in points],
        model,
        factors,
        figures=FIGURES,
        max_evaluations=EVALUATIONS,
        global_samples=GLOBAL_SAMPLES,
    )
    return RooflineParams(**found.factors), found.rms_log_error, found.evaluations


def by_regime(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The calibration's fit and held-out error per regime."""
    out = []
    for name in sorted({r["regime"] for r in rows}, key=lambda n: (len(n), n)):
        mine = [r for r in rows if r["regime"] == name]
        fitted = [r for r in mine if r["fitted"]]
        held = [r for r in mine if not r["fitted"]]
        out.append(
            {
                "regime": name,
                "input_tokens": mine[0]["isl"],
                "output_tokens": mine[0]["osl"],
                "fitted_points": len(fitted),
                "held_out_points": len(held),
                "fit_rms_log_error": _rms(fitted),
                "held_out_error": largest_error(held),
            }
        )
    return out


def long_context_error(regimes: Sequence[Mapping[str, Any]]) -> float | None:
    """The largest held-out error over the long-context regimes (None: none checked)."""
    values = [
        r["held_out_error"]
        for r in regimes
        if r["input_tokens"] >= LONG_INPUT and r["held_out_error"] is not None
    ]
    return max(values) if values else None


def short_fit(group: Mapping[str, Any]) -> dict[str, Any] | None:
    """The factors fitted on the group's 1K-input points alone, and their long-context error."""
    short = [p for p in group["points"] if p["isl"] < LONG_INPUT and p["osl"] < LONG_INPUT]
    long = [p for p in group["points"] if p["isl"] >= LONG_INPUT]
    if not short or not long:
        return None
    params, rms, _ = fit_points(group, [p for p in short if p["conc"] not in HELD_OUT_CONC])
    rows = errors(long, predict(group, params, long))
    return {"factors": _factors(params), "long_context_error": largest_error(rows), "rms": rms}


def _factors(params: RooflineParams) -> dict[str, float]:
    return params.model_dump(exclude_none=True, exclude={"sequence_overhead_s", "tokens_per_step"})


MODEL_WORDS = {"dsr1": "DeepSeek-R1", "dsv4": "DeepSeek-V4-Pro"}


def _describe(group: Mapping[str, Any]) -> str:
    layouts = group.get("layouts") or sorted({layout_of(group, p) for p in group["points"]})
    where = (
        " and ".join(layouts)
        if len(layouts) > 1
        else f"TP{group['tp']}" + (f" EP{group['ep']}" if group["ep"] > 1 else "")
    )
    model = f"{MODEL_WORDS[group['model']]} {group['precision'].upper()}"
    return f"{model} on {group['framework']} at {where}"


def fit_group(group: Mapping[str, Any], validation: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A system's calibration: factors fitted on its group but the held-out points, every
    point's errors with them and with the default factors, per regime; the short-prompt fit's
    long-context error; the validation groups predicted."""
    began = time.process_time()
    fitted = [p for p in group["points"] if not held_out(group, p)]
    params, rms, evaluations = fit_points(group, fitted)
    rows = errors(group["points"], predict(group, params))
    for row, point in zip(rows, group["points"], strict=True):
        row["fitted"] = point in fitted
    regimes = by_regime(rows)
    band = long_context_error(regimes)
    checks = []
    for other in validation:
        other_rows = errors(other["points"], predict(other, params))
        checks.append(
            {
                "group": _describe(other),
                "note": other.get("note", ""),
                "dates": sorted({p["date"] for p in other["points"]}),
                "regimes": by_regime(other_rows),
                "errors": other_rows,
            }
        )
    dates = sorted({p["date"] for p in group["points"]})
    lengths = " and ".join(sorted({regime(p) for p in fitted}, key=lambda n: (len(n), n)))
    return {
        "factors": _factors(params),
        "rms_log_error": rms,
        "evaluations": evaluations,
        "cpu_s": time.process_time() - began,
        "error_band": band
        if band is not None
        else largest_error([r for r in rows if not r["fitted"]]),
        "long_context_error": band,
        "regimes": regimes,
        "basis": (
            f"{_describe(group)}, InferenceX points of {' and '.join(dates)}: {len(fitted)} "
            f"fitted ({lengths}), {len(rows) - len(fitted)} at "
            f"{' and '.join(str(c) for c in HELD_OUT_CONC)} concurrent requests (and a layout's "
            "median without them) held out; band: "
            "their largest long-context (8K-input) throughput or interactivity error"
        ),
        "group": {
            **{k: v for k, v in group.items() if k not in ("points", "source")},
            "layouts": sorted({layout_of(group, p) for p in group["points"]}),
        },
        "errors": rows,
        "default_errors": errors(group["points"], predict(group, RooflineParams())),
        "short_fit": short_fit(group),
        "validation": checks,
    }


OPERATOR_DATA = {"h200_sxm": ("vllm", "deepseek-ai/DeepSeek-V3", "tp8,ep8")}
"""Systems whose operator data (aiconfigurator-core) holds the published points' model at their
precision (FP8 DeepSeek-R1: its vLLM data; the library has no SGLang or TensorRT-LLM data of
it): backend, model and layout its long-context error is checked with."""


def operator_long_context(data: Mapping[str, Any]) -> dict[str, Any]:
    """The operator data's error on the published points of the systems in `OPERATOR_DATA`
    (every FP8 DeepSeek-R1 group of the system, every point predicted, none fitted), per regime,
    and the band every deployment on operator data states: the largest long-context error
    checked (a system not checked carries it)."""
    checked: dict[str, Any] = {}
    for system, (backend, model, parallel) in OPERATOR_DATA.items():
        spec = DeploymentSpec(
            system=system, backend=backend, model=model, gpus=8, parallel=parallel, steps="aic"
        )
        built = build_deployment(spec)
        groups = [
            g
            for g in data["groups"]
            if g["system"] == system and g["model"] == "dsr1" and g["precision"] == "fp8"
        ]
        rows = []
        for group in groups:
            figures = [
                run_servebench(built.config, ServeBench(isl=p["isl"], osl=p["osl"], conc=p["conc"]))
                for p in group["points"]
            ]
            rows += [{**r, "group": _describe(group)} for r in errors(group["points"], figures)]
        regimes = by_regime(rows)
        checked[system] = {
            "step_source": built.step_source,
            "groups": [_describe(g) for g in groups],
            "regimes": regimes,
            "long_context_error": long_context_error(regimes),
            "errors": rows,
        }
    band = max(e["long_context_error"] for e in checked.values())
    return {
        "checked": checked,
        "error_band": band,
        "basis": (
            "aiconfigurator-core's operator data against InferenceX's published long-context "
            f"(8K-input) points of {', '.join(checked)} (FP8 DeepSeek-R1, SGLang and "
            "TensorRT-LLM measured, the library's vLLM kernels: an engine difference included), "
            f"largest throughput or interactivity error {band:.0%}"
        ),
    }


def operator_check(systems: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """How a roofline calibrated on a system's published DeepSeek-R1 points predicts that
    system's operator data for DeepSeek-V4-Pro-FP8 (the rows `bench/roofline_structure.py`
    fitted): the leave-one-system-out of the method MI355X is simulated with, on the systems
    that have both."""
    stored = json.loads(roofline_structure.OUT.read_text())
    model = model_shape(roofline_structure.MODEL)
    out: dict[str, Any] = {}
    for system, entry in systems.items():
        rows = [
            roofline_structure.Row(**r) for r in stored["rows"]["body"] if r["system"] == system
        ]
        if not rows:
            continue
        values = {**stored["structure"]}
        values.update(
            {f"{system}/{f}": entry["factors"][f] for f in roofline_structure.SYSTEM_FACTORS}
        )
        found = roofline_structure.body_errors(rows, model, values)
        groups: dict[str, list[float]] = {}
        for row, error in zip(rows, found, strict=True):
            groups.setdefault(f"{row.kind} tp{row.tp},dp{row.dp}", []).append(error)
        out[system] = {
            key: {"bias": math.expm1(sum(v) / len(v)), **roofline_structure._summary(v)}
            for key, v in sorted(groups.items())
        }
    return out


def calibrations(results: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """Every calibration, named by system (and model family where it has its own)."""
    named = list(results["systems"].items())
    for family, entries in results.get("families", {}).items():
        named += [(f"{system} ({family})", entry) for system, entry in entries.items()]
    return named


def render_markdown(results: Mapping[str, Any]) -> str:
    """docs/simulation.md's tables for the systems' calibration (pure)."""
    meta = results["meta"]
    lines = [
        f"Produced by `{COMMAND}` on {meta['date']} (agentload {meta['agentload']}, "
        f"{meta['cpu_s']:.0f} s of CPU) into `src/agentload/sim/data/roofline_systems.json`; "
        "`--markdown` prints these tables from it.",
        "",
        "| system | calibrated on | compute | bandwidth | overhead | attention | fit RMS log "
        "error | stated band (long-context held-out error) | 1K-only fit's 8K/1K error | "
        "default factors' largest error |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, entry in calibrations(results):
        f = entry["factors"]
        short = entry["short_fit"]
        attention = f.get("attention_efficiency")
        lines.append(
            f"| {name} | {_describe(entry['group'])} | {f['compute_efficiency']:.3f} | "
            f"{f['bandwidth_efficiency']:.3f} | {f['step_overhead_s'] * 1e3:.2f} ms | "
            f"{'structure' if attention is None else f'{attention:.3f}'} | "
            f"{entry['rms_log_error']:.3f} | ±{entry['error_band']:.0%} | "
            f"{'—' if short is None else _pct(short['long_context_error'])} | "
            f"{largest_error(entry['default_errors']):.0%} |"
        )
    band = results["uncalibrated"]
    lines += [
        f"| any other system (the roofline's defaults: compute 0.5, bandwidth 0.7, 4 ms) | none "
        f"| 0.5 | 0.7 | 4.00 ms | structure | — | ±{band['error_band']:.0%} | — | — |",
        "",
        "Per regime (input/output tokens): the calibration's fitted points and the points held "
        "out (8 and 32 concurrent requests), and every validation group predicted with the "
        "calibration (another engine, precision or date):",
        "",
        "| system | group | regime | fitted / held out | fit RMS log error | held-out or "
        "predicted: largest error |",
        "| --- | --- | --- | ---: | ---: | ---: |",
    ]
    for name, entry in calibrations(results):
        groups = [("calibration", entry["regimes"])] + [
            (f"{v['group']} ({', '.join(v['dates'])})", v["regimes"]) for v in entry["validation"]
        ]
        for label, regimes in groups:
            for r in regimes:
                fit_rms = r["fit_rms_log_error"]
                lines.append(
                    f"| {name} | {label} | {r['regime']} | {r['fitted_points']} / "
                    f"{r['held_out_points']} | {'—' if fit_rms is None else f'{fit_rms:.3f}'} | "
                    f"{_pct(r['held_out_error'])} |"
                )
    lines += [
        "",
        "The method checked where operator data exists: each calibration's factors (fitted on "
        "the system's published DeepSeek-R1 points) predicting that system's operator data for "
        "DeepSeek-V4-Pro-FP8 on SGLang (decode steps without attention at batch 1-512, prefill "
        "without attention at 64-8,192 tokens; `bench/roofline_structure.py`'s rows):",
        "",
        "| system | rows | bias (geometric mean of predicted / operator data - 1) | RMS log "
        "error | largest error |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for system, groups in results.get("operator_check", {}).items():
        for key, g in groups.items():
            lines.append(
                f"| {system} | {key} | {_pct(g['bias'])} | {g['rms_log_error']:.3f} | "
                f"{_pct(g['largest_error'])} |"
            )
    operator = results["operator_data"]
    lines += [
        "",
        "The operator data's own long-context error, where the library has the published "
        "points' model at their precision: every point predicted with aiconfigurator-core's "
        "step times, nothing fitted. The largest long-context error is the band every "
        "deployment on operator data states (a system not checked carries it, and says so):",
        "",
        "| system | operator data | groups | regime | points | largest error (either sign) |",
        "| --- | --- | --- | --- | ---: | ---: |",
    ]
    for system, entry in operator["checked"].items():
        for r in entry["regimes"]:
            lines.append(
                f"| {system} | {entry['step_source']} | {'; '.join(entry['groups'])} | "
                f"{r['regime']} | {r['held_out_points']} | ±{r['held_out_error']:.1%} |"
            )
    lines += [
        "",
        f"Band stated on operator data: ±{operator['error_band']:.0%}.",
        "",
        "Every calibration point, published beside simulated (held out: 8 and 32 concurrent "
        "requests) and, last column, with the defaults:",
        "",
        "| system | ISL/OSL | conc | tok/s/GPU published | simulated | error | tok/s/user "
        "published | simulated | error | median TTFT published, s | simulated, s | defaults' "
        "tok/s/GPU error |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, entry in calibrations(results):
        for row, default in zip(entry["errors"], entry["default_errors"], strict=True):
            t, i, f = row["tput_per_gpu"], row["median_intvty"], row["median_ttft"]
            shape = row["regime"] + ("" if row["fitted"] else " (held out)")
            lines.append(
                f"| {name} | {shape} | {row['conc']} | {t['published']:,.0f} | "
                f"{t['simulated']:,.0f} | {_pct(t['error'])} | {i['published']:.1f} | "
                f"{i['simulated']:.1f} | {_pct(i['error'])} | "
                f"{'—' if f['published'] is None else format(f['published'], '.3f')} | "
                f"{f['simulated']:.3f} | {_pct(default['tput_per_gpu']['error'])} |"
            )
    return "\n".join(lines) + "\n"


def _pct(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x:+.0%}" if abs(x) >= 0.995 else f"{x:+.1%}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--markdown", action="store_true", help="print the docs' tables only")
    args = parser.parse_args(argv)
    if args.markdown:
        print(render_markdown(json.loads(args.out.read_text())), end="")
        return 0
    data = json.loads(POINTS.read_text())
    began = time.process_time()
    systems: dict[str, Any] = {}
    families: dict[str, dict[str, Any]] = {}
    for group in (g for g in data["groups"] if g["role"] == "calibration"):
        validation = [
            g
            for g in data["groups"]
            if g["role"] == "validation"
            and g["system"] == group["system"]
            and g["model"] == group["model"]
        ]
        entry = fit_group(group, validation)
        family = FAMILIES.get(group["model"])
        (systems if family is None else families.setdefault(family, {}))[group["system"]] = entry
        print(f"{group['system']} {group['model']}: {entry['cpu_s']:.0f} s", file=sys.stderr)
    worst = max(largest_error(e["default_errors"]) or 0.0 for e in systems.values())
    results = {
        "_about": (
            "Roofline factors per system fitted on public figures of that system, with every "
            f"error per regime; written by bench/sim_systems.py from {POINTS.relative_to(REPO)} "
            "(sources and licence there); read by agentload.sim.steps.systems."
        ),
        "source": data["source"],
        "structure": structure().model_dump(),
        "systems": systems,
        "families": families,
        "operator_check": operator_check(systems),
        "operator_data": operator_long_context(data),
        "uncalibrated": {
            "error_band": worst,
            "basis": (
                "the roofline's default factors were off by up to "
                f"{worst:.0%} (per-GPU throughput or interactivity) on the calibration points "
                f"of {', '.join(systems)}"
            ),
        },
        "meta": {
            "date": datetime.datetime.now(datetime.UTC).date().isoformat(),
            "agentload": __version__,
            "cpu_s": time.process_time() - began,
            "python": sys.version.split()[0],
        },
    }
    args.out.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    print(render_markdown(results), end="")
    entries = [*systems.values(), *(e for f in families.values() for e in f.values())]
    return 0 if all(math.isfinite(e["error_band"]) for e in entries) else 1


if __name__ == "__main__":
    raise SystemExit(main())
