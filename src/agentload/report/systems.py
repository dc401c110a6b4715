"""A comparison of systems (`systems.json`, `agentload simulate --compare-systems`) for a person:
one ranked table in the terminal (`print_comparison`) and one self-contained HTML page like the
results report (same style, same chart code and bundle).

The table: a row a system, best agents per MW first: its budget, the deployment its layout
search picked, agents, agents per GPU and per MW (each with where a repeat of the search would
land and the system's calibration error), W per GPU, $ per agent-hour (the price's source
said: given or assumed), the limit, and where its figures came from (simulated: operator data
or a calibrated roofline). Under it, what the uncertainties let one say of each neighbour's
difference. The page: the same, with a bar chart of agents per MW and one of agents per GPU
(layer `system-bar`, repeat intervals as error bars, dataset `systems`). Every figure says
simulated; strings from the file are escaped.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from agentload.report import vega as vl
from agentload.report.formats import DASH, e, fmt
from agentload.report.html import page
from agentload.report.layouts import grid_html, read_model, write_page
from agentload.report.palette import tier_color
from agentload.report.vega import Spec, chart_html
from agentload.results.systems import SYSTEMS_FILE, Spread, SystemRow, SystemsComparison
from agentload.tables import Column, Grid, console_lines

BAR_HEIGHT = 300
SIMULATED = "simulated"
UNKNOWN_ERROR = "± unknown"
OPERATOR_DATA_SOURCE = "aiconfigurator-core"
"""How a step source from operator data begins (`agentload.sim.steps.aic.PACKAGE`)."""
FIGURES = (
    ("agents_per_mw", "agents per MW", 0),
    ("agents_per_gpu", "agents per GPU", 1),
)
"""The charted figures: field, words, digits."""


def spread_words(spread: Spread | None, digits: int) -> str:
    """`48,197 (38,100-53,300) ± 25%`: the figure, where a repeat would land, the calibration
    error (`± unknown` when nothing states it)."""
    if spread is None:
        return DASH
    text = fmt(spread.value, digits)
    if spread.low is not None:
        high = fmt(spread.high, digits) if spread.high is not None else ""
        text += f" ({fmt(spread.low, digits)}-{high})"
    error = UNKNOWN_ERROR if spread.error is None else f"± {spread.error:.0%}"
    return f"{text} {error}"


def _pick_words(row: SystemRow) -> str:
    if row.pick is None:
        return DASH
    words = [row.pick.candidate.layout]
    if row.pick.candidate.speculative is not None:
        words.append(row.pick.candidate.speculative)
    if row.pick.candidate.host_kv:
        words.append("host-kv")
    return " ".join(words)


def _source_words(row: SystemRow) -> str:
    """Where a row's figures came from, in its own cell: always simulated, on operator data or
    a roofline (calibrated on the system's published figures, or not)."""
    if row.trust is None:
        return SIMULATED
    source = row.step_source or ""
    if source.startswith(OPERATOR_DATA_SOURCE):
        return f"{SIMULATED}: operator data ({OPERATOR_DATA_SOURCE})"
    kind = "calibrated" if row.trust.calibrated else "NOT calibrated"
    return f"{SIMULATED}: roofline, {kind}"


def comparison_grid(comparison: SystemsComparison) -> Grid:
    """The ranked table (the terminal's and the page's)."""
    columns = (
        Column("#", key=True),
        Column("system", key=True, justify="left"),
        Column("pick (simulated)", justify="left"),
        Column("agents (simulated)"),
        Column("agents/GPU (simulated; repeat; error)"),
        Column("agents/MW (simulated; repeat; error)"),
        Column("W/GPU (simulated)"),
        Column("$/agent-hour (price)"),
        Column("limit", justify="left"),
        Column("from", justify="left"),
    )
    rows = tuple(
        (
            str(r.rank) if r.rank is not None else DASH,
            f"{r.system} x{r.gpus}",
            _pick_words(r) if r.refused is None else f"none: {r.refused}",
            f"{r.pick.max_agents:,}" if r.pick and r.pick.max_agents else "none",
            spread_words(r.agents_per_gpu, 1),
            spread_words(r.agents_per_mw, 0),
            fmt(r.pick.watts_per_gpu, 0) if r.pick else DASH,
            _cost_words(r),
            (r.pick.limit or DASH) if r.pick else DASH,
            _source_words(r),
        )
        for r in comparison.rows
    )
    title = (
        f"SIMULATED systems, {comparison.backend} {comparison.model}, tier "
        f"{comparison.ranking_tier} ({comparison.slo}), best agents per MW first"
    )
    return Grid(title, columns, rows, notes=table_notes(comparison))


def _cost_words(row: SystemRow) -> str:
    if row.pick is None or row.pick.dollars_per_agent_hour is None:
        return DASH
    kind = "assumed" if row.price.assumed else "given"
    return f"{row.pick.dollars_per_agent_hour:.4f} (${row.price.gpu_hour:.2f}/GPU-h, {kind})"


def table_notes(comparison: SystemsComparison) -> tuple[str, ...]:
    """What the table's figures are, and what the uncertainties let one say."""
    prices = dict.fromkeys(r.price.source for r in comparison.rows)
    return (
        *comparison.notes,
        "repeat: where a repeat of the pick's search would land; error: the system's "
        "calibration error (step times, and power for per MW), '± unknown' where nothing "
        "states it",
        *(f"price: {source}" for source in prices),
        *(d.words for d in comparison.differences),
    )


def print_comparison(comparison: SystemsComparison, console: Console) -> None:
    """The ranked table and its notes."""
    console_lines(comparison_grid(comparison), console)


def chart_rows(comparison: SystemsComparison) -> list[Spec]:
    """One row per (answered system, figure): the value, its repeat interval, a tooltip."""
    rows: list[Spec] = []
    for r in comparison.rows:
        for field, words, digits in FIGURES:
            spread: Spread | None = getattr(r, field)
            if spread is None:
                continue
            rows.append(
                {
                    "system": f"{r.system} x{r.gpus}",
                    "figure": words,
                    "value": spread.value,
                    "low": spread.low if spread.low is not None else spread.value,
                    "high": spread.high if spread.high is not None else spread.value,
                    "label": f"{words} (simulated): {spread_words(spread, digits)}; "
                    f"{_pick_words(r)}; {_source_words(r)}; "
                    f"{r.trust.basis if r.trust is not None else ''}",
                }
            )
    return rows


def systems_chart(comparison: SystemsComparison, figure: str) -> str:
    """One figure of every answered system as bars, repeat intervals as error bars."""
    heading = f"{figure[0].upper()}{figure[1:]} of each system's pick (SIMULATED)"
    rows = [r for r in chart_rows(comparison) if r["figure"] == figure]
    if not rows:
        return vl.empty_chart(heading, "No system met the ranking tier.")
    order = [str(r["system"]) for r in rows]
    x = vl.nominal("system", "system", sort=order, axis={"labelAngle": 0})
    bar = vl.picked(
        "system-bar",
        "systems",
        vl.mark("bar"),
        vl.colors("system", order, [tier_color(i) for i in range(len(order))]),
        x=x,
        y=vl.quant("value", f"{figure} (simulated)"),
        tooltip=[vl.tooltip("label", SIMULATED)],
    )
    whiskers = vl.layer(
        "system-repeat",
        "systems",
        vl.mark("rule", strokeWidth=2),
        x=x,
        y=vl.quant("low"),
        y2={"field": "high"},
    )
    subtitle = [
        f"{comparison.backend} {comparison.model}, tier {comparison.ranking_tier} "
        f"({comparison.slo}); workload {comparison.workload}",
        "SIMULATED: each system's layout search picked its deployment; error bars: where a "
        "repeat of the search would land",
    ]
    spec = vl.layered(
        vl.title(heading, subtitle), [bar, whiskers], {"systems": rows}, height=BAR_HEIGHT
    )
    return chart_html(f"systems-{figure.replace(' ', '-')}", spec, label=heading)


def _table_html(comparison: SystemsComparison) -> str:
    grid = comparison_grid(comparison)
    notes = "".join(f"<li>{e(n)}</li>" for n in grid.notes)
    return f'{grid_html(grid)}<ul class="notes">{notes}</ul>'


def render_systems_report(comparison: SystemsComparison) -> str:
    """The whole page."""
    title = f"agentload systems compared: {comparison.model} ({comparison.ranking_tier})"
    searches = "".join(
        f"<li>{e(r.system)} x{r.gpus}: <code>{e(r.search)}</code> ({r.cpu_s:,.0f} s of CPU)</li>"
        for r in comparison.rows
    )
    body = (
        f"<h1>{e(title)}</h1>"
        '<div class="banner sim">SIMULATED: every figure below is computed by agentload.sim '
        "(each system's layout search, its pick's simulated search), not measured.</div>"
        f"{''.join(systems_chart(comparison, words) for _, words, _ in FIGURES)}"
        f"<h2>Ranked by agents per MW</h2>{_table_html(comparison)}"
        f'<h2>Each system\'s layout search</h2><ul class="notes">{searches}</ul>'
        f'<p class="source">{comparison.cpu_s:,.0f} s of CPU in all. Source: '
        f"{e(SYSTEMS_FILE)}.</p>"
    )
    return page(title, body)


def write_systems_report(
    directory: Path, comparison: SystemsComparison, out: Path | None = None
) -> Path:
    """Write the page (default: `report.html` in the comparison's directory)."""
    return write_page(directory, render_systems_report(comparison), out)


def read_systems(directory: Path) -> SystemsComparison | None:
    """The comparison a directory holds (None: it holds none)."""
    return read_model(directory / SYSTEMS_FILE, SystemsComparison, "a comparison of systems")
