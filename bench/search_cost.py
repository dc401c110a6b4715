"""What a search costs, and how right it is: each search plan on a population of simulated
deployments whose true answers are known.

    PYTHONPATH=src .venv/bin/python bench/search_cost.py [--quick] [--plans sweep,bisect]
        [--seeds 2] [--noise 0.02] [--settle 30] [--workers 2] [--cases NAME,...] [--json OUT]

- **Population** (`bench/search_population.py`): simulated deployments of different systems,
  models, layouts, workloads and tier ladders, each with the `--max-agents` an operator would
  search up to. `--quick`: four of them, under a minute once their truth is cached.
- **Ground truth** (`bench/search_truth.py`): each tier's true max agents from a fine sweep
  with long windows (~2,000 requests a point), with no drift; an interval where the curve is
  flat at its crossing. Cached after the first run (`$AGENTLOAD_HOME/bench/search_cost/`).
- **Noise** (`bench/search_noise.py`): every search runs on the deployment with its step times
  drifting (`--noise` sigma, log units, over a couple of minutes; 0: the window's own sampling
  noise only), each seed a different drift and a different draw of the agents' sessions.
  `--settle S`: every plan's probes wait until each agent has been active S s (the search's
  `--settle`; 30 s, AgentPerf's least, by default).
- **Each plan** runs the real search (`agentload.run.execute`: agents, probes, verdicts, plan)
  on the virtual clock, once per case and seed. `<plan>+prior` runs the plan with `--prior`
  set to an earlier search of the same deployment (the default plan, another seed).
- **The oracle** (`--plans ...,oracle`, `bench/search_oracle.py`): a plan that knows each tier's
  truth and probes right at it (a pass at the truth, a fail one precision width above), its
  answers still from the measured verdicts: its accuracy is the ceiling the measurement itself
  (60 s windows, drift, warm-up) puts on any plan, printed after the table.

Printed per plan: the share of answers (every tier of every search) within the requested
precision of the truth (max(1, precision x truth) agents), within twice it, the worst miss (in
those units, and where), the misses bisect shares on the same side; the same over the answers
whose truth is stationary; and the total probe time (ramp or shrink + settle + window, virtual
s, summed over every search) against doubling+bisect's in the same run, with probes and shrinks
per search. Then a line per case, the issue's acceptance for the default plan, and last:
`probe time vs doubling+bisect: R; answers within precision: P%` for the default plan. All of
it is simulated.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from rich.console import Console  # noqa: E402

from agentload.measure.window import STEADY_STATE_SETTLE_S  # noqa: E402
from agentload.results.summary import Summary  # noqa: E402
from agentload.run.execute import Execution, execute  # noqa: E402
from agentload.run.search_settings import SearchSettings  # noqa: E402
from agentload.run.settings import AgentSettings  # noqa: E402
from agentload.search.interval import DEFAULT_LEVEL  # noqa: E402
from agentload.search.plans import BISECT, DEFAULT_PLAN, PLANS, register  # noqa: E402
from agentload.search.prior import PriorProbe  # noqa: E402
from bench.search_coverage import coverage, coverage_lines, stated  # noqa: E402
from bench.search_noise import DEFAULT_SIGMA, DEFAULT_TAU_S, NoisySim  # noqa: E402
from bench.search_oracle import ORACLE, OraclePlan  # noqa: E402
from bench.search_population import CASES, QUICK, Case  # noqa: E402
from bench.search_report import (  # noqa: E402
    TWICE,
    PlanFigures,
    ceiling,
    per_case,
    plan_figures,
    table,
)
from bench.search_truth import Truth, truth_of  # noqa: E402
from bench.search_variants import VARIANTS, register_variants  # noqa: E402

PRIOR_SUFFIX = "+prior"
PRIOR_SEED_OFFSET = 1000
"""The earlier search a `+prior` plan starts from ran with this seed offset."""
MOST_RATIO = 0.4
LEAST_WITHIN = 0.95
"""The issue's acceptance: at most 40% of doubling+bisect's probe time, at least 95% of answers
within the requested precision, none off by more than twice it."""
DEFAULT_SEEDS = 2
DEFAULT_WORKERS = 2


@dataclass(frozen=True)
class Job:
    case: Case
    plan: str
    seed: int
    noise: float
    settle_s: float
    prior: tuple[PriorProbe, ...] = ()


@dataclass
class Searched:
    """One search: its answers, cost and probes."""

    case: str
    plan: str
    seed: int
    answers: dict[str, int]
    probe_s: float
    probes: list[int]
    costs: list[tuple[float, float]]
    """Each probe's (probe_s, window_s)."""
    gpus: int
    wall_s: float
    notes: list[str] = field(default_factory=list)
    prior: list[dict[str, object]] = field(default_factory=list)
    figures: list[dict[str, object]] = field(default_factory=list)
    """Each probe's agents, verdicts and checks, in the order measured (for `--json`)."""
    tiers: list[dict[str, object]] = field(default_factory=list)
    """Each tier's result as the summary states it (for `--json`)."""


