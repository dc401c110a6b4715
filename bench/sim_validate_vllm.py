"""The simulator against a real vLLM scheduler: each measured vLLM search calibrated on its own
probes at 1-4 agents and predicting the rest, the same searches with the step model fitted to
vLLM's step times alone, and a run whose KV cache is too small, with the errors against the
issue's goals.

    PYTHONPATH=src .venv/bin/python bench/sim_validate_vllm.py [--measured DIR] [--out FILE]
    PYTHONPATH=src .venv/bin/python bench/sim_validate_vllm.py --markdown   # the docs' tables

The measured runs (`bench/sim_measure_local.py --engine vllm`: vLLM's CPU build serving the
generated model on one thread beside the client) are in `--measured`, with the load the machine
was under: `RUNS` (the demo workload's search up to 12 agents: twice at different hours while
other work shared the machine, `search-demo-a` and `-b`, and once with the machine otherwise
idle, `search-demo-quiet`), `PRESSURE_RUN` (12 agents on a third of the KV cache) and `STEPS`
(`bench/vllm_steps.py`: prefill and decode step times and the API server's cost, measured alone
on the quiet machine). The simulated engine is vLLM's (`agentload.sim.engine.vllm`: its
scheduler, its CPU build's 128-token blocks, the token budget, running limit and KV tokens the
run's engine reported) behind its API server (`agentload.sim.engine.frontend`), its step times
the roofline on one vCPU (`VLLM_SYSTEM`) with one of two sets of factors:

- **probes** (the issue's method): the roofline's four factors and the API server's two fitted
  to every figure of the search's own probes at 1-4 agents (`calibrate_on_run`); the probes
  above 4 agents predicted.
- **steps**: the factors `bench/vllm_steps.py` fitted to vLLM's step times measured alone, and
  the API server's cost measured alone (no search figure fitted): every probe predicted.

Per search: total tokens/s at each probe, its own schedule of agents replayed (goal: within
15%); prefix hits per probe against vLLM's own counters (`vllm:prefix_cache_hits` over
`_queries` across the window; goal: within 2 points), the whole simulation's, and the cache
alone at the measured times (`bench/cachetrace.py`) with vLLM's 128-token blocks and with the
64-token blocks the simulator gave every backend before; each tier's most agents, `agentload
simulate` with the measured search's settings (goal: within 1 agent or 20%). For the pressure
run: its hit rate and the simulated preemptions beside vLLM's counters.

Results go to `--out` (JSON, with the date and versions); `--markdown` prints docs/simulation.md's
tables from it (a test checks the docs hold exactly them).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agentload.results.load import load_results, read_summary  # noqa: E402
from agentload.sim.calibration.measured import MeasuredRun, read_measured  # noqa: E402
from agentload.sim.calibration.on_run import (  # noqa: E402
    calibrate_on_run,
    engine_defaults,
    predict_run,
    vllm_defaults,
    with_factors,
)
from agentload.sim.engine.sim_engine import SimEngine  # noqa: E402
from agentload.sim.engine.vllm import VllmRank  # noqa: E402
from agentload.sim.predict import (  # noqa: E402
    DEFAULT_SALT,
    ProbePoint,
    agent_calls,
    table_of,
    window_point,
)
from agentload.sim.replay import replay  # noqa: E402
from agentload.sim.setup.build import DeploymentSpec, build_deployment  # noqa: E402
from agentload.workload.load import load_workload  # noqa: E402
from agentload.workload.starts import AgentSessions  # noqa: E402
from bench.cachetrace import measured_calls, replay_cache  # noqa: E402
from bench.sim_validate import (  # noqa: E402
    AGENTLOAD,
    AIM_THROUGHPUT,
    _agents,
    _cpu_s,
    _num,
    _pct,
    _points,
    _share,
    _yes,
    agents_error,
    load_figures,
    meta,
    probe_conditions,
    search_flags,
    simulated_search,
)
from bench.vllm_steps import VLLM_SYSTEM  # noqa: E402

MEASURED = REPO / "bench" / "data" / "sim-validation-vllm"
RESULTS = MEASURED / "validation.json"
COMMAND = "PYTHONPATH=src .venv/bin/python bench/sim_validate_vllm.py"
RUNS = ("search-demo-a", "search-demo-b", "search-demo-quiet")
PRESSURE_RUN = "pressure"
PRESSURE_FACTORS_FROM = "search-demo-b"
"""The search measured the same hour as the pressure run: its probe-calibrated factors."""
STEPS = "steps/steps.json"
CALIBRATION_MAX_AGENTS = 4
AIM_HIT_POINTS = 2.0
"""The issue's goal for the prefix hit rate: within 2 points of vLLM's own counters."""
FORMER_BLOCK = 64
"""The block size the simulator gave every radix-cache backend before vLLM's were modelled."""
MODELS = ("probes", "steps")
"""The two sets of roofline factors (module docstring)."""


