"""The layout search behind `agentload simulate --choose-layout --gpus N` (options and dispatch:
`agentload.commands.simulate_layouts`).

An option of `simulate` rather than a verb of its own: it takes every option `simulate` takes
(workload, tiers, search settings, system, backend, model, routing, step source) and differs
only in that the layout is searched instead of given. Steps:

1. **enumerate** the deployments of exactly `--gpus` GPUs (`agentload.sim.layouts`):
   aggregated and disaggregated (every P:D split), the pool layouts the catalog and the EP model
   accept, speculative decoding off and on (where the model has published acceptance; a given
   `--speculative` fixes it), the host KV tier off and on (where the system has one; `--kv-host-gb`
   sizes it, else SGLang HiCache's default: twice the rank's HBM KV pool);
2. **prune** those whose weights do not fit or whose ranks cannot hold the workload's largest
   call, and say how many for each reason;
3. **estimate** each survivor's most agents at every tier (`agentload.sim.layout_estimate`,
   on the same step tables the engine uses, tabulated once a pool layout);
4. **search** the promising few with the real simulated search (`simulate`'s own path, each
   into `candidates/NN-<label>/`): best estimate first, each estimate corrected by what the
   searches so far answered against their estimates (per kind, aggregated or disaggregated),
   each search starting from the closest earlier answer as its prior (its probes scaled by the
   two estimates' ratio; `--prior`'s mechanism), until `--searches` have run or the best
   corrected estimate left is under `STOP_SHARE` of the best answer;
5. **rank** the searched per tier by simulated most agents, with agents per GPU, per MW, $ per
   agent-hour (`--gpu-hour-price`, else an assumed price, said) and the limit that binds; print
   one table a tier, write `layouts.json` and `report.html`.

Where the user left them at their defaults, the searches run with `--precision 0.25` (a coarse
bracket: this is a ranking) and a cap of `CAP_FACTOR` times the candidate's estimate.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console

from agentload import __version__
from agentload.commands.options import agents_from, clean_label, out_from
from agentload.commands.search import search_settings_from
from agentload.commands.simulate_layouts import ASSUMED_GPU_HOUR
from agentload.console import err_console, wide_console
from agentload.errors import AgentloadError, InputError
from agentload.files import make_results_dir, owner_only_files, write_json_atomic
from agentload.results.layouts import (
    CANDIDATES_FOLDER,
    LAYOUTS_FILE,
    Candidate,
    Estimated,
    LayoutSearch,
    Price,
    Pruned,
    RankedTier,
    Searched,
    Space,
    TierEstimate,
    ranked_tiers,
)
from agentload.results.summary import Summary
from agentload.results.tiers import Tier, slo_text
from agentload.run import search_settings as search_defaults
from agentload.run.search_settings import SearchSettings
from agentload.search.prior import PriorProbe, load_prior
from agentload.sim.engine.speculative import DEEPSEEK, Speculative, parse_speculative
from agentload.sim.layout_estimate import PoolModel, WorkloadShape, estimate
from agentload.sim.layouts import (
    MemoryFit,
    enumerate_candidates,
    has_host_tier,
    host_kv_gb,
    pool_layouts,
    prune,
    prune_counts,
)
from agentload.sim.setup.build import DeploymentSpec, rank_memory
from agentload.sim.setup.serving import Pool, parse_layout
from agentload.sim.specs.hardware import GpuSpec, gpu_spec
from agentload.sim.specs.model import ModelShape, model_shape
from agentload.sim.specs.parallel import Layout
from agentload.tables import Column, Grid, console_lines
from agentload.units import BYTES_PER_GB
from agentload.workload.load import load_workload

STOP_SHARE = 0.5
"""Stop searching when the best corrected estimate left is under this share of the best
answer so far."""
LAYOUT_PRECISION = 0.25
"""The searches' precision unless `--precision` is given: a bracket within 25% ranks layouts."""
CAP_FACTOR = 4.0
"""Each search's cap unless `--max-agents` is given: this many times its largest estimate."""
MIN_CAP = 64
ASSUMED_PRICE_SOURCE = (
    "assumed: $2.26 per GPU-hour, SemiAnalysis InferenceX's B300 chip-hour price as quoted "
    "beside AA-AgentPerf (no price for simulated systems is kept); give --gpu-hour-price"
)
MTP = "mtp"
DOMINANCE_TOLERANCE = 0.01
"""Estimates within 1% of a simpler variant's count as no better."""


