"""Roofline factors per system, fitted on InferenceX's published figures of that system.

    PYTHONPATH=src .venv/bin/python bench/sim_systems.py            # fit, write, print tables
    PYTHONPATH=src .venv/bin/python bench/sim_systems.py --markdown # the docs' tables only

The roofline's default efficiencies (compute 0.5, bandwidth 0.7, 4 ms a step) are guesses, the
same for every vendor. For each system with published points in `bench/data/inferencex/dsr1.json`
(DeepSeek-R1 on SGLang, one node, aggregated: InferenceX's per-GPU throughput, median
interactivity and median TTFT), this fits the roofline's compute efficiency, bandwidth
efficiency and step overhead to the per-GPU throughput and the interactivity of its points at
1K and 8K input tokens, replaying InferenceX's client on the simulated deployment
(`bench.servebench`), then predicts every point, those at `HELD_OUT_CONC` concurrent
requests held out. Only the points published on the system's latest date are fitted (one
software version: an older image's points are predicted and shown, not fitted, and left out
of the band); when those are all at one input length, compute efficiency keeps its default
(1K-input points alone leave it unidentified: fitted anyway it runs to its bound and misses the
8K points by up to 68%).
A system's error band is the largest error of its held-out figures (throughput and
interactivity); the band of a system nothing calibrates is the largest error of the default
factors over every published point checked (each system's latest software). TTFT is compared,
not fitted (the simulated engine has no HTTP server, tokenizer or scheduler queue in front of
it).

It writes `src/agentload/sim/data/roofline_systems.json` (the factors and bands the simulator
uses, with every error) and `--markdown` prints docs/simulation.md's tables from it; a test
checks the docs hold exactly them. About 5 minutes of CPU.
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
from bench.servebench import BenchFigures, ServeBench, run_servebench  # noqa: E402

POINTS = REPO / "bench" / "data" / "inferencex" / "dsr1.json"
OUT = REPO / "src" / "agentload" / "sim" / "data" / "roofline_systems.json"
COMMAND = "PYTHONPATH=src .venv/bin/python bench/sim_systems.py"
MODEL = "deepseek-ai/DeepSeek-V3"
"""DeepSeek-R1 has DeepSeek-V3's architecture (its config is the one shipped here)."""
BACKEND = "sglang"
HELD_OUT_CONC = (8, 32)
"""Points at these concurrencies are held out (predicted, not fitted), at every input length."""
FIGURES = ("total_tokens_per_s", "p50_output_tokens_per_s")
"""Fitted: per-GPU throughput (`total_tokens_per_s` carries it) and interactivity (the median
per-request speed carries it)."""
FACTORS = (
    Factor(name="compute_efficiency", start=0.5, lower=0.02, upper=1.0),
    Factor(name="bandwidth_efficiency", start=0.7, lower=0.02, upper=1.0),
    Factor(name="step_overhead_s", start=0.004, lower=1e-4, upper=0.05),
)
GLOBAL_SAMPLES = 32
EVALUATIONS = 120


def spec_for(precision: str) -> ModelShape:
    """DeepSeek-R1 at the published precision: FP8 as shipped; FP4 (NVFP4 / MXFP4 checkpoints
    quantise the routed experts) counted here as every weight at 4 bits, computed at FP4."""
    base = model_shape(MODEL)
    if precision == "fp8":
        return base
    return base.model_copy(
        update={"name": f"{MODEL}-{precision}", "weight_dtype": precision, "expert_dtype": None}
    )


def request_for(group: Mapping[str, Any], params: RooflineParams) -> DeploymentSpec:
    return DeploymentSpec(
        system=group["system"],
        backend=BACKEND,
        model=MODEL,
        gpus=group["tp"],
        parallel=f"tp{group['tp']},ep{group['ep']}",
        steps="roofline",
        roofline=params,
    )


def predict(group: Mapping[str, Any], params: RooflineParams) -> list[BenchFigures]:
    """Each point of the group simulated with these factors."""
    model = spec_for(group["precision"])
    config = build_deployment(request_for(group, params), model).config
    return [
        run_servebench(config, ServeBench(isl=p["isl"], osl=p["osl"], conc=p["conc"]))
        for p in group["points"]
    ]


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
                "fitted": False,
                "current": True,
                **{
                    name: {
                        "published": point[name],
                        "simulated": getattr(guess, name),
                        "error": getattr(guess, name) / point[name] - 1,
                    }
                    for name in ("tput_per_gpu", "median_intvty", "median_ttft")
                },
            }
        )
    return rows


BAND_FIGURES = ("tput_per_gpu", "median_intvty")


def largest_error(rows: Sequence[Mapping[str, Any]]) -> float:
    return max(abs(row[name]["error"]) for row in rows for name in BAND_FIGURES)


