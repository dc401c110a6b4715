"""A layout search (`layouts.json`, `agentload simulate --choose-layout`) for a person: one table
a tier in the terminal (`print_ranking`), and the HTML report, one self-contained page like the
results report (same style, same chart code and bundle).

The page: a grouped bar chart of agents per GPU (simulated) for every searched deployment at
every tier (layer `layout-bar`, dataset `layouts`; hovering a bar shows its agents, repeat
interval, agents per MW, $ per agent-hour and limit), then the same table a tier as the
terminal's, then what was enumerated, pruned, estimated and searched. Every figure says
simulated; strings from the file are escaped.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel
from rich.console import Console
from rich.text import Text

from agentload.errors import InputError
from agentload.files import write_text_atomic
from agentload.report import vega as vl
from agentload.report.formats import DASH, e, fmt
from agentload.report.html import page
from agentload.report.palette import tier_color
from agentload.report.vega import Spec, chart_html
from agentload.results.files import REPORT_FILE
from agentload.results.layouts import (
    LAYOUTS_FILE,
    POOL_SEPARATOR,
    LayoutSearch,
    RankedRow,
    RankedTier,
)
from agentload.tables import Column, Grid, console_lines
from agentload.units import agents_words, count_words, dollars, number, per_mw

Model = TypeVar("Model", bound=BaseModel)
BAR_HEIGHT = 320
ACROSS = " (across domains)"


def layout_rows(ranking: LayoutSearch) -> list[Spec]:
    """The chart's rows: one per (searched deployment, tier) with an answer."""
    rows: list[Spec] = []
    for tier in ranking.tiers:
        for row in tier.rows:
            if row.agents_per_gpu is None:
                continue
            rows.append(
                {
                    "layout": row.candidate.name,
                    "tier": tier.name,
                    "agents_per_gpu": row.agents_per_gpu,
                    "label": _bar_words(tier.name, row),
                }
            )
    return rows


def _bar_words(tier: str, row: RankedRow) -> str:
    interval = (
        f" (repeat {row.interval_low:,}-{row.interval_high:,})"
        if row.interval_low is not None and row.interval_high is not None
        else ""
    )
    return (
        f"{tier}: {agents_words(row.max_agents or 0)}{interval}, {_figure(row.agents_per_gpu)} per "
        f"GPU, {_per_mw(row.agents_per_mw)} per MW, {dollars(row.dollars_per_agent_hour)} per "
        f"agent-hour, limit {limit_words(row.limit)} (simulated)"
    )


def layouts_chart(ranking: LayoutSearch) -> str:
    """Agents per GPU by deployment and tier (simulated)."""
    heading = "Agents per GPU of each searched deployment, per tier (SIMULATED)"
    rows = layout_rows(ranking)
    if not rows:
        return vl.empty_chart(heading, "No searched deployment met any tier.")
    order = [s.candidate.name for s in sorted(ranking.searched, key=lambda s: s.order)]
    tiers = [t.name for t in ranking.tiers if any(r["tier"] == t.name for r in rows)]
    x = vl.nominal("layout", "deployment", sort=order, axis={"labelAngle": -20, "labelLimit": 260})
    layer = vl.picked(
        "layout-bar",
        "layouts",
        vl.mark("bar"),
        vl.colors("tier", tiers, [tier_color(i) for i in range(len(tiers))]),
        x=x,
        xOffset=vl.nominal("tier", sort=tiers),
        y=vl.quant("agents_per_gpu", "agents per GPU (simulated)"),
        tooltip=[vl.tooltip("label", "simulated")],
    )
    subtitle = [
        f"{ranking.budget_gpus} x {ranking.system}, {ranking.backend} {ranking.model}; "
        f"workload {ranking.workload}",
        "SIMULATED: the simulated engine's model, each deployment searched as agentload "
        "simulate searches (steady-state windows), power from the simulator's model",
    ]
    spec = vl.layered(vl.title(heading, subtitle), [layer], {"layouts": rows}, height=BAR_HEIGHT)
    return chart_html("layouts", spec, label=heading)


def print_ranking(ranking: LayoutSearch, console: Console) -> None:
    """One table a tier: the searched deployments, best first, every figure simulated; what
    the figures stand on (the price, the estimate) said once, under the last."""
    for tier in ranking.tiers:
        console_lines(tier_grid(ranking, tier), console)
    for note in table_notes(ranking):
        console.print(Text(f"note: {note}"))


