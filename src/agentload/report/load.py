"""A results directory as the report sees it (read by `agentload.results.load`, tolerantly).

`ResultsView` decides which windows the figures cover: each probe's steady-state window
when probes were recorded, else the run's steady-state window from the manifest's times, else
the whole run as the records cover it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import cached_property
from pathlib import Path
from typing import Any, TypeGuard

from pydantic import ValidationError

from agentload.measure.figures import probe_figures
from agentload.measure.headline import tier_results
from agentload.measure.metrics import RecordTable, WindowMetrics, window_metrics
from agentload.measure.window import STEADY_STATE_SETTLE_S, Window, steady_state_window
from agentload.report.formats import DeploymentWords
from agentload.results.answer_words import CUT_SHORT, decided, tier_answer_words
from agentload.results.files import MANIFEST_FILE, RECORDS_FILE
from agentload.results.load import ResultsFiles, load_results
from agentload.results.summary import ProbeFigures, TierResult
from agentload.results.tiers import Tier
from agentload.search.answers import annotate
from agentload.units import agents_words, count_words, fix_plurals
from agentload.vocabulary import layout_words

STATUS_INCOMPLETE = "INCOMPLETE"
STATUS_UNREADABLE = "summary unreadable"

SOURCE_SUMMARY = "summary.json"
SOURCE_PROBES = "probes.jsonl"
SOURCE_RECORDS = "records.jsonl"


@dataclass(frozen=True)
class Point:
    """One measured concurrency level (a probe) and where its figures came from."""

    figures: ProbeFigures
    source: str
    """`summary.json`, `probes.jsonl`, or `records.jsonl` (computed here from the records)."""

    @property
    def window(self) -> Window:
        return Window(self.figures.window_start, self.figures.window_end)


@dataclass(frozen=True)
class RunWindow:
    """The window a plain run's figures cover, and how it was chosen."""

    window: Window
    description: str
    """`steady-state window`, `whole run (no steady state)`, ..."""
    source: str
    """Where its bounds came from."""


