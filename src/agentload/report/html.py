"""The HTML report: one self-contained file (inline CSS, inline chart scripts and their data,
nothing fetched), so it opens offline.

Read from a results directory alone (`agentload.report.load`), so a run measured on a GPU box
can be reported anywhere. Every string that came from a file or a server (labels, model names,
error bodies, notes) is escaped with `html.escape` in the page and as JSON in the charts'
specs (`agentload.report.vega`); every figure names its unit, its window and its source.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentload.errors import InputError
from agentload.files import write_text_atomic
from agentload.report.charts import cache_section, curve_section, mix_chart
from agentload.report.context import ReportContext, report_context
from agentload.report.distributions import distributions_section
from agentload.report.facts import facts_section, workload_words
from agentload.report.formats import (
    DASH,
    arrival_rows,
    e,
    fmt,
    pct,
    power_rows,
    service_rows,
    utc,
    whole,
    with_gpu,
)
from agentload.report.load import STATUS_UNREADABLE, Point, ResultsView
from agentload.report.over_time import over_time_section
from agentload.report.palette import BLUE, tier_color
from agentload.report.plan_section import plan_section
from agentload.report.quality_section import quality_section
from agentload.report.vega import CHART_STYLE, page_scripts
from agentload.results.answer_words import (
    NOT_DECIDED,
    answer_words,
    interval_words,
    level_words,
)
from agentload.results.files import (
    PROBES_FILE,
    RECORDS_FILE,
    REPORT_FILE,
    SUMMARY_FILE,
)
from agentload.results.summary import AgentsInterval, ProbeFigures, TierResult
from agentload.results.tiers import slo_text
from agentload.units import agents_words, number
from agentload.vocabulary import PER_ACTIVE_AGENT, PER_REQUEST, TOOL_TIME_INCLUDED

DETAIL_CHARS = 240
"""Longest error detail quoted in the errors table."""
STYLE = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 0; color: #1d1d1f;
  background: #fafafa; }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 60px; background: #fff; }
h1 { font-size: 1.6em; margin: 0 0 4px; }
h2 { font-size: 1.2em; margin: 36px 0 8px; border-bottom: 2px solid #e3e3e3; padding-bottom: 4px; }
h3 { font-size: 1.0em; margin: 18px 0 6px; }
p { margin: 6px 0; line-height: 1.45; }
.sub { color: #555; margin: 0 0 12px; }
.banner { padding: 10px 14px; border-radius: 6px; margin: 10px 0; font-weight: 600; }
.banner.bad { background: #fde8e4; border: 1px solid #d55e00; color: #8a2a00; }
.banner.warn { background: #fff5db; border: 1px solid #e69f00; color: #6b4a00; }
.banner.ok { background: #e5f5ef; border: 1px solid #009e73; color: #00553e; }
.banner.sim { background: #f3e8f7; border: 1px solid #cc79a7; color: #5e2750; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(300px, 1fr)); gap: 12px;
  margin: 12px 0; }
.card { border: 1px solid #ddd; border-radius: 8px; padding: 12px 14px; background: #fcfcfd; }
.card .tier { font-weight: 700; font-size: 1.05em; }
.card .slo { color: #555; font-size: 0.85em; margin-bottom: 8px; }
.card .big { font-size: 1.9em; font-weight: 700; line-height: 1.1; }
.card .big small { font-size: 0.45em; font-weight: 500; color: #555; }
.card dl { display: grid; grid-template-columns: auto auto; gap: 2px 10px; margin: 8px 0 0;
  font-size: 0.88em; }
.card dt { color: #555; } .card dd { margin: 0; text-align: right;
  font-variant-numeric: tabular-nums; }
table { border-collapse: collapse; margin: 8px 0; font-size: 0.88em; }
th, td { border: 1px solid #d9d9d9; padding: 4px 6px; vertical-align: top; }
th { background: #f2f2f4; text-align: left; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.pass { color: #00704f; font-weight: 600; } td.fail { color: #a33b00; font-weight: 600; }
td.uncertain { color: #8a6d00; font-weight: 600; }
.wide { overflow-x: auto; }
.source { color: #666; font-size: 0.82em; margin: 2px 0 10px; }
.decoded { font-size: 1.05em; background: #f5f8fc; border-left: 4px solid #0072b2;
  padding: 8px 12px; margin: 8px 0; }
ul.notes li { margin: 2px 0; }
code { font-family: ui-monospace, 'SF Mono', Menlo, monospace; font-size: 0.92em; }
table.facts { table-layout: fixed; width: 100%; }
table.facts col.what { width: 28%; } table.facts td:first-child { color: #555; }
span.w { white-space: nowrap; }
table.facts th { background: #f7f7f9; }
table.facts td { overflow-wrap: anywhere; }
table.facts.raw td { font-family: ui-monospace, Menlo, monospace; font-size: 0.92em; }
details { margin: 10px 0; } summary { cursor: pointer; color: #444; }
table.probes { font-size: 0.8em; }
table.probes th, table.probes td { padding: 3px 4px; }
@media print {
  @page { size: landscape; margin: 12mm; }
  body { background: #fff; } main { max-width: none; padding: 0; }
  .wide { overflow: visible; } details { display: none; }
  table.probes { font-size: 0.66em; } table.probes th, table.probes td { padding: 2px 3px; }
}
"""