@dataclass
class _Run:
    """What a layout search carries from step to step."""

    base: DeploymentSpec
    model: ModelShape
    gpu: GpuSpec
    settings: SearchSettings
    price: Price
    out: Path
    console: Console
    speculative: dict[str | None, Speculative | None] = field(default_factory=dict)
    built: dict[tuple[str, str, str | None, float], PoolModel] = field(default_factory=dict)
    budgets: dict[str, float] = field(default_factory=dict)
    """A layout's rank HBM KV pool, bytes (for the host tier's size)."""


def choose_layout(args: argparse.Namespace) -> int:
    """The whole layout search (module docstring); 0 when complete."""
    wall0, cpu0 = time.perf_counter(), time.process_time()
    _check_args(args)
    run, shape = _open(args)
    space, candidates = candidate_space(run, args)
    kept, pruned = prune(candidates, lambda lay, d: _memory(run, lay, d), shape.peak_context_tokens)
    run.console.print(_space_line(space, len(candidates), prune_counts(pruned)))
    if not kept:
        examples = "; ".join(p.detail for p in _examples(pruned))
        raise AgentloadError(
            f"--choose-layout: every deployment of {run.base.gpus} GPUs is pruned ({examples})"
        )
    with owner_only_files():
        make_results_dir(run.out)
    tiers = run.settings.tiers
    estimated = _estimate_all(run, kept, tiers, shape, args.kv_host_gb)
    estimate_s = time.process_time() - cpu0
    best = estimated[0]
    run.console.print(
        f"estimated {len(estimated):,} deployments at {len(tiers)} tiers in {estimate_s:,.1f} s of "
        f"CPU; best at {tiers[0].name}: {best.candidate.name} (~{best.score:,.0f} agents, an "
        "analytic estimate)"
    )
    searched = _search(run, estimated, args)
    ranking = LayoutSearch(
        tool_version=__version__,
        complete=True,
        system=run.base.system,
        backend=run.base.backend,
        model=run.base.model,
        budget_gpus=run.base.gpus,
        routing=run.base.routing,
        workload=args.workload,
        ranking_tier=tiers[0].name,
        space=space,
        candidates=len(candidates),
        pruned=prune_counts(pruned),
        pruned_examples=_examples(pruned),
        estimated=estimated,
        searched=tuple(s for s, _ in searched),
        tiers=_ranked(run, estimated, searched),
        price=run.price,
        estimate_s=estimate_s,
        wall_s=time.perf_counter() - wall0,
        cpu_s=time.process_time() - cpu0,
        notes=_notes(estimated, searched),
    )
    write_layouts(run.out, ranking)
    print_ranking(ranking, wide_console())
    run.console.print(f"results: {run.out}")
    run.console.print(f"report: {run.out / 'report.html'}")
    return 0


def _open(args: argparse.Namespace) -> tuple[_Run, WorkloadShape]:
    """The search's deployment, settings, price, model, system and results directory, and
    the workload's shape."""
    base = _base_request(args)
    workload = load_workload(args.workload, skip_bad_lines=args.skip_bad_lines)
    model = model_shape(base.model, kv_dtype_bytes=base.kv_dtype_bytes)
    label = clean_label(
        f"layouts-{base.system}-x{base.gpus}-{model.name.rsplit('/', 1)[-1]}", "simulate"
    )
    run = _Run(
        base=base,
        model=model,
        gpu=gpu_spec(base.system),
        settings=_settings(args),
        price=_price(args),
        out=out_from(args, label),
        console=err_console(),
    )
    return run, WorkloadShape.of(workload)


def _ranked(
    run: _Run, estimated: Sequence[Estimated], searched: Sequence[tuple[Searched, Summary]]
) -> tuple[RankedTier, ...]:
    return ranked_tiers(
        searched,
        {e.candidate.name: {t.tier: t.agents for t in e.estimates} for e in estimated},
        run.price,
        {t.name: slo_text(t) for t in run.settings.tiers},
    )


def write_layouts(out: Path, ranking: LayoutSearch) -> None:
    """`layouts.json` and the report beside it."""
    from agentload.report.layouts import write_layouts_report

    with owner_only_files():
        write_json_atomic(out / LAYOUTS_FILE, ranking.model_dump(mode="json"))
        write_layouts_report(out, ranking)


# --- options ------------------------------------------------------------------------------------


