"""Consistency checks a skeptical reader runs on a headline: do its figures fit each other?

The relations, all per GPU (a figure for the whole deployment is divided by its GPUs first):

- throughput: total tokens/s = agents x calls/s per active agent x tokens per call, where
  tokens per call = input + output tokens per call;
- output share = output tokens per call / tokens per call;
- agents per MW = agents per GPU / watts per GPU x 1e6;
- tokens/s per MW = total tokens/s / watts per GPU x 1e6.

`run_checks` takes whatever figures are known. A relation with every figure known is a check:
it agrees when the stated figure is within `CONSISTENCY_TOLERANCE` of what the others imply, and
fails otherwise. A relation missing exactly one figure implies it (and that figure can then
check a later relation: two headlines that imply different watts per GPU disagree). A relation
missing more says nothing. Pure functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Literal

from pydantic import ConfigDict

from agentload.frozen import Frozen
from agentload.units import WATTS_PER_MW, number

CONSISTENCY_TOLERANCE = 0.10
"""How far (relative) a stated figure may be from what the others imply and still agree."""

TOTAL = "total tokens/s per GPU"
AGENTS = "agents per GPU"
CALLS = "calls/s per active agent"
INPUT_PER_CALL = "input tokens per call"
OUTPUT_PER_CALL = "output tokens per call"
OUTPUT_SHARE = "output share of tokens"
WATTS = "watts per GPU"
AGENTS_PER_MW = "agents per MW"
TOKENS_PER_MW = "total tokens/s per MW"
TOKENS_PER_CALL = "tokens per call"
"""Input + output per call: how the throughput and output-share relations meet."""

UNITS: Mapping[str, str] = {
    TOTAL: "tok/s per GPU",
    AGENTS: "agents/GPU",
    CALLS: "calls/s",
    INPUT_PER_CALL: "tokens",
    OUTPUT_PER_CALL: "tokens",
    OUTPUT_SHARE: "share (0..1)",
    WATTS: "W",
    AGENTS_PER_MW: "agents/MW",
    TOKENS_PER_MW: "tok/s per MW",
    TOKENS_PER_CALL: "tokens",
}

Verdict = Literal["agrees", "fails", "implied"]
Figures = dict[str, float]


class RelationCheck(Frozen):
    """One relation between a headline's figures, and what it says about them."""

    relation: str
    """The relation, in words: `total tokens/s per GPU = agents per GPU x ...`."""
    figure: str
    """The figure the relation computes (the stated one, or the one implied)."""
    unit: str
    stated: float | None
    """The figure as given (None when the relation implied it)."""
    implied: float
    """The figure as the relation's other figures imply it."""
    verdict: Verdict

    @property
    def ratio(self) -> float | None:
        """Stated / implied (1 = the figures fit exactly)."""
        return self.stated / self.implied if self.stated is not None and self.implied else None


class _Relation(Frozen):
    """`figure` = a function of `inputs`; `solve[name]` finds an input from the rest."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    words: str
    figure: str
    inputs: tuple[str, ...]
    compute: Callable[[Figures], float]
    solve: Mapping[str, Callable[[Figures], float]]
    subtracts: bool = False
    """Solving for an input subtracts (part = sum - other part): tried last, since a small
    part of a large sum inherits the sum's whole error."""


def _product(target: str, factors: tuple[str, ...], scale: float, divisor: str | None) -> _Relation:
    """target = scale x product(factors) / divisor."""

    def compute(v: Figures) -> float:
        value = scale
        for name in factors:
            value *= v[name]
        return value / v[divisor] if divisor else value

    def solve_factor(name: str) -> Callable[[Figures], float]:
        def solve(v: Figures) -> float:
            rest = scale
            for other in factors:
                if other != name:
                    rest *= v[other]
            return v[target] * (v[divisor] if divisor else 1.0) / rest

        return solve

    def solve_divisor(v: Figures) -> float:
        value = scale
        for name in factors:
            value *= v[name]
        return value / v[target]

    solvers = {name: solve_factor(name) for name in factors}
    if divisor:
        solvers[divisor] = solve_divisor
    inputs = (*factors, *([divisor] if divisor else []))
    words = f"{target} = " + " × ".join(factors)
    if divisor:
        words += f" / {divisor}"
    if scale != 1:
        words += f" × {_power_of_ten(scale)}"
    return _Relation(words=words, figure=target, inputs=inputs, compute=compute, solve=solvers)