@dataclass(frozen=True, eq=False)
class ResultsView(ResultsFiles):
    """Everything in a results directory the report uses, and what it derives from it."""

    @classmethod
    def of(cls, files: ResultsFiles) -> ResultsView:
        """The view of a directory's files."""
        return cls(**{f.name: getattr(files, f.name) for f in fields(ResultsFiles)})

    def manifest_section(self, key: str) -> dict[str, Any]:
        """One object of the manifest (`times`, `endpoint`, ...); empty when absent or not
        an object."""
        section = self.manifest.get(key)
        return section if isinstance(section, dict) else {}

    @property
    def complete(self) -> bool:
        """A finished run: a valid summary that says it completed."""
        return self.summary is not None and self.summary.complete

    @property
    def status(self) -> str:
        """`complete`; `INCOMPLETE` (no summary, or it says the run was interrupted); or
        `summary unreadable` (a summary this version cannot read: figures from the records)."""
        if self.summary is not None:
            return "complete" if self.summary.complete else STATUS_INCOMPLETE
        return STATUS_INCOMPLETE if self.summary_missing else STATUS_UNREADABLE

    @property
    def label(self) -> str:
        if self.summary is not None and self.summary.label:
            return self.summary.label
        label = self.manifest.get("label")
        return str(label) if label else self.path.name

    @property
    def kind(self) -> str:
        """`search` or `run`."""
        if self.summary is not None:
            return self.summary.kind
        return "search" if self.probes else "run"

    @property
    def gpus(self) -> int | None:
        """Accelerators serving the model, when the run was told."""
        if self.summary is not None and self.summary.gpus:
            return self.summary.gpus
        gpus = self.manifest.get("gpus")
        return gpus if isinstance(gpus, int) and gpus >= 1 else None

    @property
    def deployment_words(self) -> DeploymentWords:
        """How the deployment's size, power and per-MW figures read (terminal and HTML)."""
        assumed = self.summary is not None and self.summary.power.assumed
        return DeploymentWords(self.gpus, assumed=assumed, serving=self._cpu_engine_words())

    def _cpu_engine_words(self) -> str | None:
        """`llama.cpp on CPU, 1 thread` for an engine the tool started on the CPU, from the
        manifest's engine facts; None otherwise."""
        engine = self.manifest_section("engine")
        build = engine.get("build")
        if not isinstance(build, dict) or build.get("backend") != "cpu":
            return None
        name = engine.get("engine") or "the engine"
        threads = engine.get("threads")
        if isinstance(threads, int) and threads >= 1:
            return f"{name} on CPU, {count_words(threads, 'thread')}"
        return f"{name} on CPU"

    @property
    def model(self) -> str | None:
        endpoint = self.manifest.get("endpoint")
        model = endpoint.get("model") if isinstance(endpoint, dict) else None
        return str(model) if model is not None else None

    @property
    def simulated_words(self) -> str | None:
        """`SIMULATED: ...` in one line (what stands for what, and where its numbers came from),
        or None for measured results."""
        if not self.simulated:
            return None
        facts = self.summary.simulated if self.summary is not None else None
        if facts is None:
            return "SIMULATED: figures from a simulated engine, not measured on a server"
        d = facts.deployment
        if d.pools and len(d.pools) > 1:
            counts = " + ".join(
                f"{p.role}: {layout_words(p.parallel, p.dp_ranks)}" for p in d.pools
            )
            layout = f"{d.layout}, disaggregated ({counts})"
        else:
            layout = f"{d.parallel} ({layout_words(d.parallel, d.dp_ranks)})"
        extras = "".join(
            f", {extra}"
            for extra in (
                f"{d.routing} routing" if d.routing != "affinity" else None,
                f"speculative decoding: {d.speculative.split(' (', 1)[0]}"
                if d.speculative
                else None,
                d.kv_transfer,
            )
            if extra
        )
        return (
            f"SIMULATED: {d.gpus} x {d.system}, {d.backend}, {d.model}, {layout}{extras}, not "
            f"measured; step times: {facts.step_source}; "
            f"power: {facts.power_model}; errors against measurements: {facts.validation}"
        )

    @property
    def simulated(self) -> bool:
        """Whether the figures came from a simulated engine: the summary carries the
        simulator's marker (a `simulated` field, not None) or the manifest says `simulated`."""
        marker = self.summary.simulated if self.summary is not None else None
        flag = self.manifest.get("simulated")
        return marker is not None or (flag is not None and flag is not False)

    @property
    def power_words(self) -> str:
        """`power: nvml`, `power: assumed (ASSUMED, ...)`, or why there is no power figure;
        a declared figure says what it stands for."""
        if self.summary is None:
            return "power: not summarised (no valid summary)"
        power = self.summary.power
        if power.source == "none":
            return "power: not measured"
        if power.assumed:
            basis = power.description.removeprefix("assumed ") if power.description else ""
            return "power: ASSUMED, a declared constant, not measured" + (
                f": {fix_plurals(basis)}" if basis else ""
            )
        words = f"power: {power.source}"
        if not power.valid:
            words += f" (invalid: {power.reason or 'coverage gaps'})"
        return words

    def report_notes(self) -> list[str]:
        """The summary's, tiers' own (`tier_notes`), probes' and loader's notes, one line each."""
        notes: list[str] = []
        if self.summary is not None:
            notes.extend(self.summary.notes)
        for tier in self.tiers:
            notes.extend(f"tier {tier.name}: {n}" for n in self.tier_notes(tier))
        for point in self.points:
            f = point.figures
            notes.extend(f"probe at {agents_words(f.agents)}: {n}" for n in f.notes)
            if self._cut_short(point):
                notes.append(
                    f"probe at {agents_words(f.agents)}: {CUT_SHORT} by the interrupt; its "
                    f"figures are computed from {RECORDS_FILE} over what it measured and were "
                    "never judged against the tiers"
                )
        notes.extend(self.notes)
        return notes

    def tier_notes(self, tier: TierResult) -> list[str]:
        """The tier's own notes: those of the probe it was answered at, which it carries so that
        summary.json's tier stands alone, are said under the probe."""
        said_by_probes = {n for point in self.points for n in point.figures.notes}
        return [n for n in tier.notes if n not in said_by_probes]

    @cached_property
    def tiers(self) -> tuple[TierResult, ...]:
        """The summary's tier results. For a search killed before its summary, recomputed from
        `probes.jsonl` and the manifest's tiers (`tiers_provisional`)."""
        if self.summary is not None:
            return self.summary.tiers
        if not self.probes:
            return ()
        tiers = self._manifest_tiers()
        if not tiers:
            return ()
        cap = self._manifest_max_agents()
        found = tier_results(tiers, self.probes, self.gpus, cap)
        precision = self._search_settings().get("precision")
        if cap is None or not _is_number(precision):  # not a search's manifest: none settled
            return found
        return annotate(
            found, self.probes, tiers, precision=float(precision), max_agents=cap, gpus=self.gpus
        )

    def answer_words(self, tier: TierResult) -> str:
        """The tier's answer as every table of the report writes it: `3 (2-4)`, `64+`, `none`,
        or `not decided (interrupted)` for a tier an interrupted search did not settle."""
        return tier_answer_words(tier, complete=self.complete)

    def decided(self, tier: TierResult) -> bool:
        """Whether the tier's answer is settled (`results.answer_words.decided`)."""
        return decided(tier, self.complete)

    def verdict(self, point: Point, tier: str) -> str:
        """A probe's verdict for a tier: `pass`, `fail`, `uncertain`; `cut short` for a search's
        probe the interrupt cut short (its figures computed from the records, never judged);
        an em dash when the probe did not judge the tier."""
        found = point.figures.verdicts.get(tier)
        if found is not None:
            return found
        return CUT_SHORT if self._cut_short(point) else "—"

    def _cut_short(self, point: Point) -> bool:
        return point.source == SOURCE_RECORDS and self.kind == "search"

    @property
    def tiers_provisional(self) -> bool:
        """Tier results recomputed from an unfinished search's probes, not read from a summary."""
        return self.summary is None and bool(self.tiers)

    def _search_settings(self) -> dict[str, Any]:
        """The manifest's search settings (empty when absent)."""
        settings = self.manifest.get("settings")
        search = settings.get("search") if isinstance(settings, dict) else None
        return search if isinstance(search, dict) else {}

    def _manifest_max_agents(self) -> int | None:
        cap = self._search_settings().get("max_agents")
        return cap if isinstance(cap, int) and cap >= 1 else None

    def _manifest_tiers(self) -> tuple[Tier, ...]:
        raw = self._search_settings().get("tiers")
        if not isinstance(raw, list):
            return ()
        try:
            return tuple(Tier.model_validate(t) for t in raw)
        except ValidationError:
            return ()

    @cached_property
    def table(self) -> RecordTable:
        """The records as columns, built once."""
        return RecordTable.from_records(self.records)

    @cached_property
    def run_window(self) -> RunWindow | None:
        """The window a plain run is judged over; None without records or times."""
        times = self.manifest.get("times")
        if isinstance(times, dict):
            recorded = _recorded_window(times)
            if recorded is not None:
                steady = times.get("steady_state") is not False
                words = "steady-state window" if steady else "whole run (no steady state)"
                return RunWindow(recorded, words, f"{MANIFEST_FILE} times.window")
            window = _steady_from_times(times, self._settle_s())
            if window is not None:
                return RunWindow(window, "steady-state window", f"{MANIFEST_FILE} times")
            whole = _whole_from_times(times)
            if whole is not None:
                return RunWindow(whole, "whole run (no steady state)", f"{MANIFEST_FILE} times")
        if self.records:
            return RunWindow(
                Window.covering(self.records),
                "whole run (no times in the manifest)",
                f"{RECORDS_FILE} first send to last close",
            )
        return None

    @cached_property
    def points(self) -> tuple[Point, ...]:
        """Every measured concurrency level, by agent count: the summary's probes, else
        `probes.jsonl`, else one computed from the records over the run's window."""
        if self.summary is not None and self.summary.probes:
            found = [Point(p, SOURCE_SUMMARY) for p in self.summary.probes]
        elif self.probes:
            found = [Point(p, SOURCE_PROBES) for p in self.probes]
        else:
            computed = self._computed_point()
            found = [computed] if computed is not None else []
        return tuple(sorted(found, key=lambda p: (p.figures.agents, p.figures.index)))

    @cached_property
    def run_metrics(self) -> WindowMetrics | None:
        """Window metrics of a plain run over `run_window`, from the records."""
        window = self.run_window
        if window is None or not self.records or not window.window.duration_s > 0:
            return None
        return window_metrics(self.table, window.window, agents=self._agents())

    def _computed_point(self) -> Point | None:
        metrics = self.run_metrics
        if metrics is None:
            return None
        agents = metrics.agents or max(metrics.agents_active, 1)
        return Point(probe_figures(metrics, agents=agents), SOURCE_RECORDS)

    def _run_settings(self) -> dict[str, Any]:
        """The manifest's run settings (a search nests them under `run`)."""
        settings = self.manifest.get("settings")
        if not isinstance(settings, dict):
            return {}
        nested = settings.get("run")
        return nested if isinstance(nested, dict) else settings

    def _settle_s(self) -> float:
        settle = self._run_settings().get("settle_s")
        return float(settle) if _is_number(settle) and settle >= 0 else STEADY_STATE_SETTLE_S

    def _agents(self) -> int | None:
        agents = self._run_settings().get("agents")
        return agents if isinstance(agents, int) and agents >= 1 else None