def _check_args(args: argparse.Namespace) -> None:
    """One line for an option that cannot go with --choose-layout."""
    if args.layout:
        raise InputError(
            "--choose-layout searches the layout: leave out --layout", field="--layout"
        )
    if args.parallel != "tp1":
        raise InputError(
            "--choose-layout searches the layout: leave out --parallel", field="--parallel"
        )
    if args.gpus is None or args.gpus < 1:
        raise InputError("--choose-layout needs a GPU budget: --gpus N", field="--gpus")
    if args.calibrate or args.resume is not None or args.prior is not None:
        raise InputError(
            "--choose-layout runs its own searches: leave out --calibrate, --resume and --prior"
        )
    if args.searches < 1:
        raise InputError(f"--searches: at least 1, got {args.searches}", field="--searches")
    for name in ("gpu_hour_price", "kwh_price"):
        value = getattr(args, name)
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise InputError(f"--{name.replace('_', '-')}: a price >= 0, got {value:g}")


def _base_request(args: argparse.Namespace) -> DeploymentSpec:
    from agentload.commands.simulate import deployment_from

    given = args.speculative
    args.speculative = None  # candidates set their own
    try:
        return deployment_from(args)
    finally:
        args.speculative = given


def _settings(args: argparse.Namespace) -> SearchSettings:
    settings = search_settings_from(args)
    if args.precision == search_defaults.DEFAULT_PRECISION:
        settings = settings.model_copy(update={"precision": LAYOUT_PRECISION})
    return settings


def _price(args: argparse.Namespace) -> Price:
    if args.gpu_hour_price is not None:
        return Price(
            gpu_hour=args.gpu_hour_price,
            assumed=False,
            source="--gpu-hour-price",
            kwh=args.kwh_price,
        )
    return Price(
        gpu_hour=ASSUMED_GPU_HOUR, assumed=True, source=ASSUMED_PRICE_SOURCE, kwh=args.kwh_price
    )


# --- candidates ---------------------------------------------------------------------------------


def candidate_space(run: _Run, args: argparse.Namespace) -> tuple[Space, tuple[Candidate, ...]]:
    """The pool layouts and options, and every deployment of the budget they make."""
    from agentload.sim.specs.links import interconnect
    from agentload.sim.steps.catalog import catalog_for
    from agentload.sim.steps.ep import EP_SIZES

    base, model = run.base, run.model
    catalog, _ = catalog_for()
    tp = [
        c.tp
        for c in catalog.combinations
        if (c.system, c.backend, c.model) == (base.system, base.backend, model.name) and c.dp == 1
    ]
    domain = interconnect(run.gpu).scale_up_gpus
    layouts = pool_layouts(
        catalog_tp=tp, moe=model.experts > 0, scale_up_gpus=domain, ep_data_sizes=EP_SIZES
    )
    speculative = _speculative_options(args, model)
    run.speculative = {
        spec: parse_speculative(spec, model=model.name, mtp_layers=model.mtp_layers)
        if spec
        else None
        for spec in speculative
    }
    host = (
        (False, True)
        if has_host_tier(base.system, base.backend) and args.kv_host_gb != 0
        else (False,)
    )
    notes = [
        f"attention DP / EP across at most the scale-up domain ({domain} GPUs); EP across domains "
        "is not enumerated",
        f"routing fixed at {base.routing} for every candidate (--routing)",
    ]
    if not tp:
        notes.append(
            f"the catalog has no step data for {base.system} {base.backend} {model.name}: "
            "roofline step times"
        )
    candidates = enumerate_candidates(base.gpus, layouts, speculative=speculative, host_kv=host)
    space = Space(
        budget=base.gpus,
        layouts=tuple(lay.spec for lay in layouts),
        speculative=speculative,
        host_kv=host,
        notes=tuple(notes),
    )
    return space, candidates


def _speculative_options(args: argparse.Namespace, model: ModelShape) -> tuple[str | None, ...]:
    """Off and MTP (a DeepSeek model with MTP layers), or what `--speculative` fixes."""
    given = args.speculative
    if given is not None:
        return (None,) if given.strip().lower() in ("off", "none") else (given,)
    if model.mtp_layers > 0 and DEEPSEEK in model.name.lower():
        return (None, MTP)
    return (None,)