def render_report(view: ResultsView) -> str:
    """The whole report as one HTML document."""
    ctx = report_context(view)
    title = f"agentload report: {view.label}"
    sections = [
        _header(ctx),
        _headline(ctx),
        curve_section(ctx),
        _tables(ctx),
        quality_section(ctx),
        _mix_section(ctx),
        distributions_section(ctx),
        over_time_section(ctx),
        cache_section(ctx),
        _errors(ctx),
        plan_section(view.path),
        facts_section(view.manifest),
        _notes(ctx),
    ]
    return page(title, "".join(sections))


def page(title: str, body: str) -> str:
    """A self-contained report page: the style, `body`, and the scripts its charts need."""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)}</title><style>{STYLE}{CHART_STYLE}</style></head>"
        f"<body><main>{body}</main>{page_scripts(body)}</body></html>\n"
    )


def write_report(view: ResultsView, out: Path | None = None) -> Path:
    """Render the report and write it (default: `report.html` in the results directory).

    Written atomically (`write_text_atomic`): owner-only, never through a symlink.
    """
    path = out if out is not None else view.path / REPORT_FILE
    if path.is_dir():
        path = path / REPORT_FILE
    if path.is_symlink():
        raise InputError("is a symlink; refusing to write the report through it", path=path)
    if not path.parent.is_dir():
        raise InputError("the report's folder does not exist", path=path.parent)
    write_text_atomic(path, render_report(view))
    return path


# --- header and headline -----------------------------------------------------------------


def _served_at(endpoint: dict[str, Any], *, simulated: bool) -> list[str]:
    """Where the calls went: `at <url> · API chat`, or, for a simulated run (no server, no
    API), `simulated <system>`; a fact the manifest lacks is left out, not written `unknown`."""
    if simulated:
        system = endpoint.get("system")
        return [f"simulated <b>{e(system)}</b>" if system else "simulated"]
    bits = []
    if endpoint.get("base_url"):
        bits.append(f"at <code>{e(endpoint['base_url'])}</code>")
    if endpoint.get("api"):
        bits.append(f"API {e(endpoint['api'])}")
    return bits


