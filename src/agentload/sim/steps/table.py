"""Step times on a grid: the only step-time interface the engine's hot loop uses.

A step of a continuous-batching engine decodes `b` running sequences (one token each, at a
mean context of `c` tokens) and may prefill chunks of prompts (`p` tokens in all, each chunk
attending to the `span` tokens before it). Its time is tabulated once, from any source
(aiconfigurator-core's measured operators, a roofline, a constant), as:

- `decode[b][c]`: a decode-only step;
- a mixed step (any prefill in it) = `shared[p][b]` (everything but attention, for `p + b`
  tokens) + `decode_attention[b][c]` + the sum over chunks of `chunk_attention[p_i][span_i]`;
- `local[p][b]`: the share of `shared` each rank computes on its own tokens alone (norms,
  projections outside attention, the shared experts, the logits), the rest being the MoE
  layers an attention-DP group runs on every rank's tokens together (`group_step` below; 0
  when a source does not split them).

An attention-DP group (the `dp` ranks of one model copy) steps in lockstep: its step lasts the
slowest rank's own part (attention, its chunks, its local work) plus the MoE part at the
group's mean load (`group_mixed_step`, `group_decode_extra`).

Lookups interpolate bilinearly. Batch and prefill-token axes clamp at their ends (build the
grid to cover the engine's limits); the context axis extrapolates linearly past its ends.

Decode-only stretches are jumped over in closed form: at a fixed batch the interpolant is
linear in the context within each context cell, and the mean context grows by exactly one
token per step, so the time of `n` steps is a sum of arithmetic series, one per cell crossed
(`decode_run`), and the step in progress at a given time solves a quadratic (`steps_until`).
No per-token Python work.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

Grid = tuple[tuple[float, ...], ...]
"""Row-major values: `grid[i][j]` at (first axis[i], second axis[j])."""

ROOT_SLACK = 1e-9
"""Guard when rounding a quadratic's root to whole steps (then checked exactly)."""


def _clamped(axis: Sequence[float], x: float) -> tuple[int, float]:
    """Cell and weight of `x` on `axis`, clamped to the axis ends."""
    if x <= axis[0]:
        return 0, 0.0
    last = len(axis) - 1
    if x >= axis[last]:
        return last - 1, 1.0
    i = bisect_right(axis, x) - 1
    return i, (x - axis[i]) / (axis[i + 1] - axis[i])


def _linear(axis: Sequence[float], x: float) -> tuple[int, float]:
    """Cell and weight of `x` on `axis`, extrapolating the end cells past the ends."""
    i = bisect_right(axis, x) - 1
    if i < 0:
        i = 0
    elif i > len(axis) - 2:
        i = len(axis) - 2
    return i, (x - axis[i]) / (axis[i + 1] - axis[i])


def _bilinear(grid: Grid, i: int, wi: float, j: int, wj: float) -> float:
    row0, row1 = grid[i], grid[i + 1]
    v0 = row0[j] + (row0[j + 1] - row0[j]) * wj
    v1 = row1[j] + (row1[j + 1] - row1[j]) * wj
    return v0 + (v1 - v0) * wi


def _check_axis(name: str, axis: Sequence[float]) -> None:
    if len(axis) < 2:
        raise ValueError(f"step table: axis {name} needs at least two points")
    if any(b <= a for a, b in pairwise(axis)):
        raise ValueError(f"step table: axis {name} must be strictly increasing")


def _check_grid(name: str, grid: Grid, rows: int, cols: int, *, positive: bool) -> None:
    if len(grid) != rows or any(len(row) != cols for row in grid):
        raise ValueError(f"step table: {name} must be {rows} x {cols}")
    for row in grid:
        for value in row:
            if not math.isfinite(value) or value < 0 or (positive and value <= 0):
                raise ValueError(f"step table: {name} has a bad value {value!r}")