def _spec(run: MeasuredRun, engine: Mapping[str, Any] | None = None) -> DeploymentSpec:
    """The vLLM deployment the run's engine (or `engine`'s facts) describes, its prompts scaled
    as the run's were."""
    sizes = engine_defaults(run) if engine is None else vllm_defaults(dict(engine), run.model)
    spec = DeploymentSpec(system=VLLM_SYSTEM, **sizes)  # type: ignore[arg-type]
    return spec.model_copy(update={"prompt_token_scale": run.rules.prompt_token_scale})


def _gap(value: float | None, reference: float | None) -> float | None:
    """The difference of two shares, in percentage points."""
    return None if value is None or reference is None else (value - reference) * 100


def _error(value: float | None, reference: float | None) -> float | None:
    return None if value is None or not reference else value / reference - 1


def at_measured_times(run_dir: Path, run: MeasuredRun, spec: DeploymentSpec) -> dict[str, list]:
    """Each window's hit rate from the cache alone at the measured times: vLLM's blocks, and
    `FORMER_BLOCK`."""
    calls = measured_calls(load_results(run_dir).records, load_workload(run.workload), run.rules)
    rank = build_deployment(spec).config.rank
    out = {}
    for name, block in (("vllm", rank.block_tokens), ("former", FORMER_BLOCK)):
        table = table_of(replay_cache(rank.model_copy(update={"block_tokens": block}), calls))
        out[name] = [window_point(table, w).cache_hit_rate for w in run.windows]
    return out


def probe_rows(
    run_dir: Path,
    run: MeasuredRun,
    spec: DeploymentSpec,
    predicted: Mapping[str, Sequence[ProbePoint]],
) -> list[dict[str, Any]]:
    """Each probe: measured and predicted figures by both sets of factors, hit rates, load."""
    server = [p.server_cache_hit_rate for p in load_results(run_dir).probes]
    replayed = at_measured_times(run_dir, run, spec)
    rows = []
    for i, (point, cond) in enumerate(zip(run.points, probe_conditions(run_dir), strict=True)):
        row: dict[str, Any] = {
            "agents": point.agents,
            "fitted": point.agents <= CALIBRATION_MAX_AGENTS,
            "total": point.total_tokens_per_s,
            "p25": point.p25_output_tokens_per_s,
            "p95_ttft": point.p95_ttft_s,
            "requests": point.requests,
            "server_hits": server[i],
            "client_hits": point.cache_hit_rate,
            "hits_at_measured_times": replayed["vllm"][i],
            "hits_at_measured_times_former_block": replayed["former"][i],
            **cond,
        }
        for model in MODELS:
            guess = predicted[model][i]
            error = _error(guess.total_tokens_per_s, point.total_tokens_per_s)
            points = _gap(guess.cache_hit_rate, server[i])
            row[model] = {
                "total": guess.total_tokens_per_s,
                "error": error,
                "within_aim": error is not None and abs(error) <= AIM_THROUGHPUT,
                "p25": guess.p25_output_tokens_per_s,
                "p95_ttft": guess.p95_ttft_s,
                "hits": guess.cache_hit_rate,
                "requests": guess.requests,
                "hit_points": points,
                "hits_within_aim": points is not None and abs(points) <= AIM_HIT_POINTS,
            }
        rows.append(row)
    return rows