def _memory(run: _Run, layout: Layout, drafts: bool) -> MemoryFit:
    """A layout's rank memory (with speculative decoding's draft layers when `drafts`)."""
    model = run.model
    mtp = drafts and any(s is not None and s.method == MTP for s in run.speculative.values())
    scale = (model.layers + model.mtp_layers) / model.layers if mtp else 1.0
    memory = rank_memory(
        model,
        run.gpu,
        layout,
        max_batch_tokens=run.base.max_batch_tokens,
        memory_fraction=run.base.memory_fraction,
        weight_scale=scale,
    )
    run.budgets.setdefault(layout.spec, memory.kv_budget_bytes)
    return MemoryFit(
        weights_per_gpu_gb=memory.weights_per_gpu_bytes / BYTES_PER_GB,
        gpu_memory_gb=run.gpu.memory_bytes / BYTES_PER_GB,
        kv_capacity_tokens=max(0, memory.kv_capacity_tokens),
    )


def _examples(pruned: Sequence[Pruned]) -> tuple[Pruned, ...]:
    """One pruned candidate of each reason."""
    seen: dict[str, Pruned] = {}
    for p in pruned:
        seen.setdefault(p.reason, p)
    return tuple(seen.values())


def _space_line(space: Space, total: int, counts: dict[str, int]) -> str:
    pruned = sum(counts.values())
    why = ", ".join(f"{n:,} {reason}" for reason, n in counts.items()) or "none"
    return (
        f"layout search (simulated): {total:,} deployments of {space.budget} GPUs "
        f"({len(space.layouts)} pool layouts, aggregated and every P:D split; speculative "
        f"{'/'.join(s or 'off' for s in space.speculative)}; host KV tier "
        f"{'/'.join('on' if h else 'off' for h in space.host_kv)}); pruned {pruned:,} ({why})"
    )


# --- estimates ----------------------------------------------------------------------------------


def _pool_model(run: _Run, pool: Pool, spec: str | None, host_gb: float) -> PoolModel:
    """A pool as the estimate sees it; its step table tabulated once per (role, layout,
    speculative) (`agentload.sim.setup.build`, kept on disk)."""
    from agentload.sim.setup.build import _build_pool

    spec = spec if pool.role != "prefill" else None
    host_gb = host_gb if pool.role != "decode" else 0.0
    key = (pool.role, pool.layout.spec, spec, host_gb)
    found = run.built.get(key)
    if found is None:
        speculative = run.speculative.get(spec)
        request = run.base.model_copy(update={"speculative": speculative, "kv_host_gb": host_gb})
        built = _build_pool(
            request, run.model, run.gpu, Pool(role=pool.role, instances=1, layout=pool.layout)
        )
        found = PoolModel(
            role=pool.role,
            ranks=1,
            steps=built.steps,
            kv_capacity_tokens=built.rank.kv_capacity_tokens,
            kv_host_tokens=built.rank.kv_host_tokens,
            max_batch_tokens=built.rank.max_batch_tokens,
            max_running=built.rank.max_running,
            tokens_per_step=speculative.mean_tokens if speculative is not None else 1.0,
        )
        run.built[key] = found
    return found.model_copy(update={"ranks": pool.ranks})


def _host_gb(run: _Run, candidate: Candidate, given: float | None) -> float:
    if not candidate.host_kv:
        return 0.0
    front = parse_layout(candidate.layout)[0].layout
    return host_kv_gb(run.budgets.get(front.spec, 0.0), given)


def _estimate_all(
    run: _Run,
    kept: Sequence[Candidate],
    tiers: Sequence[Tier],
    shape: WorkloadShape,
    given_host: float | None,
) -> tuple[Estimated, ...]:
    """Every survivor's estimates, best at the first tier first."""
    found = []
    for candidate in kept:
        host = _host_gb(run, candidate, given_host)
        pools = tuple(
            _pool_model(run, pool, candidate.speculative, host)
            for pool in parse_layout(candidate.layout)
        )
        estimates = tuple(
            TierEstimate(tier=e.tier, agents=e.agents, limit=e.limit, pool=e.pool)
            for e in (estimate(tier, shape, pools) for tier in tiers)
        )
        found.append(
            Estimated(
                candidate=candidate, kv_host_gb=host, estimates=estimates, score=estimates[0].agents
            )
        )
    return tuple(sorted(dominance(found), key=lambda e: (-e.score, e.candidate.name)))