@dataclass(frozen=True, eq=False)
class StepTable:
    """Step times (seconds) on a grid; see the module docstring for the decomposition."""

    batch: tuple[float, ...]
    """Decode sequences in a step, ascending, from 1."""
    context: tuple[float, ...]
    """Mean context of the decoding sequences / attention span of a chunk, tokens, ascending."""
    chunk: tuple[float, ...]
    """Prefill tokens in a step, ascending, from 1."""
    decode: Grid
    """[batch][context]: a decode-only step."""
    shared: Grid
    """[chunk][0, *batch]: a mixed step's non-attention time (prefill + decode tokens)."""
    decode_attention: Grid
    """[batch][context]: a mixed step's decode-attention time."""
    chunk_attention: Grid
    """[chunk][context]: attention time of one prefill chunk over its span."""
    source: str
    """Where the numbers come from, with versions (provenance for results)."""
    local: Grid | None = None
    """[chunk][0, *batch]: the rank-local share of `shared` (None: all of it is the group's)."""
    _batch0: tuple[float, ...] = field(init=False, repr=False)
    _rows: dict[int, tuple[tuple[float, ...], tuple[float, ...]]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        _check_axis("batch", self.batch)
        _check_axis("context", self.context)
        _check_axis("chunk", self.chunk)
        if self.batch[0] < 1 or self.chunk[0] < 1:
            raise ValueError("step table: batch and chunk axes start at 1 or more")
        nb, nc, np_ = len(self.batch), len(self.context), len(self.chunk)
        _check_grid("decode", self.decode, nb, nc, positive=True)
        _check_grid("shared", self.shared, np_, nb + 1, positive=True)
        _check_grid("decode_attention", self.decode_attention, nb, nc, positive=False)
        _check_grid("chunk_attention", self.chunk_attention, np_, nc, positive=False)
        if self.local is not None:
            _check_grid("local", self.local, np_, nb + 1, positive=False)
        object.__setattr__(self, "_batch0", (0.0, *self.batch))
        object.__setattr__(self, "_rows", {})

    # --- building -------------------------------------------------------------------------

    @classmethod
    def tabulate(
        cls,
        *,
        batch: Sequence[float],
        context: Sequence[float],
        chunk: Sequence[float],
        decode: Callable[[int, float], float],
        shared: Callable[[int, int], float],
        decode_attention: Callable[[int, float], float],
        chunk_attention: Callable[[int, float], float],
        source: str,
        local: Callable[[int, int], float] | None = None,
    ) -> StepTable:
        """Evaluate a source's functions (seconds) on the grid: `decode(b, c)`, `shared(p, b)`
        (b may be 0), `decode_attention(b, c)`, `chunk_attention(p, span)` and, when the
        source splits it, `local(p, b)` (the rank-local share of `shared`)."""
        b_axis = tuple(float(b) for b in batch)
        c_axis = tuple(float(c) for c in context)
        p_axis = tuple(float(p) for p in chunk)
        return cls(
            batch=b_axis,
            context=c_axis,
            chunk=p_axis,
            decode=tuple(tuple(decode(int(b), c) for c in c_axis) for b in b_axis),
            shared=tuple(tuple(shared(int(p), int(b)) for b in (0.0, *b_axis)) for p in p_axis),
            decode_attention=tuple(
                tuple(decode_attention(int(b), c) for c in c_axis) for b in b_axis
            ),
            chunk_attention=tuple(
                tuple(chunk_attention(int(p), c) for c in c_axis) for p in p_axis
            ),
            source=source,
            local=None
            if local is None
            else tuple(tuple(local(int(p), int(b)) for b in (0.0, *b_axis)) for p in p_axis),
        )

    @classmethod
    def constant(cls, step_s: float) -> StepTable:
        """Every step, decode-only or mixed, takes `step_s` seconds (for tests and
        hand-checked arithmetic)."""
        if step_s <= 0:
            raise ValueError("step time must be positive")
        return cls.tabulate(
            batch=(1, 2),
            context=(0, 1),
            chunk=(1, 2),
            decode=lambda b, c: step_s,
            shared=lambda p, b: step_s,
            decode_attention=lambda b, c: 0.0,
            chunk_attention=lambda p, c: 0.0,
            source=f"constant {step_s} s per step",
        )

    def blend(self, other: StepTable, weight: float, source: str) -> StepTable:
        """`self + weight * (other - self)` cell by cell (both on the same grid): a table between
        two (0 <= weight <= 1) or past `other` (weight > 1). Every value is kept at half or more
        of the smaller of its two (an extrapolation does not reach zero)."""
        if (self.batch, self.context, self.chunk) != (other.batch, other.context, other.chunk):
            raise ValueError("step tables on different grids cannot be blended")

        def mix(a: Grid, b: Grid) -> Grid:
            return tuple(
                tuple(
                    max(x + weight * (y - x), 0.5 * min(x, y))
                    for x, y in zip(row_a, row_b, strict=True)
                )
                for row_a, row_b in zip(a, b, strict=True)
            )

        local = None
        if self.local is not None and other.local is not None:
            local = mix(self.local, other.local)
        return StepTable(
            batch=self.batch,
            context=self.context,
            chunk=self.chunk,
            decode=mix(self.decode, other.decode),
            shared=mix(self.shared, other.shared),
            decode_attention=mix(self.decode_attention, other.decode_attention),
            chunk_attention=mix(self.chunk_attention, other.chunk_attention),
            source=source,
            local=local,
        )

    # --- single steps ---------------------------------------------------------------------

    def decode_step(self, batch: int, context: float) -> float:
        """A decode-only step of `batch` sequences at mean context `context`."""
        i, wi = _clamped(self.batch, batch)
        j, wj = _linear(self.context, context)
        return _bilinear(self.decode, i, wi, j, wj)

    def mixed_step(
        self,
        prefill_tokens: float,
        batch: int,
        context: float,
        chunks: Sequence[tuple[int, int]],
    ) -> float:
        """A step prefilling `chunks` ((tokens, span) each) while decoding `batch` sequences at
        mean context `context`; its non-attention part is that of `prefill_tokens` prefill
        tokens (the chunks' sum)."""
        total = self.shared_part(prefill_tokens, batch)
        if batch > 0:
            total += self.attention_part(batch, context)
        for tokens, span in chunks:
            total += self.chunk_part(tokens, span)
        return total

    def _at_load(self, grid: Grid, prefill_tokens: float, batch: float) -> float:
        i, wi = _clamped(self.chunk, prefill_tokens)
        k, wk = _clamped(self._batch0, batch)
        return _bilinear(grid, i, wi, k, wk)

    def shared_part(self, prefill_tokens: float, batch: float) -> float:
        """A mixed step's non-attention time for `prefill_tokens` prefill and `batch` decode
        tokens (a rank of an evenly loaded group)."""
        return self._at_load(self.shared, prefill_tokens, batch)

    def local_part(self, prefill_tokens: float, batch: float) -> float:
        """The rank-local share of `shared_part` (0 when the source does not split it)."""
        if self.local is None:
            return 0.0
        return self._at_load(self.local, prefill_tokens, batch)

    def attention_part(self, batch: float, context: float) -> float:
        """The decode attention of `batch` sequences at mean context `context`."""
        b, wb = _clamped(self.batch, batch)
        j, wj = _linear(self.context, context)
        return _bilinear(self.decode_attention, b, wb, j, wj)

    def chunk_part(self, tokens: float, span: float) -> float:
        """The attention of one prefill chunk of `tokens` over `span` cached tokens."""
        i, wi = _clamped(self.chunk, tokens)
        j, wj = _linear(self.context, span)
        return _bilinear(self.chunk_attention, i, wi, j, wj)

    def own_part(
        self, prefill_tokens: float, batch: int, context: float, chunks: Sequence[tuple[int, int]]
    ) -> float:
        """What one rank of an attention-DP group computes on its own tokens in a step: its
        decode attention, its chunks' attention and its local non-attention work."""
        own = self.local_part(prefill_tokens, batch)
        if batch > 0:
            own += self.attention_part(batch, context)
        for tokens, span in chunks:
            own += self.chunk_part(tokens, span)
        return own

    def group_mixed_step(self, slowest_own: float, mean_prefill: float, mean_batch: float) -> float:
        """A lockstep group's mixed step: the slowest rank's own part (`own_part`) plus the
        group part (MoE layers and their collectives) at the group's mean load per rank."""
        return (
            slowest_own
            + self.shared_part(mean_prefill, mean_batch)
            - self.local_part(mean_prefill, mean_batch)
        )

    def group_decode_extra(self, slowest_own: float, batch: int, context: float) -> float:
        """What a lockstep group's decode step takes beyond `decode_step(batch, context)` at
        its mean batch and context: the slowest rank's own decode part over that of a rank at
        the mean (0 when every rank carries the mean)."""
        return slowest_own - self.own_part(0, batch, context, ())

    # --- decode runs in closed form -------------------------------------------------------

    def _row(self, batch: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """Intercepts and slopes of the decode time at `batch`, per context cell."""
        row = self._rows.get(batch)
        if row is None:
            i, wi = _clamped(self.batch, batch)
            lo, hi = self.decode[i], self.decode[i + 1]
            values = [a + (b - a) * wi for a, b in zip(lo, hi, strict=True)]
            axis = self.context
            slopes = tuple(
                (values[j + 1] - values[j]) / (axis[j + 1] - axis[j]) for j in range(len(axis) - 1)
            )
            intercepts = tuple(values[j] - slopes[j] * axis[j] for j in range(len(axis) - 1))
            row = (intercepts, slopes)
            self._rows[batch] = row
        return row

    def _cells(self, context: float, steps: int) -> Iterator[tuple[int, int, float]]:
        """A decode run of `steps` from mean context `context`, cut where it crosses the
        context grid: (grid cell, steps in it, mean context at its first step) each."""
        axis, last = self.context, len(self.context) - 2
        c, left = context, steps
        while left > 0:
            j = bisect_right(axis, c) - 1
            if j >= last:
                j = last
                m = left
            else:
                if j < 0:
                    j = 0
                m = math.ceil(axis[j + 1] - c)
                if m < 1:
                    m = 1
                elif m > left:
                    m = left
            yield j, m, c
            c += m
            left -= m

    def decode_run(self, batch: int, context: float, steps: int, extra: float = 0.0) -> float:
        """Time of `steps` decode-only steps of `batch` sequences, the first at mean context
        `context` (each step adds one token to every sequence), each step `extra` seconds
        longer (a lockstep group's imbalance, `group_decode_extra`)."""
        intercepts, slopes = self._row(batch)
        total = extra * steps
        for j, m, c in self._cells(context, steps):
            total += m * intercepts[j] + slopes[j] * (m * c + m * (m - 1) / 2)
        return total

    def steps_until(
        self, batch: int, context: float, steps: int, budget: float, extra: float = 0.0
    ) -> int:
        """The fewest decode steps (1..`steps`) whose total time reaches `budget` seconds
        (`steps` if even all of them fall short): the step in progress `budget` seconds after
        the run began ends the run when it is cut there (steps `extra` seconds longer each, as
        in `decode_run`)."""
        intercepts, slopes = self._row(batch)
        done, total = 0, 0.0
        for j, m, c in self._cells(context, steps):
            a, s = intercepts[j] + extra, slopes[j]
            cell = m * a + s * (m * c + m * (m - 1) / 2)
            if total + cell >= budget:
                return done + _first_reaching(a, s, c, m, budget - total)
            total += cell
            done += m
        return steps


def _first_reaching(a: float, s: float, c: float, m: int, need: float) -> int:
    """Smallest k in 1..m with sum_{i<k} (a + s (c + i)) >= need (the sum at m reaches it)."""

    def partial(k: int) -> float:
        return k * a + s * (k * c + k * (k - 1) / 2)

    if need <= 0:
        return 1
    linear = a + s * c - s / 2
    if abs(s) < ROOT_SLACK:
        guess = need / linear
    else:
        disc = linear * linear + 2 * s * need
        guess = (-linear + math.sqrt(max(disc, 0.0))) / s
    k = min(max(1, math.ceil(guess - ROOT_SLACK)), m)
    while k > 1 and partial(k - 1) >= need:
        k -= 1
    while k < m and partial(k) < need:
        k += 1
    return k