def _power_of_ten(scale: float) -> str:
    """`10^6` for a whole power of ten, else the figure (`2.5`): never `1e+06`."""
    exponent = math.log10(scale) if scale > 0 else 0.5
    if exponent == int(exponent):
        return f"10^{int(exponent)}"
    return number(scale)


def _sum(target: str, parts: tuple[str, str]) -> _Relation:
    """target = first + second."""
    first, second = parts
    return _Relation(
        words=f"{target} = {first} + {second}",
        figure=target,
        inputs=parts,
        compute=lambda v: v[first] + v[second],
        solve={first: lambda v: v[target] - v[second], second: lambda v: v[target] - v[first]},
        subtracts=True,
    )


RELATIONS: tuple[_Relation, ...] = (
    _sum(TOKENS_PER_CALL, (INPUT_PER_CALL, OUTPUT_PER_CALL)),
    _product(OUTPUT_SHARE, (OUTPUT_PER_CALL,), 1.0, TOKENS_PER_CALL),
    _product(TOTAL, (AGENTS, CALLS, TOKENS_PER_CALL), 1.0, None),
    _product(AGENTS_PER_MW, (AGENTS,), WATTS_PER_MW, WATTS),
    _product(TOKENS_PER_MW, (TOTAL,), WATTS_PER_MW, WATTS),
)
"""In the order they are tried; an implied figure is offered to every relation again."""


class Checked(Frozen):
    """The checks that could be made, and every figure known once implied ones are added."""

    checks: tuple[RelationCheck, ...]
    figures: dict[str, float]
    implied_by: dict[str, str]
    """An implied figure -> the figure of the relation that implied it (`watts per GPU` ->
    `agents per MW`)."""
    used: frozenset[str]
    """Figures that took part in a check or implied something (the rest changed nothing)."""

    @property
    def failed(self) -> tuple[RelationCheck, ...]:
        """The checks whose stated figure does not fit the others."""
        return tuple(c for c in self.checks if c.verdict == "fails")


def run_checks(known: Mapping[str, float | None]) -> Checked:
    """Check the known figures against each other; imply what one relation pins down.

    Relations are offered the figures again whenever one implies something; a subtraction
    (a part from a sum) is tried only when nothing else moves.
    """
    values: Figures = {k: float(v) for k, v in known.items() if v is not None}
    state = _State(values=values)
    while state.one_pass(subtract=False) or state.one_pass(subtract=True):
        pass
    return Checked(
        checks=tuple(state.checks[r.words] for r in RELATIONS if r.words in state.checks),
        figures=values,
        implied_by=state.implied_by,
        used=frozenset(state.used),
    )


class _State:
    """What `run_checks` has found so far."""

    def __init__(self, values: Figures) -> None:
        self.values = values
        self.implied_by: dict[str, str] = {}
        self.checks: dict[str, RelationCheck] = {}
        self.used: set[str] = set()

    def one_pass(self, *, subtract: bool) -> bool:
        """Offer every relation not yet settled the figures known; True if one was implied."""
        progress = False
        for relation in RELATIONS:
            if relation.words not in self.checks and self._settle(relation, subtract):
                progress = True
        return progress

    def _settle(self, relation: _Relation, subtract: bool) -> bool:
        values = self.values
        names = (relation.figure, *relation.inputs)
        missing = [n for n in names if n not in values]
        if len(missing) > 1 or any(values[n] <= 0 for n in names if n not in missing):
            return False
        if missing and missing[0] != relation.figure and relation.subtracts and not subtract:
            return False
        self.used.update(n for n in names if n not in missing)
        if not missing:
            implied = relation.compute(values)
            stated = values[relation.figure]
            close = abs(stated - implied) <= CONSISTENCY_TOLERANCE * abs(implied)
            verdict: Verdict = "agrees" if close else "fails"
            self.checks[relation.words] = _check(
                relation, relation.figure, stated, implied, verdict
            )
            return False
        name = missing[0]
        solve = relation.compute if name == relation.figure else relation.solve[name]
        value = solve(values)
        if value <= 0:  # the known figures cannot all be right: nothing to imply from them
            self.checks[relation.words] = _check(relation, name, None, value, "fails")
            return False
        values[name] = value
        self.implied_by[name] = relation.figure
        self.checks[relation.words] = _check(relation, name, None, value, "implied")
        return True


def _check(
    relation: _Relation, figure: str, stated: float | None, implied: float, verdict: Verdict
) -> RelationCheck:
    return RelationCheck(
        relation=relation.words,
        figure=figure,
        unit=UNITS.get(figure, ""),
        stated=stated,
        implied=implied,
        verdict=verdict,
    )
