"""Step 4 of the layout search: the real (simulated) searches on the promising few.

Best estimate first, each estimate corrected by what the searches so far answered against
their estimates (per kind, aggregated or disaggregated: `corrected`), each search starting from
the closest earlier answer as its prior (its probes scaled by the two estimates' ratio:
`scaled_prior`, `--prior`'s mechanism), until the request's searches have run or the best
corrected estimate left is under `STOP_SHARE` of the best answer (`next_candidate`). Each
search is `agentload.run.execute` on the candidate's simulated deployment, into
`candidates/NN-<label>/`, capped unless a cap is given at the larger of `CAP_FACTOR` times its
largest estimate and the agents whose prefixes its KV holds (`cap_over`). A plain `simulate`
of one deployment takes the same cap (`fitted_cap`) unless `--max-agents` is given.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field
from rich.console import Console

from agentload.console import err_console
from agentload.errors import InputError
from agentload.files import clean_label
from agentload.frozen import Frozen
from agentload.layouts.estimate import WorkloadShape, estimate, kv_fit
from agentload.layouts.request import LayoutRequest
from agentload.layouts.simulated import Simulated
from agentload.results.layouts import CANDIDATES_FOLDER, Estimated, Searched, TierEstimate
from agentload.results.summary import Summary
from agentload.results.tiers import Tier
from agentload.run.execute import Execution, execute
from agentload.run.search_settings import CAP_FACTOR, MIN_CAP
from agentload.search.prior import PriorProbe, load_prior
from agentload.sim.setup.build import DeploymentSpec
from agentload.sim.target import SimOptions
from agentload.units import count_words
from agentload.workload.load import load_workload

STOP_SHARE = 0.5
"""Stop searching when the best corrected estimate left is under this share of the best
answer so far."""
SMALLEST_RATIO = 1e-6
"""Answers and estimates are compared in log space from this ratio up."""


@dataclass(frozen=True)
class Answered:
    """A candidate searched so far, and its results directory."""

    estimated: Estimated
    results: Path


def corrected(estimated: Estimated, ratios: dict[str, list[float]]) -> float:
    """An estimate corrected by what the searches of its kind answered against theirs (the
    geometric mean of answer / estimate; every kind's when its own has none; 1 when none)."""
    own = ratios.get(estimated.candidate.kind) or [r for rs in ratios.values() for r in rs]
    if not own:
        return estimated.score
    logs = (math.log(max(r, SMALLEST_RATIO)) for r in own)
    return estimated.score * math.exp(sum(logs) / len(own))


def next_candidate(
    estimated: Sequence[Estimated],
    done: set[str],
    ratios: dict[str, list[float]],
    best_answer: float,
) -> Estimated | None:
    """The next to search: the best corrected estimate not yet searched (nor dominated),
    unless it is under `STOP_SHARE` of the best answer so far (None: stop)."""
    left = [
        e
        for e in estimated
        if e.candidate.name not in done and e.score > 0 and e.dominated_by is None
    ]
    if not left:
        return None
    best = max(left, key=lambda e: corrected(e, ratios))
    if best_answer > 0 and corrected(best, ratios) < STOP_SHARE * best_answer:
        return None
    return best


def scaled_prior(probes: Sequence[PriorProbe], ratio: float) -> tuple[PriorProbe, ...]:
    """An earlier answer's probes as a prior for another deployment: each probe's agents times
    `ratio` (the two estimates' ratio), its figures kept; one probe per count."""
    found: dict[int, PriorProbe] = {}
    for probe in probes:
        agents = max(1, round(probe.agents * ratio))
        found.setdefault(agents, probe.model_copy(update={"agents": agents}))
    return tuple(found[n] for n in sorted(found))


def prior_for(
    target: Estimated, done: Sequence[Answered]
) -> tuple[tuple[PriorProbe, ...], str | None]:
    """The prior of a search: the earlier answer of the same kind (else any) with the closest
    estimate, its probes scaled by the estimates' ratio, and where it came from in words."""
    if not done:
        return (), None
    kind = target.candidate.kind
    same = [d for d in done if d.estimated.candidate.kind == kind] or list(done)
    closest = min(
        same,
        key=lambda d: abs(
            math.log(max(d.estimated.score, SMALLEST_RATIO) / max(target.score, SMALLEST_RATIO))
        ),
    )
    source = closest.estimated
    ratio = target.score / source.score if source.score > 0 else 1.0
    try:
        probes = load_prior(closest.results)
    except InputError:
        return (), None
    words = (
        f"the layout search's {source.candidate.name} ({closest.results.name}), its probes "
        f"x{ratio:.3g} (the estimates' ratio)"
    )
    return scaled_prior(probes, ratio), words


def search_cap(target: Estimated, given: int | None, fit: float = 0.0) -> int:
    """A search's most agents: `given`, else `cap_over` the candidate's estimates and the
    agents its KV holds (`fit`)."""
    if given is not None:
        return given
    return cap_over(target.estimates, fit)


def cap_over(estimates: Sequence[TierEstimate], fit: float = 0.0) -> int:
    """The larger of `CAP_FACTOR` times the largest estimate and the agents whose prefixes the
    deployment's KV holds (`estimate.kv_fit`), up to a power of two, at least `MIN_CAP`."""
    top = max((e.agents for e in estimates), default=0.0)
    most = max(1.0, CAP_FACTOR * top, fit)
    return max(MIN_CAP, 2 ** math.ceil(math.log2(most)))


class FittedCap(Frozen):
    """A simulated deployment's own search cap (`fitted_cap`) and what it rests on."""

    cap: int = Field(ge=1)
    estimate: TierEstimate
    """The largest of the deployment's estimates, one per tier."""
    fit: float = Field(ge=0)
    """Agents whose idle prefixes its KV holds (`estimate.kv_fit`)."""

    @property
    def words(self) -> str:
        """`8,192 agents (the larger of 4 x the deployment's analytic estimate, ~158 at tps20,
        and the ~5,266 agents whose prefixes its KV holds, up to a power of two; ...)`."""
        return (
            f"{self.cap:,} agents (the larger of {CAP_FACTOR:g} x the deployment's analytic "
            f"estimate, ~{self.estimate.agents:,.0f} at {self.estimate.tier}, and the "
            f"~{self.fit:,.0f} agents whose prefixes its KV holds, up to a power of two, at "
            f"least {MIN_CAP}; --max-agents sets it)"
        )


def fitted_cap(
    deployment: DeploymentSpec, workload: str, tiers: Sequence[Tier], *, skip_bad_lines: bool
) -> FittedCap:
    """The most agents a search of `deployment` on `workload` (a source spec) probes unless
    told: what `--choose-layout` gives each candidate it searches (`cap_over` the
    deployment's estimates and the agents its KV holds)."""
    shape = WorkloadShape.of(load_workload(workload, skip_bad_lines=skip_bad_lines))
    pools = Simulated.of(deployment).own_pools()
    estimates = tuple(estimate(tier, shape, pools) for tier in tiers)
    fit = kv_fit(shape, pools)
    top = max(estimates, key=lambda e: e.agents)
    return FittedCap(cap=cap_over(estimates, fit), estimate=top, fit=fit)


def search_few(
    request: LayoutRequest,
    simulated: Simulated,
    estimated: Sequence[Estimated],
    shape: WorkloadShape,
    out: Path,
    console: Console,
) -> list[tuple[Searched, Summary]]:
    """The real searches on the promising few (module docstring), each said in one line."""
    ratios: dict[str, list[float]] = {}
    done: list[Answered] = []
    results: list[tuple[Searched, Summary]] = []
    names: set[str] = set()
    best_answer = 0.0
    while len(results) < request.searches:
        target = next_candidate(estimated, names, ratios, best_answer)
        if target is None:
            break
        fit = kv_fit(shape, simulated.candidate_pools(target))
        order = len(results) + 1
        searched, summary = _search_one(request, simulated, target, fit, order, done, out)
        names.add(target.candidate.name)
        results.append((searched, summary))
        answer = float(summary.tiers[0].max_agents or 0) if summary.tiers else 0.0
        best_answer = max(best_answer, answer)
        if target.score > 0 and answer > 0:
            ratios.setdefault(target.candidate.kind, []).append(answer / target.score)
        done.append(Answered(target, out / searched.results))
        console.print(_searched_line(len(results), request.searches, target, searched, summary))
    return results


def _search_one(
    request: LayoutRequest,
    simulated: Simulated,
    target: Estimated,
    fit: float,
    order: int,
    done: Sequence[Answered],
    out: Path,
) -> tuple[Searched, Summary]:
    """One candidate's search, quiet (its one line is `search_few`'s); `fit`: the agents
    its KV holds."""
    candidate = target.candidate
    prior, words = prior_for(target, done)
    cap = search_cap(target, request.max_agents, fit)
    settings = request.search.model_copy(
        update={
            "max_agents": cap,
            "start_agents": min(request.search.start_agents, cap),
            "prior": prior,
            "prior_source": words,
        }
    )
    name = f"{order:02d}-{clean_label(candidate.name.replace(' ', '-'), 'candidate')}"
    folder = Path(CANDIDATES_FOLDER) / name
    wall0, cpu0 = time.perf_counter(), time.process_time()
    summary = execute(
        Execution(
            workload=request.workload,
            search=settings,
            target=SimOptions(simulated.deployment(target)),
            out=out / folder,
            label=name,
            agents=request.agents,
            gpus=candidate.gpus,
            skip_bad_lines=request.skip_bad_lines,
        ),
        console=_quiet(),
    )
    searched = Searched(
        candidate=candidate,
        order=order,
        results=str(folder),
        estimate=target.score,
        prior=words,
        probes=len(summary.probes),
        wall_s=time.perf_counter() - wall0,
        cpu_s=time.process_time() - cpu0,
    )
    return searched, summary


def _quiet() -> Console:
    """A console that prints nothing: a candidate's search speaks through its one line."""
    console = err_console()
    console.quiet = True
    return console


def _searched_line(
    done: int, searches: int, target: Estimated, searched: Searched, summary: Summary
) -> str:
    answers = ", ".join(f"{t.name} {t.max_agents or 0:,}" for t in summary.tiers)
    first = summary.tiers[0].name if summary.tiers else "-"
    return (
        f"searched {done}/{searches}: {target.candidate.name}: {answers} (simulated; estimate "
        f"{_about(target.score)} at {first}), {count_words(searched.probes, 'probe')}, "
        f"{searched.wall_s:,.0f} s"
    )


def _about(score: float) -> str:
    """An estimate in words: `~560`, or `under 1` (its margin puts even one agent below the
    tier's floor)."""
    return f"~{score:,.0f}" if score >= 1 else "under 1"