def tiers_by_probes(run_dir: Path, run: MeasuredRun, out: Path) -> dict[str, int | None]:
    """`agentload simulate --calibrate` on the run's probes at 1-4 agents with its settings."""
    command = [
        *AGENTLOAD, "simulate", "--calibrate", str(run_dir),
        "--calibrate-max-agents", str(CALIBRATION_MAX_AGENTS), "--system", VLLM_SYSTEM,
        "--workload", run.workload, "--salt", "validate", "--out", str(out),
        *search_flags(run_dir),
    ]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, text=True)
    return {t.name: t.max_agents for t in read_summary(out).tiers}


def search_part(
    measured: Path, name: str, steps: Mapping[str, float], scratch: Path
) -> dict[str, Any]:
    """One search: calibrated on its probes at 1-4 agents, and with the step-fitted factors."""
    run_dir = measured / name
    run = read_measured(run_dir)
    workload = load_workload(run.workload)
    base = _spec(run)
    by_probes, facts = calibrate_on_run(run, base, workload, max_agents=CALIBRATION_MAX_AGENTS)
    specs = {"probes": by_probes, "steps": with_factors(base, steps)}
    predicted = {model: predict_run(spec, run, workload) for model, spec in specs.items()}
    tiers = {
        "probes": tiers_by_probes(run_dir, run, scratch / f"{name}-probes"),
        "steps": simulated_search(specs["steps"], run, scratch / f"{name}-steps"),
    }
    engine = run.engine or {}
    return {
        "run": name,
        "calibration": facts.model_dump(mode="json"),
        "engine": {
            "vllm": engine.get("vllm"),
            "block_tokens": build_deployment(base).config.rank.block_tokens,
            "kv_tokens": base.kv_tokens,
            "max_batch_tokens": base.max_batch_tokens,
            "max_running": base.max_running,
        },
        "load": load_figures(run_dir),
        "probes": probe_rows(run_dir, run, base, predicted),
        "tiers": [
            {
                "tier": tier.name,
                **{m: agents_error(tier.max_agents, tiers[m].get(tier.name)) for m in MODELS},
            }
            for tier in read_summary(run_dir).tiers
        ],
    }


def preemptions(spec: DeploymentSpec, run: MeasuredRun) -> int:
    """Requests the simulated vLLM preempted over the run (its schedule replayed)."""
    workload = load_workload(run.workload)
    built = build_deployment(spec)
    rules = run.rules.model_copy(update={"prompt_token_scale": spec.prompt_token_scale})
    engine = SimEngine(built.config)
    played = AgentSessions(workload.sessions, rules.start_draw)
    agents = [agent_calls(workload, s.index, rules, DEFAULT_SALT, played) for s in run.spans]
    replay(
        engine,
        agents,
        start_times=[s.start_s for s in run.spans],
        stop_times=[s.stop_s for s in run.spans],
        until=max(w.end_s for w in run.windows),
    )
    return sum(r.preemptions for r in engine.ranks if isinstance(r, VllmRank))