def _header(ctx: ReportContext) -> str:
    view = ctx.view
    manifest = view.manifest
    endpoint = view.manifest_section("endpoint")
    workload = view.manifest_section("workload")
    tool = view.manifest_section("tool")
    times = view.manifest_section("times")
    version = tool.get("version") or (view.summary.tool_version if view.summary else None)
    bits = [
        f"model <b>{e(view.model or 'unknown')}</b>",
        *_served_at(endpoint, simulated=view.simulated),
        f"workload <b>{e(workload.get('name') or workload.get('spec') or 'unknown')}</b>",
        e(ctx.words.size),
        f"agentload {e(version or '?')}",
    ]
    started = times.get("started_at", manifest.get("created_at"))
    parameters = workload_words(workload)
    parts = [
        f"<h1>agentload report: {e(view.label)}</h1>",
        f'<p class="sub">{e(view.kind)} · {" · ".join(bits)} · started {e(utc(started))}</p>',
        *([f'<p class="sub">workload parameters: {e(parameters)}</p>'] if parameters else []),
        f'<p class="sub">results directory <code>{e(view.path)}</code></p>',
    ]
    from_records = (
        f"Figures below are computed from {RECORDS_FILE}"
        + (f" and {PROBES_FILE}" if view.probes else "")
        + " over the windows stated with each figure."
    )
    if view.simulated_words:
        parts.append(f'<div class="banner sim">{e(view.simulated_words)}</div>')
    if view.status == STATUS_UNREADABLE:
        parts.append(
            f'<div class="banner warn">Summary unreadable: {e(view.summary_problem)}. '
            f"{e(from_records)}</div>"
        )
    elif view.summary is None:
        parts.append(
            f'<div class="banner bad">INCOMPLETE: {e(view.summary_problem)}. '
            f"{e(from_records)}</div>"
        )
    elif not view.summary.complete:
        parts.append(
            '<div class="banner bad">INCOMPLETE: the run was interrupted; the summary covers '
            "what was measured before it stopped.</div>"
        )
    else:
        parts.append(
            f'<div class="banner ok">Complete: {e(SUMMARY_FILE)} written at the end.</div>'
        )
    if view.summary is not None and not view.summary.client_ok:
        check = view.summary.selfcheck
        why = "; ".join(check.notes) if check is not None and check.notes else "event-loop lag"
        parts.append(
            '<div class="banner warn">The load generator fell behind its schedule '
            f"({e(why)}): the client may have been the bottleneck, so these figures are "
            "suspect.</div>"
        )
    return "".join(parts)


def _headline(ctx: ReportContext) -> str:
    tiers = ctx.tiers
    if tiers:
        cards = "".join(_tier_card(ctx, tier, tier_color(i)) for i, tier in enumerate(tiers))
        title = (
            "Provisional headline per tier" if ctx.view.tiers_provisional else "Headline per tier"
        )
        return (
            f"<h2>{title}</h2>"
            '<p class="source">Each tier: the most concurrent agents whose steady-state window '
            f"met its output-speed floor and TTFT ceiling; figures at that point. "
            f"{e(ctx.view.power_words)}. Source: {e(_tier_source(ctx))}.</p>"
            f'<div class="cards">{cards}</div>'
        )
    if not ctx.points:
        return "<h2>Headline</h2><p>No measured window: no records and no probes.</p>"
    point = max(ctx.points, key=lambda p: p.figures.agents)
    return "<h2>Headline</h2>" + _point_card(ctx, point)


def _tier_source(ctx: ReportContext) -> str:
    if ctx.view.tiers_provisional:
        return (
            f"{PROBES_FILE} verdicts and the manifest's tiers (PROVISIONAL: the search did not "
            "finish, so a tier may have passed only because its failing count was never probed)"
        )
    return SUMMARY_FILE