def dominance(estimated: Sequence[Estimated]) -> list[Estimated]:
    """Each candidate marked with a simpler variant of it (the same pools, without the host
    tier and/or speculative decoding) whose estimates are at least as good at every tier
    (within `DOMINANCE_TOLERANCE`): an option the estimate says adds nothing is not searched."""
    by_name = {e.candidate.name: e for e in estimated}
    found = []
    for e in estimated:
        c = e.candidate
        simpler = [
            c.model_copy(update=change)
            for change in (
                {"host_kv": False},
                {"speculative": None},
                {"host_kv": False, "speculative": None},
            )
        ]
        twins = [by_name[s.name] for s in simpler if s.name != c.name and s.name in by_name]
        better = next((t for t in twins if _as_good(t, e)), None)
        found.append(
            e.model_copy(update={"dominated_by": better.candidate.name if better else None})
        )
    return found


def _as_good(simpler: Estimated, other: Estimated) -> bool:
    mine = {t.tier: t.agents for t in simpler.estimates}
    return all(
        mine.get(t.tier, 0.0) * (1 + DOMINANCE_TOLERANCE) >= t.agents for t in other.estimates
    )


# --- searches -----------------------------------------------------------------------------------


def corrected(estimated: Estimated, ratios: dict[str, list[float]]) -> float:
    """An estimate corrected by what the searches of its kind answered against theirs (the
    geometric mean of answer / estimate; every kind's when its own has none; 1 when none)."""
    own = ratios.get(estimated.candidate.kind) or [r for rs in ratios.values() for r in rs]
    if not own:
        return estimated.score
    return estimated.score * math.exp(sum(math.log(max(r, 1e-6)) for r in own) / len(own))


def next_candidate(
    estimated: Sequence[Estimated],
    done: set[str],
    ratios: dict[str, list[float]],
    best_answer: float,
) -> Estimated | None:
    """The next to search: the best corrected estimate not yet searched, unless it is under
    `STOP_SHARE` of the best answer so far (None: stop)."""
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


def _prior_for(
    target: Estimated, done: Sequence[tuple[Estimated, Path, float]]
) -> tuple[tuple[PriorProbe, ...], str | None]:
    """The prior of a search: the earlier answer of the same kind (else any) with the closest
    estimate, its probes scaled by the estimates' ratio."""
    if not done:
        return (), None
    same = [d for d in done if d[0].candidate.kind == target.candidate.kind] or list(done)
    source, path, _ = min(
        same, key=lambda d: abs(math.log(max(d[0].score, 1e-6) / max(target.score, 1e-6)))
    )
    ratio = target.score / source.score if source.score > 0 else 1.0
    try:
        probes = load_prior(path)
    except InputError:
        return (), None
    words = (
        f"the layout search's {source.candidate.name} ({path.name}), its probes x{ratio:.3g} "
        "(the estimates' ratio)"
    )
    return scaled_prior(probes, ratio), words


def _search(
    run: _Run, estimated: Sequence[Estimated], args: argparse.Namespace
) -> list[tuple[Searched, Summary]]:
    """The real searches on the promising few (module docstring)."""
    ratios: dict[str, list[float]] = {}
    done: list[tuple[Estimated, Path, float]] = []
    results: list[tuple[Searched, Summary]] = []
    names: set[str] = set()
    best_answer = 0.0
    while len(results) < args.searches:
        target = next_candidate(estimated, names, ratios, best_answer)
        if target is None:
            break
        searched, summary = _search_one(run, target, len(results) + 1, done, args)
        names.add(target.candidate.name)
        results.append((searched, summary))
        answer = float(summary.tiers[0].max_agents or 0) if summary.tiers else 0.0
        best_answer = max(best_answer, answer)
        if target.score > 0 and answer > 0:
            ratios.setdefault(target.candidate.kind, []).append(answer / target.score)
        done.append((target, run.out / searched.results, answer))
        run.console.print(
            f"searched {len(results)}/{args.searches}: {target.candidate.name}: "
            f"{_answers(summary)} (simulated; estimate ~{target.score:,.0f} at "
            f"{summary.tiers[0].name if summary.tiers else '-'}), {searched.probes} probes, "
            f"{searched.wall_s:,.0f} s"
        )
    return results