def load_view(path: str | Path) -> ResultsView:
    """Read a results directory for the report (`agentload.results.load.load_results`);
    one-line `InputError` when there is nothing to report from."""
    return ResultsView.of(load_results(path))


def _is_number(value: object) -> TypeGuard[float]:
    """A finite int or float (not a bool)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def _steady_from_times(times: dict[str, Any], settle_s: float) -> Window | None:
    starts = times.get("agent_starts")
    end = times.get("measurement_end")
    if not (isinstance(starts, Sequence) and _is_number(end)):
        return None
    numbers = [float(s) for s in starts if _is_number(s)]
    return steady_state_window(numbers, float(end), settle_s)


def _recorded_window(times: dict[str, Any]) -> Window | None:
    """The window the run itself measured (`times.window`: [start, end]), when recorded."""
    bounds = times.get("window")
    if (
        isinstance(bounds, list)
        and len(bounds) == 2
        and all(_is_number(b) for b in bounds)
        and bounds[1] > bounds[0]
    ):
        return Window(float(bounds[0]), float(bounds[1]))
    return None


def _whole_from_times(times: dict[str, Any]) -> Window | None:
    start, end = times.get("started_at"), times.get("measurement_end")
    if _is_number(start) and _is_number(end) and end > start:
        return Window(float(start), float(end))
    return None
