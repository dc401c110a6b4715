"""The quality gate's false-failure rate: repeated probes on an unchanged llama.cpp server.

    .venv/bin/python bench/quality_false_failures.py [--model generated|gemma3-270m]
        [--agents 4] [--probes 12] [--window 20] [--share 0.25] [--workload SPEC]
        [--out bench/out/quality-ff]

One llama.cpp server serves the demo's workload (`agentload.run.presets.LOCAL_WORKLOAD`, or
`--workload`) for the whole bench, nothing in front of it. The first probe records the
references alone (greedy, each sent twice); every probe is then a plain `run` of `--agents`
agents for `--window` seconds with the quality checks on, checked against those same
references (`--references`), so each window is judged exactly as a search's would be. Nothing
is wrong with the server, so every failing gate is a false failure: the rate is failures /
judged probes, with its Wilson interval (95%). Per probe: the check calls, how many were exact,
diverged, or flipped a near tie, where they first differed, and the reference tokens'
log-probability drift. What greedy outputs do under load on this engine is the same table read
the other way.

Writes `OUT/<model>-<agents>.json` (every probe's quality figures) and prints the table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from rich.console import Console  # noqa: E402

from agentload.engines.llamacpp import LocalEngine  # noqa: E402
from agentload.engines.process import engine_threads  # noqa: E402
from agentload.quality.binomial import wilson  # noqa: E402
from agentload.quality.settings import QualityOptions  # noqa: E402
from agentload.results.files import REFERENCES_FILE  # noqa: E402
from agentload.results.quality import CheckSettings, QualityFigures  # noqa: E402
from agentload.run.execute import Execution, execute  # noqa: E402
from agentload.run.presets import LOCAL_WORKLOAD  # noqa: E402
from agentload.run.search_settings import SearchSettings  # noqa: E402
from agentload.run.settings import AgentSettings  # noqa: E402
from agentload.target.deployment import TargetOptions  # noqa: E402

SLOT_CONTEXT = 18_432
"""Tokens per slot: the demo workload's longest call (about 17.5K) fits, as in the demo."""
SETTLE_S = 5.0
RAMP_S = 1.0
SPARE_SLOTS = 2
HEADER = "probe  gate      checks agents exact diverged near ties first diff drift p50  drift max"
"""Slots beyond the agents, for the check lanes."""


def probe(
    engine: LocalEngine, out: Path, args: argparse.Namespace, references: Path | None
) -> QualityFigures:
    """One plain run with the quality checks on; its window's quality."""
    options = QualityOptions(settings=CheckSettings(share=args.share), references=references)
    request = Execution(
        workload=args.workload,
        search=SearchSettings.for_run(
            args.agents, args.window + SETTLE_S + RAMP_S, ramp_s=RAMP_S, settle_s=SETTLE_S
        ),
        target=TargetOptions(
            url=engine.url,
            model=engine.model,
            tokenizer=str(engine.tokenizer_path) if engine.tokenizer_path else None,
        ),
        out=out,
        label="quality-false-failures",
        agents=AgentSettings(start_mid_session=True),
        quality=options,
    )
    summary = execute(request, console=Console(quiet=True))
    quality = summary.probes[0].quality
    assert quality is not None and quality.gate is not None, f"{out}: no quality figures"
    return quality


def row(index: int, q: QualityFigures) -> str:
    assert q.gate is not None
    drift = "—" if q.logprob_drift_p50_nats is None else f"{q.logprob_drift_p50_nats:.2g}"
    top = "—" if q.logprob_drift_max_nats is None else f"{q.logprob_drift_max_nats:.2g}"
    first = "—" if q.first_diff_min is None else f"{q.first_diff_min}"
    return (
        f"{index:>5}  {q.gate.outcome:<9} {q.checks:>6} {q.agent_calls or 0:>6} {q.exact:>5} "
        f"{q.diverged:>8} {q.near_ties:>9} {first:>10} {drift:>11} {top:>9}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="generated")
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--probes", type=int, default=12)
    parser.add_argument("--window", type=float, default=20.0)
    parser.add_argument("--share", type=float, default=0.25)
    parser.add_argument("--workload", default=LOCAL_WORKLOAD, help="default: the demo's")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "quality-ff")
    args = parser.parse_args()
    name = f"{Path(args.model).stem}-{args.agents}"
    folder = args.out / f"{name}-{time.strftime('%Y%m%dT%H%M%S')}"
    folder.mkdir(parents=True)
    slots = args.agents + SPARE_SLOTS
    began = time.perf_counter()
    figures: list[QualityFigures] = []
    with LocalEngine.start(
        args.model,
        parallel=slots,
        ctx_size=slots * SLOT_CONTEXT,
        threads=engine_threads(),
        log_dir=folder / "engine",
    ) as engine:
        references: Path | None = None
        print(f"{engine.model} on llama.cpp, {slots} slots; {args.agents} agents a probe")
        print(HEADER)
        for index in range(args.probes):
            out = folder / f"probe-{index}"
            figures.append(probe(engine, out, args, references))
            references = references or out / REFERENCES_FILE
            print(row(index, figures[-1]), flush=True)
    judged = [q for q in figures if q.gate is not None and q.gate.outcome != "unjudged"]
    failed = sum(1 for q in judged if q.gate is not None and q.gate.outcome == "fail")
    checks = sum(q.checks for q in figures)
    summary = {
        "model": args.model,
        "workload": args.workload,
        "agents": args.agents,
        "window_s": args.window,
        "share": args.share,
        "probes": len(figures),
        "judged": len(judged),
        "false_failures": failed,
        "false_failure_interval": wilson(failed, len(judged)) if judged else None,
        "check_calls": checks,
        "exact": sum(q.exact for q in figures),
        "diverged": sum(q.diverged for q in figures),
        "near_ties": sum(q.near_ties for q in figures),
        "wall_s": round(time.perf_counter() - began, 1),
        "probe_figures": [q.model_dump(mode="json") for q in figures],
    }
    (folder / f"{name}.json").write_text(json.dumps(summary, indent=1) + "\n")
    low, high = summary["false_failure_interval"] or (0.0, 1.0)
    print(
        f"false failures: {failed} of {len(judged)} judged probes ({low:.0%}-{high:.0%} at 95%); "
        f"check calls {checks}: {summary['exact']} exact, {summary['diverged']} diverged, "
        f"{summary['near_ties']} flipped a near tie; {summary['wall_s']:.0f} s; {folder}"
    )


if __name__ == "__main__":
    main()