def tier_grid(ranking: LayoutSearch, tier: RankedTier) -> Grid:
    """One tier's ranking as a table (the terminal's and the page's)."""
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
    host = {est.candidate.name: est.kv_host_gb for est in ranking.estimated}
    rows = tuple(
        (
            str(r.rank),
            r.candidate.layout + across_words(ranking, r.candidate.layout),
            r.candidate.speculative or "off",
            fmt(host.get(r.candidate.name) or None, 0) if r.candidate.host_kv else "off",
            f"{r.max_agents:,}" if r.max_agents is not None else "none",
            _interval(r.interval_low, r.interval_high) if r.max_agents else DASH,
            _figure(r.agents_per_gpu),
            _per_mw(r.agents_per_mw),
            dollars(r.dollars_per_agent_hour),
            limit_words(r.limit),
            _estimate(r.estimate),
        )
        for r in tier.rows
    )
    title = (
        f"SIMULATED layouts of {ranking.budget_gpus} x {ranking.system}, {ranking.backend} "
        f"{ranking.model}, tier {tier.name} ({_slo(tier)})"
    )
    return Grid(title, columns, rows)


def across_words(ranking: LayoutSearch, layout: str) -> str:
    """` (across domains)` when a pool's model copy crosses the scale-up domain."""
    pools = {part.split(":", 1)[-1] for part in layout.split(POOL_SEPARATOR)}
    return ACROSS if pools & set(ranking.space.across_domains) else ""


LIMIT_WORDS = {
    "output_speed": "output speed",
    "ttft": "TTFT",
    "interactivity": "e2e interactivity",
    "error_rate": "error rate",
    "quality": "quality",
    "max_agents": "the search's cap",
    "not_probed": "not probed",
}
"""What set a tier's answer, as a person reads it (`TierResult.limit`'s names are for code)."""
BELOW_ONE = "under 1"
"""An estimate of less than one agent (the estimate's margin puts even one below the floor)."""


def _slo(tier: RankedTier) -> str:
    """The tier's SLO as `slo_text` writes it (`≥`, `≤`; older files wrote `>=`, `<=`)."""
    return tier.slo.replace(">=", "≥").replace("<=", "≤")


def limit_words(limit: str | None) -> str:
    """`output speed`, `TTFT`, ...; an em dash when none."""
    return DASH if limit is None else LIMIT_WORDS.get(limit, limit.replace("_", " "))


def _figure(value: float | None) -> str:
    return DASH if value is None else number(value)


def _per_mw(value: float | None) -> str:
    return DASH if value is None else per_mw(value)


def _estimate(value: float | None) -> str:
    if value is None:
        return DASH
    return BELOW_ONE if value < 1 else f"{value:,.0f}"


def table_notes(ranking: LayoutSearch) -> tuple[str, ...]:
    """What every tier's table stands on, said once: simulated figures, the price, and what
    the estimate is (and what `under 1` means)."""
    electricity = ranking.price.kwh
    return (
        f"agents, agents/GPU and agents/MW are simulated (power: the simulator's model); "
        f"$/agent-hour at {dollars(ranking.price.gpu_hour)} per GPU-hour ({ranking.price.source})"
        + (
            f" plus {dollars(electricity)}/kWh of simulated power"
            if electricity is not None
            else ""
        ),
        "estimate: the analytic estimate each deployment was chosen on, before its search "
        f"(docs/simulation.md, 'The layout chosen for you'); '{BELOW_ONE}': with the 25% "
        "speed margin the estimate assumes, even one agent falls below the tier's floor, "
        "while the search, which simulates, may still find a few (it ranks, it does not answer)",
        *(
            (
                f"{ACROSS.strip()}: a model copy over more than one scale-up domain of "
                f"{ranking.space.domain_gpus} GPUs (its tensor, expert or pipeline traffic "
                "over the network)",
            )
            if ranking.space.across_domains
            else ()
        ),
    )


def _interval(low: int | None, high: int | None) -> str:
    if low is None:
        return DASH
    return f"{low:,}-{high:,}" if high is not None else f"{low:,}+"


