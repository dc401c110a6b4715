"""Systems side by side: `compare_systems(SystemsRequest) -> SystemsResult`, behind
`agentload simulate --compare-systems gb300:72,b300_sxm:8,mi355x:8,h200_sxm:16`.

The buyer's question: which system serves more agents per MW (and per GPU, and per dollar),
and by how much. Each system gets the whole layout search of its budget
(`agentload.layouts.choose.choose_layout`, the same request otherwise: model, backend, routing,
workload, tiers, searches), into `systems/<system>-x<gpus>/`; its pick at the ranking tier (the
first: most agents, simulated) is its row. Rows are ranked by agents per MW. Each figure
carries two uncertainties: where a repeat of the search would land (the pick's repeat
interval) and the system's calibration error (`trust_of`: how far its step times, and its
power, can be trusted; unknown when nothing states it). Neighbours in the ranking are compared
as `agentload compare` compares results (`agentload.results.answer_words`: repeat intervals
inside each other, ratios inside the combined band): a difference the uncertainties cover is
said to be one, never ranked (`difference`).

A system none of whose deployments is left (every one pruned, or none met the tier) is a row
that says why, not a failure of the comparison. `systems.json` is written last, atomically
(`agentload.results.systems`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from itertools import pairwise
from pathlib import Path

from pydantic import Field
from rich.console import Console

from agentload import __version__
from agentload.console import err_console
from agentload.errors import AgentloadError, InputError
from agentload.files import make_results_dir, owner_only_files, write_json_atomic
from agentload.frozen import Frozen
from agentload.layouts.choose import choose_layout
from agentload.layouts.price import price_for_system
from agentload.layouts.request import LayoutRequest
from agentload.results.answer_words import combined_band, overlapping, within_band
from agentload.results.layouts import LayoutSearch, RankedRow
from agentload.results.load import read_summary
from agentload.results.summary import SimulationFacts
from agentload.results.systems import (
    SYSTEMS_FILE,
    SYSTEMS_FOLDER,
    Difference,
    Spread,
    SystemRow,
    SystemsComparison,
    Trust,
)
from agentload.results.tiers import slo_text
from agentload.run.execute import default_out_dir
from agentload.sim.specs.hardware import gpu_spec
from agentload.sim.specs.model import model_shape

OPTION = "--compare-systems"
_BUDGET = re.compile(r"^([A-Za-z0-9_.-]+):(\d+)$")
SIMULATED_NOTE = (
    "every figure is simulated (agentload.sim), not measured: each system's layout search "
    "picked its deployment, and the figures are that pick's simulated search at the ranking tier"
)
UNKNOWN = "unknown"


class SystemBudget(Frozen):
    """A system and the GPUs a buyer would deploy of it."""

    system: str
    gpus: int = Field(ge=1)

    @property
    def name(self) -> str:
        """`gb300-x72`: its folder and label."""
        return f"{self.system}-x{self.gpus}"


def parse_systems(text: str) -> tuple[SystemBudget, ...]:
    """`gb300:72,b300_sxm:8` -> the systems and their budgets (two or more, each once, each a
    system the simulator has specs of); one line naming the option when malformed."""
    found: list[SystemBudget] = []
    for part in text.replace(" ", "").split(","):
        match = _BUDGET.match(part)
        if match is None or int(match.group(2)) < 1:
            raise InputError(
                f"bad system {part!r} in {text!r}: each is SYSTEM:GPUS, joined by commas "
                "(e.g. gb300:72,b300_sxm:8)",
                field=OPTION,
            )
        found.append(SystemBudget(system=match.group(1), gpus=int(match.group(2))))
    if len(found) < 2:
        raise InputError("compares two or more systems (e.g. gb300:72,b300_sxm:8)", field=OPTION)
    names = [b.system for b in found]
    if len(set(names)) < len(names):
        raise InputError(f"each system once: {text!r}", field=OPTION)
    for budget in found:
        gpu_spec(budget.system)  # unknown systems refused before any search runs
    return tuple(found)


class SystemsRequest(Frozen):
    """A comparison: the systems and budgets, and the layout search each gets (its system,
    GPUs, output folder and price are each system's own)."""

    systems: tuple[SystemBudget, ...] = Field(min_length=2)
    layout: LayoutRequest
    gpu_hour: float | None = Field(default=None, ge=0)
    """$ per GPU-hour given for every system (None: each system's published or assumed
    price, `agentload.layouts.price.price_for_system`)."""
    kwh: float | None = Field(default=None, ge=0)
    out: Path | None = None


class SystemsResult(Frozen):
    """A finished comparison: where it wrote, and `systems.json`'s content."""

    out: Path
    comparison: SystemsComparison


def compare_systems(request: SystemsRequest, console: Console | None = None) -> SystemsResult:
    """Each system's layout search, its pick ranked by agents per MW, the differences in
    words (module docstring); `systems.json` in the result's `out`."""
    wall0, cpu0 = time.perf_counter(), time.process_time()
    console = console or err_console()
    base = request.layout
    model_shape(base.deployment.model)  # an unknown model refused before any search
    label = "systems-" + "-".join(b.name for b in request.systems)
    out = request.out or default_out_dir(label)
    with owner_only_files():
        make_results_dir(out)
    rows = []
    for budget in request.systems:
        console.print(f"{budget.name}: the layout search of {budget.gpus} x {budget.system}")
        rows.append(_system_row(request, budget, out, console))
    ranked = rank_rows(rows)
    tier = base.search.tiers[0]
    comparison = SystemsComparison(
        tool_version=__version__,
        complete=True,
        model=base.deployment.model,
        backend=base.deployment.backend,
        routing=base.deployment.routing,
        workload=base.workload,
        ranking_tier=tier.name,
        slo=slo_text(tier),
        rows=ranked,
        differences=differences(ranked),
        wall_s=time.perf_counter() - wall0,
        cpu_s=time.process_time() - cpu0,
        notes=(SIMULATED_NOTE,),
    )
    with owner_only_files():
        write_json_atomic(out / SYSTEMS_FILE, comparison.model_dump(mode="json"))
    return SystemsResult(out=out, comparison=comparison)


def _system_row(
    request: SystemsRequest, budget: SystemBudget, out: Path, console: Console
) -> SystemRow:
    """One system's layout search and its row (a refusal is a row saying why)."""
    cpu0 = time.process_time()
    folder = Path(SYSTEMS_FOLDER) / budget.name
    price = price_for_system(budget.system, request.gpu_hour, request.kwh)
    base = request.layout
    search = base.model_copy(
        update={
            "deployment": base.deployment.model_copy(
                update={"system": budget.system, "gpus": budget.gpus}
            ),
            "out": out / folder,
            "price": price,
        }
    )
    row = SystemRow(system=budget.system, gpus=budget.gpus, search=str(folder), price=price)
    try:
        result = choose_layout(search, console)
    except AgentloadError as exc:
        console.print(f"{budget.name}: no answer ({exc})")
        return row.model_copy(update={"refused": str(exc), "cpu_s": time.process_time() - cpu0})
    return answered_row(row, result.layouts, out / folder).model_copy(
        update={"cpu_s": time.process_time() - cpu0}
    )


def answered_row(row: SystemRow, ranking: LayoutSearch, folder: Path) -> SystemRow:
    """A system's row from its layout search (in `folder`): its pick at the ranking tier, the
    figures with their repeat intervals and calibration error."""
    pick = ranking.pick(ranking.ranking_tier)
    if pick is None or not pick.max_agents:
        return row.model_copy(
            update={"refused": f"no searched deployment met {ranking.ranking_tier}", "pick": pick}
        )
    facts = read_summary(folder / pick.results).simulated
    trust = trust_of(facts)
    return row.model_copy(
        update={
            "pick": pick,
            "step_source": facts.step_source if facts is not None else None,
            "trust": trust,
            "agents_per_gpu": _spread(pick, pick.agents_per_gpu, trust.calibration_error),
            "agents_per_mw": _spread(pick, pick.agents_per_mw, per_mw_error(trust)),
        }
    )


def _spread(pick: RankedRow, value: float | None, error: float | None) -> Spread | None:
    """A figure proportional to the pick's agents, with the repeat interval scaled to it."""
    if value is None or not pick.max_agents:
        return None
    scale = value / pick.max_agents
    low = pick.interval_low * scale if pick.interval_low is not None else None
    high = pick.interval_high * scale if pick.interval_high is not None else None
    return Spread(value=value, low=low, high=high, error=error)


def calibration_error(facts: SimulationFacts | None) -> float | None:
    """The one place a system's calibration error is read (None: unknown): the long-context
    band its simulated summary states for its step times (`simulated.uncertainty`: a roofline
    calibrated on the system's published figures, its held-out 8K-input error; operator data,
    its error on the published long-context points where checked, else the largest checked),
    else its error band."""
    if facts is None or facts.uncertainty is None:
        return None
    uncertainty = facts.uncertainty
    if uncertainty.long_context_band is not None:
        return uncertainty.long_context_band
    return uncertainty.error_band


def power_error(facts: SimulationFacts | None) -> float | None:
    """The power model's error on this system (None: unknown; no simulated summary states one
    yet)."""
    return None


def trust_of(facts: SimulationFacts | None) -> Trust:
    """How far a system's figures can be trusted, from its pick's simulated summary."""
    uncertainty = facts.uncertainty if facts is not None else None
    return Trust(
        calibrated=uncertainty is not None and uncertainty.calibrated,
        calibration_error=calibration_error(facts),
        power_error=power_error(facts),
        basis=uncertainty.basis if uncertainty is not None else "no uncertainty stated",
    )


def per_mw_error(trust: Trust) -> float | None:
    """Agents per MW rest on the step times and the power model: both errors, combined; unknown
    when either is."""
    if trust.calibration_error is None or trust.power_error is None:
        return None
    return combined_band(trust.calibration_error, trust.power_error)


def rank_rows(rows: Sequence[SystemRow]) -> tuple[SystemRow, ...]:
    """Answered rows by agents per MW (then per GPU), ranked; the others after, unranked."""
    answered = [r for r in rows if r.agents_per_mw is not None]
    answered.sort(
        key=lambda r: (
            -(r.agents_per_mw.value if r.agents_per_mw else 0.0),
            -(r.agents_per_gpu.value if r.agents_per_gpu else 0.0),
        )
    )
    others = [r for r in rows if r.agents_per_mw is None]
    ranked = [r.model_copy(update={"rank": i}) for i, r in enumerate(answered, start=1)]
    return (*ranked, *others)


def differences(rows: Sequence[SystemRow]) -> tuple[Difference, ...]:
    """Each ranked row against the next one down (`difference`)."""
    ranked = [r for r in rows if r.rank is not None]
    return tuple(difference(a, b) for a, b in pairwise(ranked))


def difference(higher: SystemRow, lower: SystemRow) -> Difference:
    """What can be said of two systems' agents per MW: the searches' repeat intervals inside
    each other (no measured difference), an error unknown (not known), the ratio inside their
    combined error (the simulation cannot rank them), or a ranking."""
    a, b = higher.agents_per_mw, lower.agents_per_mw
    if a is None or b is None:
        raise ValueError("a difference is between two answered rows")
    ratio = a.value / b.value
    said = f"{_name(higher)} against {_name(lower)}: {ratio:.2f}x the agents per MW (simulated)"
    found = Difference(
        higher=_name(higher), lower=_name(lower), ratio=ratio, verdict="ranked", words=said
    )
    if _repeats_overlap(a, b):
        return found.model_copy(
            update={
                "verdict": "no measured difference",
                "words": f"{said}, each inside the other's repeat interval: no measured difference",
            }
        )
    if a.error is None or b.error is None:
        unknown = " and ".join(_name(r) for r, x in ((higher, a), (lower, b)) if x.error is None)
        return found.model_copy(
            update={
                "verdict": "not known",
                "words": f"{said}; the error of {unknown} is {UNKNOWN} (calibration or power), "
                "so whether the difference is real is not known",
            }
        )
    band = combined_band(a.error, b.error)
    if within_band(ratio, band):
        verdict, words = "cannot rank", f"inside the combined error (±{band:.0%}): the simulation "
        words += "cannot rank them"
    else:
        verdict = "ranked"
        words = f"outside the repeat intervals and the combined error (±{band:.0%})"
    return found.model_copy(update={"verdict": verdict, "band": band, "words": f"{said}, {words}"})


def _repeats_overlap(a: Spread, b: Spread) -> bool:
    """Each figure inside the other's repeat interval (False when either states none)."""
    if a.low is None or b.low is None:
        return False
    return overlapping((a.value, a.low, a.high), (b.value, b.low, b.high))


def _name(row: SystemRow) -> str:
    return f"{row.system} x{row.gpus}"