def current_defaults(entry: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The default factors' errors on a system's points of its latest software."""
    return [
        default
        for default, row in zip(entry["default_errors"], entry["errors"], strict=True)
        if row["current"]
    ]


def fit_group(group: Mapping[str, Any]) -> dict[str, Any]:
    """The group's factors fitted on its points but the held-out ones; every point's errors with
    them and with the default factors."""
    latest = max(p["date"] for p in group["points"])
    current = [p for p in group["points"] if p["date"] == latest]
    fitted = [p for p in current if p["conc"] not in HELD_OUT_CONC]
    subset = {**group, "points": fitted}
    lengths = {p["isl"] for p in fitted}
    factors = [f for f in FACTORS if len(lengths) > 1 or f.name != "compute_efficiency"]
    began = time.process_time()

    def model(values: Mapping[str, float]) -> list[ProbePoint]:
        guesses = predict(subset, RooflineParams(**values))
        return [probe(g, p["conc"]) for g, p in zip(guesses, fitted, strict=True)]

    found = fit(
        [probe(p, p["conc"]) for p in fitted],
        model,
        factors,
        figures=FIGURES,
        max_evaluations=EVALUATIONS,
        global_samples=GLOBAL_SAMPLES,
    )
    params = RooflineParams(**found.factors)
    rows = errors(group["points"], predict(group, params))
    for row, point in zip(rows, group["points"], strict=True):
        row["fitted"] = point in fitted
        row["current"] = point["date"] == latest
    defaults = errors(group["points"], predict(group, RooflineParams()))
    held = [r for r in rows if not r["fitted"] and r["current"]]
    older = sorted({p["date"] for p in group["points"] if p["date"] != latest})
    kept = "" if len(factors) == len(FACTORS) else "; compute efficiency kept at its default"
    return {
        "factors": params.model_dump(include={f.name for f in FACTORS}),
        "rms_log_error": found.rms_log_error,
        "evaluations": found.evaluations,
        "cpu_s": time.process_time() - began,
        "error_band": largest_error(held or rows),
        "basis": (
            f"DeepSeek-R1 {group['precision'].upper()} on {group['framework']} at TP{group['tp']}, "
            f"{len(fitted)} InferenceX points of {latest} fitted "
            f"({' and '.join(f'{n // 1024}K' for n in sorted(lengths))} input, 1K output), "
            f"{len(held)} at {' and '.join(str(c) for c in HELD_OUT_CONC)} concurrent requests "
            f"held out (band: their largest throughput or interactivity error)"
            + (
                f"; points of {' and '.join(older)} (an older image) predicted, not fitted"
                if older
                else ""
            )
            + kept
        ),
        "group": {k: v for k, v in group.items() if k != "points"},
        "errors": rows,
        "default_errors": defaults,
    }


def render_markdown(results: Mapping[str, Any]) -> str:
    """docs/simulation.md's tables for the systems' calibration (pure)."""
    meta = results["meta"]
    lines = [
        f"Produced by `{COMMAND}` on {meta['date']} (agentload {meta['agentload']}, "
        f"{meta['cpu_s']:.0f} s of CPU) into `src/agentload/sim/data/roofline_systems.json`; "
        "`--markdown` prints these tables from it.",
        "",
        "| system | published points (fitted / held out / older image) | compute efficiency | "
        "bandwidth efficiency | step overhead | fit RMS log error | held-out error band | default "
        "factors' largest error |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, entry in results["systems"].items():
        f = entry["factors"]
        g = entry["group"]
        fitted = sum(r["fitted"] for r in entry["errors"])
        held = sum(not r["fitted"] and r["current"] for r in entry["errors"])
        older = sum(not r["current"] for r in entry["errors"])
        lines.append(
            f"| {name} | DeepSeek-R1 {g['precision'].upper()}, {g['framework']}, TP{g['tp']} "
            f"({fitted} / {held}{f' / {older} older' if older else ''}) | "
            f"{f['compute_efficiency']:.3f} | "
            f"{f['bandwidth_efficiency']:.3f} | {f['step_overhead_s'] * 1e3:.2f} ms | "
            f"{entry['rms_log_error']:.3f} | ±{entry['error_band']:.0%} | "
            f"{largest_error(current_defaults(entry)):.0%} |"
        )
    band = results["uncalibrated"]
    lines += [
        f"| any other system (the roofline's defaults: compute 0.5, bandwidth 0.7, 4 ms) | "
        f"none | 0.5 | 0.7 | 4.00 ms | — | ±{band['error_band']:.0%} | — |",
        "",
        "Every point, published beside simulated with the calibrated factors (held out: "
        f"{' and '.join(str(c) for c in HELD_OUT_CONC)} concurrent requests) and, last column, "
        "with the defaults:",
        "",
        "| system | ISL/OSL | conc | tok/s/GPU published | simulated | error | tok/s/user "
        "published | simulated | error | median TTFT published, s | simulated, s | defaults' "
        "tok/s/GPU error |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, entry in results["systems"].items():
        for row, default in zip(entry["errors"], entry["default_errors"], strict=True):
            t, i, f = row["tput_per_gpu"], row["median_intvty"], row["median_ttft"]
            shape = f"{row['isl'] // 1024}K/{row['osl'] // 1024}K" + (
                "" if row["fitted"] else " (held out)" if row["current"] else " (older image)"
            )
            lines.append(
                f"| {name} | {shape} | {row['conc']} | {t['published']:,.0f} | "
                f"{t['simulated']:,.0f} | {_pct(t['error'])} | {i['published']:.1f} | "
                f"{i['simulated']:.1f} | {_pct(i['error'])} | {f['published']:.3f} | "
                f"{f['simulated']:.3f} | {_pct(default['tput_per_gpu']['error'])} |"
            )
    return "\n".join(lines) + "\n"


def _pct(x: float) -> str:
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
    systems = {}
    for group in data["groups"]:
        systems[group["system"]] = fit_group(group)
        print(f"{group['system']}: {systems[group['system']]['cpu_s']:.0f} s", file=sys.stderr)
    worst = max(largest_error(current_defaults(e)) for e in systems.values())

    checked = ", ".join(systems)
    results = {
        "_about": (
            "Roofline factors per system fitted on public figures of that system, with every "
            f"error; written by bench/sim_systems.py from {POINTS.relative_to(REPO)} (source "
            "and licence there); read by agentload.sim.steps.systems."
        ),
        "source": data["source"],
        "systems": systems,
        "uncalibrated": {
            "error_band": worst,
            "basis": (
                "the roofline's default factors were off by up to "
                f"{worst:.0%} (per-GPU throughput or interactivity) on the published "
                f"points of {checked} (each system's latest software)"
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
    return 0 if all(math.isfinite(e["error_band"]) for e in systems.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