def pressure_part(measured: Path, factors: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """The run on a third of the KV cache: hit rates and preemptions, measured and simulated."""
    run_dir = measured / PRESSURE_RUN
    run = read_measured(run_dir)
    engine = json.loads((run_dir / "engine.json").read_text())
    base = _spec(run, engine)
    files = load_results(run_dir)
    metrics = [
        json.loads(line) for line in (run_dir / "server_metrics.jsonl").read_text().splitlines()
    ]
    first, last = metrics[0]["values"], metrics[-1]["values"]
    replayed = at_measured_times(run_dir, run, base)
    point = run.points[0]
    out: dict[str, Any] = {
        "agents": point.agents,
        "kv_tokens": base.kv_tokens,
        "server_hits": files.probes[0].server_cache_hit_rate,
        "client_hits": point.cache_hit_rate,
        "requests": point.requests,
        "total": point.total_tokens_per_s,
        "server_preemptions": last.get("num_preemptions", 0) - first.get("num_preemptions", 0)
        if "num_preemptions" in last
        else None,
        "hits_at_measured_times": replayed["vllm"][0],
        "hits_at_measured_times_former_block": replayed["former"][0],
        "load": load_figures(run_dir),
    }
    for model, values in factors.items():
        spec = with_factors(base, values)
        guess = predict_run(spec, run, load_workload(run.workload))[0]
        out[model] = {
            "hits": guess.cache_hit_rate,
            "hit_points": _gap(guess.cache_hit_rate, out["server_hits"]),
            "total": guess.total_tokens_per_s,
            "error": _error(guess.total_tokens_per_s, point.total_tokens_per_s),
            "preemptions": preemptions(spec, run),
        }
    return out


def validate(measured: Path, scratch: Path) -> dict[str, Any]:
    """Every part (module docstring)."""
    steps = json.loads((measured / STEPS).read_text())
    server = steps.get("server", {})
    step_factors = {
        **steps["fitted"]["factors"],
        **{k: server[k] for k in ("request_s", "prompt_token_s") if k in server},
    }
    searches = [search_part(measured, name, step_factors, scratch) for name in RUNS]
    peer = next(s for s in searches if s["run"] == PRESSURE_FACTORS_FROM)
    factors = {"probes": peer["calibration"]["factors"], "steps": step_factors}
    return {
        "steps": {
            "factors": step_factors,
            "split": steps["split"],
            "measured": steps["measured"],
            "fitted": {k: steps["fitted"][k] for k in ("prefill", "extend", "decode")},
            "server": server or None,
        },
        "searches": searches,
        "pressure": pressure_part(measured, factors),
    }


# --- the docs' tables ---------------------------------------------------------------------------


def _count(rows: Sequence[Mapping[str, Any]], key: str = "within_aim") -> str:
    return f"{sum(1 for r in rows if r[key])} of {len(rows)}"


def _load(figures: Mapping[str, float] | None) -> str:
    if not figures:
        return "not sampled"
    return f"{figures['min']:.1f}-{figures['max']:.1f} (mean {figures['mean']:.1f})"


def _factors(f: Mapping[str, float]) -> str:
    return (
        f"compute efficiency {f['compute_efficiency']:.3g}, bandwidth efficiency "
        f"{f['bandwidth_efficiency']:.3g}, step overhead {f['step_overhead_s'] * 1e3:.2f} ms, "
        f"{f['sequence_overhead_s'] * 1e3:.3f} ms per decoding sequence" + _server(f)
    )


def _server(f: Mapping[str, float]) -> str:
    """The API server's cost per request, where the factors carry it."""
    if "request_s" not in f:
        return ""
    return (
        f"; the API server {f['request_s'] * 1e3:.1f} ms a request and "
        f"{f['prompt_token_s'] * 1e6:.2f} µs a prompt token"
    )


def _steps_table(steps: Mapping[str, Any]) -> list[str]:
    measured, fitted = steps["measured"], steps["fitted"]
    lines = [
        "| step | measured, s | roofline at the step-fitted factors, s | error |",
        "| --- | ---: | ---: | ---: |",
    ]
    for length, value in sorted(measured["prefill"].items(), key=lambda kv: int(kv[0])):
        guess = fitted["prefill"][str(length)]
        lines.append(
            f"| cold prefill, {int(length):,} tokens | {value:.3g} | {guess:.3g} | "
            f"{_pct(guess / value - 1)} |"
        )
    for row, guess in zip(measured["extend"], fitted["extend"], strict=True):
        lines.append(
            f"| {row['new']} new tokens after {row['context']:,} cached | {row['s']:.3g} | "
            f"{guess['s']:.3g} | {_pct(guess['s'] / row['s'] - 1)} |"
        )
    for batch, value in sorted(measured["decode"].items(), key=lambda kv: int(kv[0])):
        guess = fitted["decode"][str(batch)]
        lines.append(
            f"| decode step, batch {batch} | {value:.3g} | {guess:.3g} | "
            f"{_pct(guess / value - 1)} |"
        )
    return lines


def _server_lines(steps: Mapping[str, Any]) -> list[str]:
    """The API server's cost measured alone (`bench/vllm_steps.py`'s **server**), if it was."""
    server, calls = steps.get("server"), steps["measured"].get("server")
    if not server or not calls:
        return []
    lines = [
        "**vLLM's API server, measured alone** (a chat call of one user message and one output "
        "token, sent twice; the repeat's latency less the roofline's step, at the step-fitted "
        f"factors, for the part its prefix cache did not serve): {server['request_s'] * 1e3:.1f} "
        f"ms a request and {server['prompt_token_s'] * 1e6:.2f} µs a prompt token, the "
        "**steps** model's API server.",
        "",
        "| prompt tokens | cached | repeat's latency, s | the server's part, s |",
        "| ---: | ---: | ---: | ---: |",
    ]
    for row in calls:
        part = server["server_s"][str(row["prompt"])]
        lines.append(f"| {row['prompt']:,} | {row['cached']:,} | {row['s']:.3g} | {part:.3g} |")
    return [*lines, ""]


def _search_tables(search: Mapping[str, Any]) -> list[str]:
    facts = search["calibration"]
    rows = search["probes"]
    predicted = [r for r in rows if not r["fitted"]]
    engine = search["engine"]
    lines = [
        f"**`{search['run']}`** (load average {_load(search['load'])}; {engine['vllm']}, "
        f"{engine['block_tokens']}-token blocks, {engine['max_batch_tokens']:,} tokens a step, "
        f"{engine['max_running']} sequences, {engine['kv_tokens']:,} KV tokens). Calibrated on "
        f"its probes at {', '.join(str(a) for a in facts['fitted_agents'])} agents (fitted): "
        f"{_factors(facts['factors'])}; RMS log error {facts['rms_log_error']:.3f}. Goals over "
        f"the {len(predicted)} probes above {CALIBRATION_MAX_AGENTS} agents (predicted): total "
        f"tokens/s within ±15% {_count([r['probes'] for r in predicted])} (probes), "
        f"{_count([r['steps'] for r in predicted])} (steps); prefix hits within 2 points "
        f"{_count([r['probes'] for r in predicted], 'hits_within_aim')} (probes), "
        f"{_count([r['steps'] for r in predicted], 'hits_within_aim')} (steps); most agents "
        f"within ±1 or ±20%: {_count([t['probes'] for t in search['tiers']])} tiers (probes), "
        f"{_count([t['steps'] for t in search['tiers']])} (steps).",
        "",
        "| agents | fitted | total tokens/s measured | probes | error | steps | error | p25 "
        "output speed measured | probes | steps | p95 TTFT measured, s | probes, s | steps, s | "
        "load avg | engine core share (while busy) |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
        "---: | ---: | ---: |",
    ]
    for r in rows:
        a, b = r["probes"], r["steps"]
        lines.append(
            f"| {r['agents']} | {'yes' if r['fitted'] else 'no'} | {_num(r['total'])} | "
            f"{_num(a['total'])} | {_pct(a['error'])} | {_num(b['total'])} | {_pct(b['error'])} | "
            f"{_num(r['p25'])} | {_num(a['p25'])} | {_num(b['p25'])} | {_num(r['p95_ttft'])} | "
            f"{_num(a['p95_ttft'])} | {_num(b['p95_ttft'])} | {_num(r['load1'])} | "
            f"{_num(r['engine_core_share'])} ({_num(r['engine_share_while_busy'])}) |"
        )
    lines += [
        "",
        "| agents | vLLM's counters | client (calls) | probes (calls) | points | steps (calls) | "
        f"points | at the measured times, {engine['block_tokens']}-token blocks | points | "
        "64-token blocks | points |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        s, a, b = r["server_hits"], r["probes"], r["steps"]
        lines.append(
            f"| {r['agents']} | {_share(s)} | {_share(r['client_hits'])} ({r['requests']}) | "
            f"{_share(a['hits'])} ({a['requests']}) | {_points(a['hits'], s)} | "
            f"{_share(b['hits'])} ({b['requests']}) | {_points(b['hits'], s)} | "
            f"{_share(r['hits_at_measured_times'])} | {_points(r['hits_at_measured_times'], s)} | "
            f"{_share(r['hits_at_measured_times_former_block'])} | "
            f"{_points(r['hits_at_measured_times_former_block'], s)} |"
        )
    lines += [
        "",
        "| tier | measured | probes | error | within ±1 or ±20% | steps | error | within |",
        "| --- | ---: | ---: | ---: | --- | ---: | ---: | --- |",
    ]
    for t in search["tiers"]:
        a, b = t["probes"], t["steps"]
        lines.append(
            f"| {t['tier']} | {_agents(a['measured'])} | {_agents(a['simulated'])} | "
            f"{a['error_agents']:+d} | {_yes(a['within_aim'])} | {_agents(b['simulated'])} | "
            f"{b['error_agents']:+d} | {_yes(b['within_aim'])} |"
        )
    return lines


def render_markdown(results: Mapping[str, Any]) -> str:
    """docs/simulation.md's vLLM validation tables from the results (pure)."""
    made = results["meta"]
    steps = results["steps"]
    split = steps["split"]
    p = results["pressure"]
    lines = [
        f"Produced by `{COMMAND}` on {made['date']} (agentload {made['agentload']}, "
        f"{made['cpu_s']:.0f} s of CPU) from `bench/data/sim-validation-vllm/` (searches "
        "measured with `bench/sim_measure_local.py --engine vllm --engine-nice 5`, step times "
        "with `bench/vllm_steps.py`); `--markdown` prints these tables from its "
        "`validation.json`. Predicted by two sets of roofline factors: **probes**, fitted to the "
        f"search's own probes at 1-{CALIBRATION_MAX_AGENTS} agents; **steps**, fitted to vLLM's "
        "step times measured alone (no search figure fitted).",
        "",
        f"**vLLM's step times, measured alone** (one request at a time, prompts as token ids; "
        f"a decode step: the median gap between streamed tokens with that many requests "
        f"decoding). Step-fitted factors: {_factors(steps['factors'])}. The cold prefills fitted "
        f"as o + a L + b L²/2: {split['overhead_s'] * 1e3:.0f} ms, "
        f"{split['per_token_s'] * 1e6:.1f} µs a token, {split['per_pair_s'] * 1e9:.1f} ns a "
        "(query, key) pair.",
        "",
        *_steps_table(steps),
        "",
        *_server_lines(steps),
    ]
    for search in results["searches"]:
        lines += [*_search_tables(search), ""]
    a, b = p["probes"], p["steps"]
    lines += [
        f"**Under KV pressure** (`{PRESSURE_RUN}`: {p['agents']} agents, {p['kv_tokens']:,} KV "
        f"tokens, one window, load average {_load(p['load'])}): vLLM's counters "
        f"{_share(p['server_hits'])} of prompt tokens from cache, the client's "
        f"{_share(p['client_hits'])} ({p['requests']} calls); the cache alone at the measured "
        f"times {_share(p['hits_at_measured_times'])} "
        f"({_points(p['hits_at_measured_times'], p['server_hits'])} points; 64-token blocks "
        f"{_share(p['hits_at_measured_times_former_block'])}); the whole simulation "
        f"{_share(a['hits'])} ({_points(a['hits'], p['server_hits'])} points, {a['preemptions']} "
        f"preemptions, total tokens/s {_pct(a['error'])}) with the probe factors of "
        f"`{PRESSURE_FACTORS_FROM}`, {_share(b['hits'])} "
        f"({_points(b['hits'], p['server_hits'])} points, {b['preemptions']} preemptions, total "
        f"tokens/s {_pct(b['error'])}) with the step factors. vLLM's preemption counter: "
        + ("not scraped" if p["server_preemptions"] is None else f"{p['server_preemptions']:.0f}")
        + ".",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--measured", type=Path, default=MEASURED)
    parser.add_argument("--out", type=Path, default=RESULTS, help="results file (JSON)")
    parser.add_argument("--markdown", action="store_true", help="print the docs' tables only")
    args = parser.parse_args(argv)
    if args.markdown:
        print(render_markdown(json.loads(args.out.read_text())), end="")
        return 0
    began = _cpu_s()
    with tempfile.TemporaryDirectory(prefix="sim-validate-vllm-") as tmp:
        results = validate(args.measured, Path(tmp))
    results["meta"] = meta(_cpu_s() - began)
    args.out.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
    print(render_markdown(results), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