def _tier_card(ctx: ReportContext, tier: TierResult, color: str) -> str:
    slo = slo_text(tier).replace(", ", " · ")
    rows: list[tuple[str, str]] = []
    settled = ctx.view.decided(tier)
    if not settled:
        big = f"{NOT_DECIDED} <small>interrupted</small>"
    elif tier.max_agents is None:
        big = "none <small>no probe met it</small>"
    else:
        shown = answer_words(tier.max_agents, None, at_cap=tier.limit == "max_agents")
        big = f"{shown} <small>agents</small>"
    if tier.max_agents is not None:
        rows = [
            *([] if settled else [("passed so far", agents_words(tier.max_agents))]),
            ("total tokens/s", _with_gpu(ctx, tier.total_tokens_per_s)),
            ("· cached input", _with_gpu(ctx, tier.cached_input_tokens_per_s)),
            ("· uncached input", _with_gpu(ctx, tier.uncached_input_tokens_per_s)),
            ("· output", _with_gpu(ctx, tier.output_tokens_per_s)),
            ("p25 output speed", _unit(fmt(tier.p25_output_tokens_per_s), PER_REQUEST)),
            ("p95 TTFT", _unit(fmt(tier.p95_ttft_s, 2), "s")),
            ("cache hit rate", pct(tier.cache_hit_rate)),
            ("mean power", ctx.words.power(tier.mean_watts)),
            ("agents per MW", ctx.words.per_mw(tier.agents_per_mw)),
            ("tokens/s per MW", ctx.words.per_mw(tier.total_tokens_per_s_per_mw)),
        ]
    if tier.max_agents_interval is not None:
        rows.insert(0, _repeat_row(tier.max_agents_interval))
    if tier.first_failing_agents is not None:
        rows.append(("first failing", agents_words(tier.first_failing_agents)))
    dl = "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in rows)
    notes = "".join(f'<p class="source">{e(n)}</p>' for n in ctx.view.tier_notes(tier))
    if tier.explanation:
        notes = f'<p class="source"><b>Why:</b> {e(tier.explanation)}</p>' + notes
    return (
        f'<div class="card" style="border-top: 4px solid {color}">'
        f'<div class="tier">{e(tier.name)}</div><div class="slo">{e(slo)}</div>'
        f'<div class="big">{big}</div><dl>{dl}</dl>{notes}</div>'
    )


def _unit(value: str, unit: str) -> str:
    return value if value == "—" else f"{value} {unit}"


def _point_card(ctx: ReportContext, point: Point) -> str:
    f = point.figures
    rows = [
        ("total tokens/s", _with_gpu(ctx, f.total_tokens_per_s)),
        ("  cached input", _with_gpu(ctx, f.cached_input_tokens_per_s)),
        ("  uncached input", _with_gpu(ctx, f.uncached_input_tokens_per_s)),
        ("  output", _with_gpu(ctx, f.output_tokens_per_s)),
        (
            "p25 / p50 output speed",
            f"{fmt(f.p25_output_tokens_per_s)} / {fmt(f.p50_output_tokens_per_s)} {PER_REQUEST}",
        ),
        ("p50 / p95 TTFT", f"{fmt(f.p50_ttft_s, 2)} / {fmt(f.p95_ttft_s, 2)} s"),
        ("cache hit rate", pct(f.cache_hit_rate)),
        ("requests", f"{f.requests_ok:,} ok, {f.requests_failed:,} failed"),
        (
            "mean power",
            ctx.words.power(f.mean_watts) if f.mean_watts is not None else "not measured",
        ),
    ]
    dl = "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in rows)
    return (
        f'<div class="cards"><div class="card" style="border-top: 4px solid {BLUE}">'
        f'<div class="tier">{e(ctx.point_label(point))}</div>'
        f'<div class="slo">{e(_window_words(point))}</div>'
        f'<div class="big">{fmt(ctx.per_gpu(f.total_tokens_per_s), 0)} '
        f"<small>{e(ctx.throughput())}</small></div><dl>{dl}</dl></div></div>"
        f'<p class="source">Source: {e(point.source)}. {e(ctx.view.power_words)}.</p>'
    )


def _with_gpu(ctx: ReportContext, value: float | None) -> str:
    return with_gpu(value, ctx.gpus if ctx.gpus_known else None)


def _window_words(point: Point) -> str:
    f = point.figures
    return f"window {fmt(f.window_s, 1)} s from {utc(f.window_start)}"


# --- tables -----------------------------------------------------------------------------------


def _td(value: str, cls: str = "num") -> str:
    return f'<td class="{cls}">{e(value)}</td>'


def _tables(ctx: ReportContext) -> str:
    parts = []
    if ctx.tiers:
        parts.append(_tier_table(ctx))
    if ctx.points:
        parts.append(_probe_table(ctx))
    return "".join(parts)


def _repeat_row(interval: AgentsInterval) -> tuple[str, str]:
    """The card's row: where a repeat of the search would answer, at its level."""
    return (
        f"a repeat ({level_words(interval)})",
        f"{interval_words(interval)} agents",
    )