@cache
def _oracle(case: Case, name: str = ORACLE) -> OraclePlan:
    """The oracle plan for this case: its probes placed at the case's truth, with the windows
    of the sweep variant its name says (`oracle-j2`: `sweep-j2`'s), else the default sweep's."""
    variant = VARIANTS.get(name.replace(ORACLE, "sweep", 1))
    if variant is None:
        return OraclePlan(truth_of(case)[0])
    return OraclePlan(truth_of(case)[0], sweep=variant)


def run_one(job: Job) -> Searched:
    """One search of one case by one plan, on the virtual clock (any process)."""
    register_variants()
    case = job.case
    plan = job.plan.removesuffix(PRIOR_SUFFIX)
    if plan.startswith(ORACLE):  # this case's truth, registered for this search (one at once)
        register(plan, _oracle(case, plan))
    settings = SearchSettings(
        tiers=case.tiers(),
        max_agents=case.cap,
        precision=case.precision,
        settle_s=job.settle_s,
        plan=plan,
        prior=job.prior,
    )
    began = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        request = Execution(
            workload=case.workload,
            search=settings,
            target=NoisySim(case.deployment(), sigma=job.noise, tau_s=DEFAULT_TAU_S, seed=job.seed),
            out=Path(folder) / "search",
            label=case.name,
            agents=AgentSettings(start_mid_session=True, seed=job.seed, run_salt=f"s{job.seed}"),
            gpus=case.gpus,
        )
        summary = execute(request, Console(file=io.StringIO(), width=200))
    return _searched(job, summary, time.perf_counter() - began)


def _searched(job: Job, summary: Summary, wall_s: float) -> Searched:
    return Searched(
        case=job.case.name,
        plan=job.plan,
        seed=job.seed,
        answers={t.name: t.max_agents or 0 for t in summary.tiers},
        probe_s=sum(p.probe_s or 0.0 for p in summary.probes),
        probes=[p.agents for p in summary.probes],
        costs=[(p.probe_s or 0.0, p.window_s) for p in summary.probes],
        gpus=job.case.gpus,
        wall_s=wall_s,
        notes=[n for t in summary.tiers for n in t.notes if "monoton" in n],
        prior=[PriorProbe.of(p).model_dump(mode="json") for p in summary.probes],
        figures=[
            p.model_dump(mode="json", include={"agents", "window_s", "verdicts", "checks"})
            for p in summary.probes
        ],
        tiers=[t.model_dump(mode="json") for t in summary.tiers],
    )


@dataclass(frozen=True)
class Scored:
    """One tier's answer against its truth."""

    case: str
    tier: str
    plan: str
    seed: int
    answer: int
    truth: Truth
    miss: float
    """Agents outside the truth interval, in units of the allowed error (<= 1: within)."""