def grid_html(grid: Grid) -> str:
    """A table (the terminal's `Grid`) as HTML, every cell escaped, numbers right-aligned."""
    header = "".join(f"<th>{e(c.header)}</th>" for c in grid.columns)
    kinds = ["" if c.justify == "left" else "num" for c in grid.columns]
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="{kind}">{e(cell)}</td>' for kind, cell in zip(kinds, row, strict=True)
        )
        + "</tr>"
        for row in grid.rows
    )
    return (
        f'<div class="wide"><table><thead><tr>{header}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _tier_table(ranking: LayoutSearch, tier: RankedTier) -> str:
    return f"<h3>{e(tier.name)} ({e(_slo(tier))})</h3>{grid_html(tier_grid(ranking, tier))}"


def _facts(ranking: LayoutSearch) -> str:
    pruned = ", ".join(f"{n:,} {why}" for why, n in ranking.pruned.items()) or "none"
    examples = "".join(f"<li>{e(p.reason)}: {e(p.detail)}</li>" for p in ranking.pruned_examples)
    searched = "".join(
        f"<li>{s.order}. {e(s.candidate.name)}: estimate {e(_estimate(s.estimate))}, "
        f"{count_words(s.probes, 'probe')}, "
        f"{s.cpu_s:,.0f} s of CPU; prior: {e(s.prior or 'none')}; results "
        f"<code>{e(s.results)}</code></li>"
        for s in ranking.searched
    )
    notes = "".join(f"<li>{e(n)}</li>" for n in (*ranking.space.notes, *ranking.notes))
    return (
        "<h2>What was searched</h2>"
        f"<p>{ranking.candidates:,} deployments of {count_words(ranking.budget_gpus, 'GPU')} "
        "enumerated from "
        f"{len(ranking.space.layouts)} pool layouts ({e(', '.join(ranking.space.layouts))}"
        f"{_across_facts(ranking)}); "
        f"pruned {sum(ranking.pruned.values()):,} ({e(pruned)}); {len(ranking.estimated):,} "
        f"estimated at every tier (ranked at {e(ranking.ranking_tier)}); "
        f"{len(ranking.searched)} searched. {ranking.cpu_s:,.0f} s of CPU in all, "
        f"{ranking.estimate_s:,.1f} s before the searches.</p>"
        f'<ul class="notes">{examples}</ul><h3>Searched, in order</h3>'
        f'<ul class="notes">{searched}</ul><h3>Notes</h3><ul class="notes">{notes}</ul>'
        f'<p class="source">{e("; ".join(table_notes(ranking)))}. Source: {e(LAYOUTS_FILE)}.</p>'
    )


def _across_facts(ranking: LayoutSearch) -> str:
    across = ranking.space.across_domains
    if not across:
        return ""
    return f"; across the {ranking.space.domain_gpus}-GPU scale-up domain: {e(', '.join(across))}"


def render_layouts_report(ranking: LayoutSearch) -> str:
    """The whole page."""
    title = f"agentload layout search: {ranking.budget_gpus} x {ranking.system} {ranking.model}"
    tables = "".join(_tier_table(ranking, tier) for tier in ranking.tiers)
    body = (
        f"<h1>{e(title)}</h1>"
        '<div class="banner sim">SIMULATED: every agent count below is computed by the '
        f"simulated engine ({e(ranking.backend)} step times on {e(ranking.system)}), not "
        "measured.</div>"
        f"{layouts_chart(ranking)}<h2>Ranking per tier</h2>{tables}{_facts(ranking)}"
    )
    return page(title, body)


def write_layouts_report(directory: Path, ranking: LayoutSearch, out: Path | None = None) -> Path:
    """Write the page (default: `report.html` in the layout search's directory)."""
    return write_page(directory, render_layouts_report(ranking), out)


def write_page(directory: Path, text: str, out: Path | None = None) -> Path:
    """Write a page (default: `report.html` in `directory`), atomically, owner-only, never
    through a symlink."""
    path = out if out is not None else directory / REPORT_FILE
    write_text_atomic(path, text)
    return path


def read_layouts(directory: Path) -> LayoutSearch | None:
    """The layout search a directory holds (None: it holds none)."""
    return read_model(directory / LAYOUTS_FILE, LayoutSearch, "a layout search")


def read_model(path: Path, model: type[Model], what: str) -> Model | None:
    """The frozen model a file holds (None: no such file); one line when it does not read as
    `what`."""
    if not path.is_file():
        return None
    try:
        return model.model_validate_json(path.read_bytes())
    except ValueError as exc:
        raise InputError(f"does not read as {what}: {exc}", path=path) from None