def _search_one(
    run: _Run,
    target: Estimated,
    order: int,
    done: Sequence[tuple[Estimated, Path, float]],
    args: argparse.Namespace,
) -> tuple[Searched, Summary]:
    from agentload.run.execute import Request, execute
    from agentload.sim.target import SimOptions

    candidate = target.candidate
    request = run.base.model_copy(
        update={
            "layout": candidate.layout,
            "gpus": candidate.gpus,
            "speculative": run.speculative.get(candidate.speculative),
            "kv_host_gb": target.kv_host_gb,
        }
    )
    prior, words = _prior_for(target, done)
    cap = args.max_agents
    if cap == search_defaults.DEFAULT_MAX_AGENTS:
        top = max((e.agents for e in target.estimates), default=0.0)
        cap = max(MIN_CAP, 2 ** math.ceil(math.log2(max(1.0, CAP_FACTOR * top))))
    settings = run.settings.model_copy(
        update={
            "max_agents": cap,
            "start_agents": min(run.settings.start_agents, cap),
            "prior": prior,
            "prior_source": words,
        }
    )
    name = f"{order:02d}-{clean_label(candidate.name.replace(' ', '-'), 'candidate')}"
    folder = Path(CANDIDATES_FOLDER) / name
    wall0, cpu0 = time.perf_counter(), time.process_time()
    summary = execute(
        Request(
            workload=args.workload,
            search=settings,
            target=SimOptions(request),
            out=run.out / folder,
            label=name,
            agents=agents_from(args, start_mid_session=not args.start_at_turn_zero),
            gpus=candidate.gpus,
            skip_bad_lines=args.skip_bad_lines,
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


def _answers(summary: Summary) -> str:
    return ", ".join(f"{t.name} {t.max_agents or 0:,}" for t in summary.tiers)


def _notes(
    estimated: Sequence[Estimated], searched: Sequence[tuple[Searched, Summary]]
) -> tuple[str, ...]:
    left = len(estimated) - len(searched)
    dominated = sum(1 for e in estimated if e.dominated_by is not None)
    notes = [
        "every agent count is simulated (agentload.sim), not measured; estimates are analytic "
        "(agentload.sim.layout_estimate) and only chose what to search",
    ]
    if dominated:
        notes.append(
            f"{dominated:,} estimated deployments were not searched because a simpler variant "
            "(no host tier, or no speculative decoding) estimates as well at every tier"
        )
    if left > 0:
        notes.append(
            f"{left:,} estimated deployments were not searched (lower corrected estimates)"
        )
    return tuple(notes)


# --- printing -----------------------------------------------------------------------------------


def print_ranking(ranking: LayoutSearch, console: Console) -> None:
    """One table a tier: the searched deployments, best first, every figure simulated."""
    for tier in ranking.tiers:
        console_lines(tier_grid(ranking, tier), console)


def tier_grid(ranking: LayoutSearch, tier: RankedTier) -> Grid:
    price = "assumed" if ranking.price.assumed else "given"
    columns = (
        Column("#", key=True),
        Column("layout", key=True, justify="left"),
        Column("MTP", justify="left"),
        Column("host KV GB"),
        Column("agents (simulated)"),
        Column("repeat interval"),
        Column("agents/GPU"),
        Column("agents/MW"),
        Column(f"$/agent-hour ({price})"),
        Column("limit", justify="left"),
        Column("estimate"),
    )
    host = {e.candidate.name: e.kv_host_gb for e in ranking.estimated}
    rows = tuple(
        (
            str(r.rank),
            r.candidate.layout,
            r.candidate.speculative or "off",
            _num(host.get(r.candidate.name) or None, 0) if r.candidate.host_kv else "off",
            _whole(r.max_agents),
            _interval(r.interval_low, r.interval_high) if r.max_agents else "—",
            _num(r.agents_per_gpu, 1),
            _num(r.agents_per_mw, 0),
            _num(r.dollars_per_agent_hour, 4),
            r.limit or "—",
            _num(r.estimate, 0),
        )
        for r in tier.rows
    )
    title = (
        f"SIMULATED layouts of {ranking.budget_gpus} x {ranking.system}, {ranking.backend} "
        f"{ranking.model}, tier {tier.name} ({tier.slo})"
    )
    notes = (
        f"agents, agents/GPU and agents/MW are simulated (power: the simulator's model); "
        f"$/agent-hour at ${ranking.price.gpu_hour:,.2f} per GPU-hour ({ranking.price.source})"
        + (
            f" plus ${ranking.price.kwh:g}/kWh of simulated power"
            if ranking.price.kwh is not None
            else ""
        ),
        "estimate: the analytic estimate it was chosen on (agentload.sim.layout_estimate)",
    )
    return Grid(title, columns, rows, notes=notes)


def _whole(value: int | None) -> str:
    return "none" if value is None else f"{value:,}"


def _num(value: float | None, digits: int) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _interval(low: int | None, high: int | None) -> str:
    if low is None:
        return "—"
    return f"{low:,}-{high:,}" if high is not None else f"{low:,}+"