def score(answer: int, truth: Truth, precision: float) -> float:
    """How far `answer` is outside the truth, in units of max(1, precision x truth)."""
    if truth.low <= answer <= truth.high:
        return 0.0
    nearest = truth.low if answer < truth.low else truth.high
    return abs(answer - nearest) / max(1.0, precision * nearest)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small population (~1 minute)")
    parser.add_argument("--plans", default=f"{DEFAULT_PLAN},{BISECT}")
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEEDS)
    parser.add_argument("--noise", type=float, default=DEFAULT_SIGMA)
    parser.add_argument("--settle", type=float, default=STEADY_STATE_SETTLE_S, metavar="S")
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS)
    parser.add_argument("--cases", help="only these cases (comma-separated names)")
    parser.add_argument("--json", type=Path, help="write every search and score here")
    args = parser.parse_args(argv)
    register_variants()
    cases = QUICK if args.quick else CASES
    if args.cases:
        wanted = set(args.cases.split(","))
        cases = tuple(c for c in CASES if c.name in wanted)
    plans = args.plans.split(",")
    for plan in plans:
        if plan.removesuffix(PRIOR_SUFFIX) not in {*PLANS, ORACLE} and not plan.startswith(
            f"{ORACLE}-"
        ):
            parser.error(f"unknown plan {plan} (known: {', '.join(sorted({*PLANS, ORACLE}))})")
    seeds = range(1, args.seeds + 1)
    began = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        truths = dict(zip([c.name for c in cases], pool.map(truth_of, cases), strict=True))
        jobs = [
            Job(c, p, s, args.noise, args.settle)
            for c in cases
            for p in plans
            if not p.endswith(PRIOR_SUFFIX)
            for s in seeds
        ]
        prior_jobs = (
            [
                Job(c, DEFAULT_PLAN, s + PRIOR_SEED_OFFSET, args.noise, args.settle)
                for c in cases
                for s in seeds
            ]
            if any(p.endswith(PRIOR_SUFFIX) for p in plans)
            else []
        )
        done = list(pool.map(run_one, jobs + prior_jobs))
        earlier = {(r.case, r.seed - PRIOR_SEED_OFFSET): r for r in done[len(jobs) :]}
        searched = done[: len(jobs)]
        with_prior = [
            Job(
                c,
                p,
                s,
                args.noise,
                args.settle,
                tuple(PriorProbe.model_validate(x) for x in earlier[(c.name, s)].prior),
            )
            for c in cases
            for p in plans
            if p.endswith(PRIOR_SUFFIX)
            for s in seeds
        ]
        searched += list(pool.map(run_one, with_prior))
    wall = time.perf_counter() - began
    by_case = {c.name: c for c in cases}
    scored = [
        Scored(
            r.case,
            tier,
            r.plan,
            r.seed,
            answer,
            truths[r.case][0][tier],
            score(answer, truths[r.case][0][tier], by_case[r.case].precision),
        )
        for r in searched
        for tier, answer in r.answers.items()
    ]
    report(cases, plans, searched, scored, truths, args, wall)
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {"searched": [asdict(r) for r in searched], "scored": [asdict(s) for s in scored]},
                indent=1,
            )
        )
    return 0


def report(cases, plans, searched, scored, truths, args, wall) -> None:
    print(
        f"{len(cases)} deployments x {args.seeds} seed(s), drift sigma {args.noise:g} "
        f"(tau {DEFAULT_TAU_S:g} s), settle {args.settle:g} s; truth from long-window sweeps; "
        f"{wall:.0f} s wall"
    )
    figures = [plan_figures(plan, searched, scored) for plan in plans]
    print("\n".join(table(figures)))
    oracle = next((f for f in figures if f.plan.startswith(ORACLE)), None)
    if oracle is not None:
        print(ceiling(oracle))
    print()
    print("\n".join(per_case(cases, plans, searched, scored, truths)))
    found = stated(searched, truths, {c.name: c.precision for c in cases})
    print()
    print("\n".join(coverage_lines(found, plans, DEFAULT_LEVEL)))
    default = next((f for f in figures if f.plan == DEFAULT_PLAN), None)
    if default is not None:
        print(acceptance(default))
        print(
            f"probe time vs doubling+bisect: {default.ratio:.2f}; "
            f"answers within precision: {default.within:.0%}; "
            f"intervals holding the truth: {coverage(found, DEFAULT_PLAN):.0%} "
            f"(stated {DEFAULT_LEVEL:.0%})"
        )


def acceptance(f: PlanFigures) -> str:
    """The issue's acceptance on the harness, for the default plan, in one line."""

    def word(ok: bool) -> str:
        return "met" if ok else "NOT met"

    return (
        f"acceptance ({f.plan}): probe time <= {MOST_RATIO:.0%} of bisect's "
        f"{word(f.ratio <= MOST_RATIO)} ({f.ratio:.0%}); >= {LEAST_WITHIN:.0%} within precision "
        f"{word(f.within >= LEAST_WITHIN)} ({f.within:.1%}; {f.settled_within:.1%} where the "
        f"truth is stationary); none beyond {TWICE:g}x {word(f.worst <= TWICE)} "
        f"(worst {f.worst:.2f}x; {f.settled_worst:.2f}x where stationary)"
    )


if __name__ == "__main__":
    raise SystemExit(main())
