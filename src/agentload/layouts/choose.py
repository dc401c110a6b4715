"""The layout search's one entry: `choose_layout(LayoutRequest) -> LayoutResult`, behind
`agentload simulate --choose-layout --gpus N`.

1. **enumerate** the deployments of exactly the budget (`agentload.layouts.candidates`, the
   space from `agentload.layouts.simulated`);
2. **prune** those whose weights do not fit or whose ranks cannot hold the workload's largest
   call, and say how many for each reason (`agentload.layouts.prune`);
3. **estimate** each survivor's most agents at every tier (`agentload.layouts.estimate`, on the
   same step tables the engine uses, tabulated once a pool layout), marking those a simpler
   variant estimates as well (`prune.dominance`);
4. **search** the promising few with the real simulated search (`agentload.layouts.searches`);
5. **rank** the searched per tier by simulated most agents (`agentload.layouts.rank`) and write
   `layouts.json` last, atomically (the options as run, `config.toml`, first, as every run's).

Progress goes to the console in one line a step; the tables and the page are the caller's
(`agentload.report.layouts`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from rich.console import Console

from agentload import __version__
from agentload.console import err_console
from agentload.errors import AgentloadError
from agentload.files import (
    clean_label,
    make_results_dir,
    owner_only_files,
    write_bytes_atomic,
    write_json_atomic,
)
from agentload.layouts.estimate import WorkloadShape
from agentload.layouts.prune import examples, prune, prune_counts
from agentload.layouts.rank import estimates_by_name, ranked_tiers, search_notes
from agentload.layouts.request import LayoutRequest, LayoutResult
from agentload.layouts.searches import search_few
from agentload.layouts.simulated import Simulated
from agentload.results.files import CONFIG_FILE
from agentload.results.layouts import LAYOUTS_FILE, LayoutSearch, Pruned, Space
from agentload.results.tiers import slo_text
from agentload.run.execute import default_out_dir
from agentload.workload.load import load_workload

DEFAULT_LABEL = "simulate"
"""The results directory's label when the search's own words leave none."""


def choose_layout(request: LayoutRequest, console: Console | None = None) -> LayoutResult:
    """The whole layout search (module docstring); `layouts.json` in the result's `out`."""
    wall0, cpu0 = time.perf_counter(), time.process_time()
    console = console or err_console()
    shape = WorkloadShape.of(load_workload(request.workload, skip_bad_lines=request.skip_bad_lines))
    simulated = Simulated.of(request.deployment)
    out = request.out or default_out_dir(clean_label(simulated.label, DEFAULT_LABEL))
    space, candidates = simulated.space(request.speculative, request.kv_host_gb)
    kept, pruned = prune(candidates, simulated.memory, shape.peak_context_tokens, space.domain_gpus)
    console.print(space_line(space, len(candidates), prune_counts(pruned)))
    if not kept:
        raise AgentloadError(f"--choose-layout: {refusal(space, pruned)}")
    with owner_only_files():
        make_results_dir(out)
        if request.config is not None:
            write_bytes_atomic(out / CONFIG_FILE, request.config.encode())
    tiers = request.search.tiers
    estimated, missing = simulated.estimate_all(kept, tiers, shape, request.kv_host_gb)
    pruned = (*pruned, *missing)
    if not estimated:
        raise AgentloadError(f"--choose-layout: {refusal(space, pruned)}")
    estimate_s = time.process_time() - cpu0
    best = estimated[0]
    console.print(
        f"estimated {len(estimated):,} deployments at {len(tiers)} tiers in {estimate_s:,.1f} s "
        f"of CPU; best at {tiers[0].name}: {best.candidate.name} (~{best.score:,.0f} agents, "
        "an analytic estimate)"
    )
    searched = search_few(request, simulated, estimated, shape, out, console)
    base = request.deployment
    layouts = LayoutSearch(
        tool_version=__version__,
        complete=True,
        system=base.system,
        backend=base.backend,
        model=base.model,
        budget_gpus=base.gpus,
        routing=base.routing,
        workload=request.workload,
        ranking_tier=tiers[0].name,
        space=space,
        candidates=len(candidates),
        pruned=prune_counts(pruned),
        pruned_examples=examples(pruned),
        estimated=estimated,
        searched=tuple(s for s, _ in searched),
        tiers=ranked_tiers(
            searched,
            estimates_by_name(estimated),
            request.price,
            {t.name: slo_text(t) for t in tiers},
        ),
        price=request.price,
        estimate_s=estimate_s,
        wall_s=time.perf_counter() - wall0,
        cpu_s=time.process_time() - cpu0,
        notes=search_notes(estimated, len(searched)),
    )
    with owner_only_files():
        write_json_atomic(out / LAYOUTS_FILE, layouts.model_dump(mode="json"))
    return LayoutResult(out=out, layouts=layouts)


def space_line(space: Space, total: int, counts: dict[str, int]) -> str:
    """What was enumerated and pruned, in one line."""
    pruned = sum(counts.values())
    why = ", ".join(f"{n:,} {reason}" for reason, n in counts.items()) or "none"
    return (
        f"layout search (simulated): {total:,} deployments of {space.budget} GPUs "
        f"({len(space.layouts)} pool layouts, {len(space.across_domains)} of them across "
        f"scale-up domains; aggregated and every P:D split; speculative "
        f"{'/'.join(s or 'off' for s in space.speculative)}; host KV tier "
        f"{'/'.join('on' if h else 'off' for h in space.host_kv)}); pruned {pruned:,} ({why})"
    )


def refusal(space: Space, pruned: Sequence[Pruned]) -> str:
    """Why no deployment of the budget is left: the counts per reason, with an example each."""
    counts = prune_counts(pruned)
    reasons = "; ".join(
        f"{counts[p.reason]:,} {p.reason}, e.g. {p.detail}" for p in examples(pruned)
    )
    return f"every deployment of {space.budget} GPUs is pruned ({reasons})"