def _tier_table(ctx: ReportContext) -> str:
    """Tiers as columns, figures as rows (a handful of tiers, many figures)."""
    tiers = ctx.tiers
    words = ctx.words
    per_gpu = ctx.throughput()
    total_per_gpu = ("total", per_gpu, lambda t: fmt(ctx.tier_total_per_gpu(t), 0))
    output_per_gpu = ("output", per_gpu, lambda t: fmt(ctx.per_gpu(t.output_tokens_per_s), 0))
    figures: list[tuple[str, str, Any]] = [
        ("output-speed floor", PER_REQUEST, lambda t: _slo_speed(t)),
        ("TTFT ceiling", "s", lambda t: _slo_ttft(t)),
        ("e2e interactivity floor", PER_REQUEST, lambda t: _slo_interactivity(t)),
        ("max agents", "agents (a repeat's range)", ctx.view.answer_words),
        ("first failing", "agents", lambda t: whole(t.first_failing_agents)),
        ("total", "tokens/s", lambda t: fmt(t.total_tokens_per_s, 0)),
        *([total_per_gpu] if ctx.gpus_known else []),
        ("cached input", "tokens/s", lambda t: fmt(t.cached_input_tokens_per_s, 0)),
        ("uncached input", "tokens/s", lambda t: fmt(t.uncached_input_tokens_per_s, 0)),
        ("output", "tokens/s", lambda t: fmt(t.output_tokens_per_s, 0)),
        *([output_per_gpu] if ctx.gpus_known else []),
        *service_rows(p50=True, interactivity="e2e interactivity (1/p90)"),
        *power_rows(words),
        (
            "energy per output token",
            "J/token",
            lambda t: words.marked(_figure(t.joules_per_output_token)),
        ),
        ("energy per token", "J/token", lambda t: words.marked(_figure(t.joules_per_token))),
    ]
    rows = []
    for name, unit, get in figures:
        cells = "".join(_td(get(t)) for t in tiers)
        rows.append(f"<tr>{_td(name, 'name')}{_td(unit, 'name')}{cells}</tr>")
    head = ["figure", "unit", *(f"tier {t.name}" for t in tiers)]
    return (
        "<h2>Tiers</h2>"
        + _table(head, rows, "tiers")
        + f"<p class=\"source\">At each tier's max-agents point, over that probe's steady-state "
        f"window. {e(ctx.view.power_words)}. Source: {e(_tier_source(ctx))}.</p>"
    )


def _slo_speed(tier: TierResult) -> str:
    if tier.output_speed_floor_tokens_per_s is None:
        return "—"
    return f"p{tier.output_speed_percentile:g} ≥ {tier.output_speed_floor_tokens_per_s:g}"


def _slo_ttft(tier: TierResult) -> str:
    if tier.ttft_ceiling_s is None:
        return "—"
    return f"p{tier.ttft_percentile:g} ≤ {tier.ttft_ceiling_s:g}"


def _slo_interactivity(tier: TierResult) -> str:
    if tier.interactivity_floor_tokens_per_s is None:
        return "—"
    return f"1/p{tier.interactivity_percentile or 90:g} ≥ {tier.interactivity_floor_tokens_per_s:g}"


def _probe_extras(f: ProbeFigures) -> list[str]:
    """One line each for a probe's goodput, session figures and methodology stamp, when the
    results carry them."""
    lines = []
    if f.goodput_calls_per_s:
        lines.append(
            "goodput (calls/s meeting each tier alone): "
            + ", ".join(f"{name} {fmt(v, 2)}" for name, v in f.goodput_calls_per_s.items())
        )
    if f.sessions is not None and f.sessions.sessions:
        s = f.sessions
        slowdown = (
            f"; slowdown vs one agent p50 {fmt(s.slowdown_p50, 2)}x, p90 {fmt(s.slowdown_p90, 2)}x"
            if s.slowdown_p50 is not None
            else ""
        )
        lines.append(
            f"sessions: {s.sessions} over the window, wall time p50 {fmt(s.wall_s_p50)} s, "
            f"{pct(s.model_share)} waiting on the model, {pct(s.tool_share)} in tool time"
            + slowdown
        )
    if f.arrivals is not None:
        lines.append(
            "; ".join(
                f"{name}: {value} {unit}".rstrip() for name, value, unit in arrival_rows(f.arrivals)
            )
        )
    if f.methodology is not None:
        stamp = f.methodology
        verdict = "valid" if stamp.valid else "not valid: " + "; ".join(stamp.reasons)
        lines.append(f"{stamp.rules} rules: {verdict}")
    return lines


