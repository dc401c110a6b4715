"""What the simulator has step-time data for, as tables (`agentload simulate --list`): a summary,
systems x engines with the models each has, or every deployment that matches, one row per
layout; both end with the layouts `--parallel` takes beyond those listed, and the systems
`--system` knows without step-time data (`known_gpus`, the list its error gives)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from agentload.sim.setup.listing import Listed, listing
from agentload.sim.specs.hardware import known_gpus
from agentload.sim.steps.catalog import catalog_for
from agentload.tables import Column, Grid
from agentload.units import MISSING

NAMING_COLUMNS = 3
"""The listing's first columns (system, backend, model) name a deployment; `LAYOUT` follows."""
LAYOUT = 3


def catalog_grid(
    system: str | None = None, backend: str | None = None, model: str | None = None
) -> Grid:
    """What has step-time data: with `system` or `model` (a part of its name), every
    deployment that matches, one row per layout; otherwise a summary, systems x backends with
    the models each has (`backend` narrows either). Both end with the layouts `--parallel`
    takes beyond those listed, and how to narrow."""
    catalog, current = catalog_for()
    rows = [
        row
        for row in listing(catalog)
        if (system is None or row.combination.system == system)
        and (backend is None or row.combination.backend == backend)
        and (model is None or model.lower() in row.combination.model.lower())
    ]
    source = f"aiconfigurator-core {catalog.aiconfigurator_core}"
    if system is None and model is None:
        grid = _summary_grid(rows, source)
    else:
        grid = _deployments_grid(rows, source)
    roofline_only = sorted(set(known_gpus()) - set(catalog.systems))
    detailed = system is not None or model is not None
    notes = [*grid.notes, *_list_notes(current, roofline_only, detailed=detailed)]
    return replace(grid, notes=tuple(notes))


def _summary_grid(rows: list[Listed], source: str) -> Grid:
    """Systems x backends: how many models each pair has step-time data for."""
    systems = sorted({r.combination.system for r in rows})
    backends = sorted({r.combination.backend for r in rows})
    models: dict[tuple[str, str], set[str]] = {}
    for row in rows:
        c = row.combination
        models.setdefault((c.system, c.backend), set()).add(c.model)
    table = tuple(
        (name, *(f"{len(models.get((name, b), ())):,}" for b in backends)) for name in systems
    )
    count = len({r.combination.model for r in rows})
    title = "Models with step-time data"
    counts = (
        f"{count:,} models, {len(rows):,} deployments (system x backend x model x layout), "
        f"from {source}."
    )
    columns = (Column("system", key=True, justify="left"), *(Column(b) for b in backends))
    narrow = (
        "Each deployment, one row per layout: --list --system NAME and/or --model PART "
        "(e.g. --list --system gb300 --model DeepSeek); --engine NAME narrows either."
    )
    return Grid(title, columns, table, notes=(counts, narrow))


def _deployments_grid(rows: list[Listed], source: str) -> Grid:
    """One row per deployment; a naming column (system, backend, model) the same in every row
    goes into the title instead."""
    headers = ("system", "engine", "model", "layout", "weights GB/GPU", "KV tokens a DP rank")
    cells = [
        (
            r.combination.system,
            r.combination.backend,
            r.combination.model,
            r.combination.parallel,
            MISSING if r.weights_per_gpu_gb is None else f"{r.weights_per_gpu_gb:,.1f}",
            _kv_cell(r.kv_tokens_per_dp_rank),
        )
        for r in rows
    ]
    same = [i for i in range(NAMING_COLUMNS) if cells and len({row[i] for row in cells}) == 1]
    kept = [i for i in range(len(headers)) if i not in same]
    title = "Deployments with step-time data"
    if same:
        title += ": " + ", ".join(cells[0][i] for i in same)
    columns = tuple(
        Column(headers[i], key=i < NAMING_COLUMNS, justify="left" if i <= LAYOUT else "right")
        for i in kept
    )
    table = tuple(tuple(row[i] for i in kept) for row in cells)
    found = f"{len(cells):,} deployments, from {source}."
    if not cells:
        found = "No deployment matches: --list alone shows what there is."
    return Grid(title, columns, table, notes=(found,))


def _kv_cell(tokens: int | None) -> str:
    return MISSING if tokens is None else ("none" if tokens == 0 else f"{tokens:,}")


def _list_notes(current: bool, roofline_only: Sequence[str], *, detailed: bool) -> list[str]:
    """What `--parallel` takes beyond the listed layouts, and where data is missing (the
    systems `--system` knows that the catalog has no step times for, `roofline_only`)."""
    notes = [
        "Layouts listed: tpN (one model copy over N GPUs; for MoE models the experts split "
        "the same N ways, epN). --parallel also takes attention data parallelism, not "
        "listed: tpT,dpD,epE is D attention ranks of T GPUs each, one model copy over T x D "
        "GPUs with its experts split E ways (E at most T x D), e.g. tp1,dp8,ep8; its step "
        "times come from aiconfigurator-core where it evaluates, else the roofline (--steps).",
        f"Systems without step-time data ({', '.join(roofline_only)}) are simulated with a "
        "roofline from public specs: --steps roofline (docs/simulation.md).",
    ]
    if detailed:
        notes.insert(
            0,
            "KV tokens a DP rank: the KV cache one data-parallel rank holds (its tp GPUs, with "
            "their own scheduler; the whole engine instance when the layout has no dp; none: "
            "the weights alone fill its GPUs' memory).",
        )
    if not current:
        notes.append(
            "note: the catalog was probed with another aiconfigurator-core version than the "
            "one installed; regenerate with python -m agentload.sim.steps.catalog"
        )
    return notes