def _probe_table(ctx: ReportContext) -> str:
    tier_names = [t.name for t in ctx.tiers] or sorted(
        {name for p in ctx.points for name in p.figures.verdicts}
    )
    power_header, power_cell = ctx.words.power_column([p.figures.mean_watts for p in ctx.points])
    head = [
        "agents",
        *(f"tier {n}" for n in tier_names),
        "window, s",
        "requests ok / failed",
        "error rate",
        "total tokens/s",
        *([f"total {ctx.throughput()}"] if ctx.gpus_known else []),  # else the same figure
        "output tokens/s",
        "p25 / p50 output speed, tokens/s",
        "p50 / p95 TTFT, s",
        "e2e interactivity 1/p90, tokens/s",
        "cache hit (client / server)",
        "in flight (mean)",
        f"{power_header}, {ctx.words.power_unit}",
    ]
    rows = []
    for point in ctx.points:
        f = point.figures
        cells = [_td(f"{f.agents:,}"), *_verdict_cells(ctx, point, tier_names)]
        cells += [
            _td(fmt(f.window_s, 1)),
            _td(f"{f.requests_ok:,} / {f.requests_failed:,}"),
            _td(pct(f.error_rate, 2)),
            _td(fmt(f.total_tokens_per_s, 0)),
            *([_td(fmt(ctx.per_gpu(f.total_tokens_per_s), 0))] if ctx.gpus_known else []),
            _td(fmt(f.output_tokens_per_s, 1)),
            _td(f"{fmt(f.p25_output_tokens_per_s)} / {fmt(f.p50_output_tokens_per_s)}"),
            _td(f"{fmt(f.p50_ttft_s, 3)} / {fmt(f.p95_ttft_s, 3)}"),
            _td(fmt(f.p90_interactivity_tokens_per_s)),
            _td(f"{pct(f.cache_hit_rate)} / {pct(f.server_cache_hit_rate)}"),
            _td(fmt(f.achieved_concurrency, 2)),
            _td(power_cell(f.mean_watts)),
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
        for note in (*f.notes, *_probe_extras(f)):
            rows.append(f'<tr><td></td><td colspan="{len(head) - 1}">{e(note)}</td></tr>')
    sources = ", ".join(sorted({p.source for p in ctx.points}))
    return (
        "<h2>Probes</h2>"
        + _table(head, rows, "probes")
        + '<p class="source">One row per concurrency level, each over its own steady-state '
        f"window{e(ctx.words.assumed_clause)}. Throughputs are for the whole deployment unless "
        f"marked. Source: {e(sources)}.</p>"
    )


def _verdict_cells(ctx: ReportContext, point: Point, tier_names: Sequence[str]) -> list[str]:
    """The probe's verdict per tier, coloured, beside its agent count (in view however wide
    the table)."""
    cells = []
    for name in tier_names:
        verdict = ctx.view.verdict(point, name)
        cls = verdict if verdict in ("pass", "fail", "uncertain") else "num"
        cells.append(_td(verdict, cls))
    return cells


def _table(head: Sequence[str], rows: Sequence[str], cls: str = "") -> str:
    header = "".join(f"<th>{e(h)}</th>" for h in head)
    table = f'<table class="{cls}">' if cls else "<table>"
    return f'<div class="wide">{table}<tr>{header}</tr>{"".join(rows)}</table></div>'


# --- token mix ---------------------------------------------------------------------------------


def _decoded(
    ctx: ReportContext,
    name: str,
    total: float | None,
    cached: float | None,
    uncached: float | None,
    output: float | None,
    agents: int | None,
) -> str:
    if not total or cached is None or uncached is None or output is None:
        return f'<p class="decoded">{e(name)}: no token counts.</p>'
    per_gpu = f" ({fmt(total / ctx.gpus, 0)} per GPU)" if ctx.gpus_known else ""
    text = (
        f"{name}: of {fmt(total, 0)} tokens/s{per_gpu}, {pct(cached / total)} are cached input "
        f"reads, {pct(uncached / total)} uncached input (prefill) and {pct(output / total)} "
        f"generated output"
    )
    if agents:
        text += (
            f"; that is {fmt(total / agents, 0)} {PER_ACTIVE_AGENT} ({TOOL_TIME_INCLUDED}), "
            f"{fmt(output / agents, 2)} of them output"
        )
    return f'<p class="decoded">{e(text)}.</p>'


def _mix_section(ctx: ReportContext) -> str:
    if not ctx.points:
        return ""
    lines = []
    for tier in ctx.tiers:
        if tier.max_agents is None:
            continue
        lines.append(
            _decoded(
                ctx,
                f"Tier {tier.name} at {agents_words(tier.max_agents)}",
                tier.total_tokens_per_s,
                tier.cached_input_tokens_per_s,
                tier.uncached_input_tokens_per_s,
                tier.output_tokens_per_s,
                tier.max_agents,
            )
        )
    if not lines:
        point = max(ctx.points, key=lambda p: p.figures.agents)
        f = point.figures
        lines.append(
            _decoded(
                ctx,
                f"At {agents_words(f.agents)}",
                f.total_tokens_per_s,
                f.cached_input_tokens_per_s,
                f.uncached_input_tokens_per_s,
                f.output_tokens_per_s,
                f.agents,
            )
        )
    return (
        "<h2>Token mix: what the tokens per second are made of</h2>"
        + "".join(lines)
        + mix_chart(ctx)
        + '<p class="source">Tokens attributed to each probe\'s steady-state window (prompt '
        "tokens over prefill, output over decode), split by the server's reported cached tokens, "
        f"{e(ctx.throughput())}. Source: "
        f"{e(', '.join(sorted({p.source for p in ctx.points})))}.</p>"
    )


# --- errors, facts, notes ----------------------------------------------------------------------


def _errors(ctx: ReportContext) -> str:
    records = ctx.view.records
    failed = [r for r in records if r.error is not None]
    if not records:
        return ""
    if not failed:
        return (
            f"<h2>Errors</h2><p>None: all {len(records):,} requests in {e(RECORDS_FILE)} "
            "succeeded.</p>"
        )
    counts = Counter(r.error for r in failed)
    rows = []
    for kind, count in counts.most_common():
        example = next(r for r in failed if r.error == kind)
        statuses = Counter(r.status for r in failed if r.error == kind and r.status is not None)
        detail = (example.error_detail or "")[:DETAIL_CHARS]
        rows.append(
            "<tr>"
            + _td(str(kind), "name")
            + _td(f"{count:,}")
            + _td(", ".join(f"{s} ×{n}" for s, n in statuses.most_common()) or "—", "name")
            + f"<td><code>{e(detail)}</code></td></tr>"
        )
    return (
        "<h2>Errors</h2>"
        + _table(["kind", "requests", "HTTP status", "example detail (first seen)"], rows)
        + f'<p class="source">{len(failed):,} of {len(records):,} requests failed over the whole '
        f"run. Source: {e(RECORDS_FILE)}.</p>"
    )


def _notes(ctx: ReportContext) -> str:
    view = ctx.view
    notes = [view.summary_problem] if view.summary_problem else []
    notes.extend(view.report_notes())
    if view.run_window is not None and any(p.source != SUMMARY_FILE for p in ctx.points):
        w = view.run_window
        notes.append(f"run window: {w.description}, {fmt(w.window.duration_s)} s (from {w.source})")
    if not notes:
        return ""
    items = "".join(f"<li>{e(n)}</li>" for n in notes)
    return f'<h2>Notes</h2><ul class="notes">{items}</ul>'


def _figure(value: float | None) -> str:
    """A figure to its significant digits (`0.000123`, not `0.0001`), an em dash unknown."""
    return DASH if value is None else number(value)
