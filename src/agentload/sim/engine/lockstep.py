"""Attention-DP lockstep: the data-parallel ranks of one model copy step together.

With attention data parallelism (SGLang `--enable-dp-attention`, vLLM's DP + EP, TRT-LLM's
attention DP) each rank keeps its own scheduler, batch and KV cache, but every MoE layer runs on
all the group's tokens at once: a step starts on every rank together and ends when the slowest
rank is through (a rank with nothing to do runs an idle batch to take part). So a rank's decode
steps wait for a sibling's prefill chunk, and a rank alone with a long chunk holds everyone.

`LockstepGroup` times its ranks' plans (`Rank.plan`) as one step:

- **any chunk of prefill in the group**: one mixed step for every rank, lasting the slowest
  rank's own part (its decode attention, its chunks' attention and its rank-local work,
  `StepTable.own_part`) plus the MoE part at the group's mean load per rank
  (`StepTable.group_mixed_step`); ranks without chunks decode one step in it;
- **else, decoding**: a decode run of the group's mean batch at its decoders' mean context,
  each step longer by the slowest rank's own part over a mean rank's
  (`StepTable.group_decode_extra`, held over the run: contexts grow alike), up to the first
  completion on any rank and no later than the soonest request still loading;
- **else**: a wait for that request.

An arrival or an abort on any rank cuts the group's decode run after the step in progress (or
ends its wait), as it would a rank's own. A group of evenly loaded ranks steps exactly as the
step tables hold it (they are the operator data's evenly loaded group); see
docs/simulation.md for what this changes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from agentload.sim.engine.rank import Action, ActionKind, Plan, Rank
from agentload.sim.engine.request import SimResult
from agentload.sim.steps.table import StepTable


class LockstepGroup:
    """The attention-DP ranks of one model copy, stepping together (module docstring)."""

    def __init__(self, ranks: Sequence[Rank], steps: StepTable) -> None:
        self.ranks = tuple(ranks)
        self.steps = steps
        self.action: Action | None = None
        self.version = 0
        self.clock = 0.0
        for rank in self.ranks:
            rank.lockstep = self

    @property
    def members(self) -> tuple[Rank, ...]:
        return self.ranks

    @property
    def has_work(self) -> bool:
        return any(rank.has_work for rank in self.ranks)

    # --- forming a step ---------------------------------------------------------------------

    def next_action(self) -> Action | None:
        """Every rank's plan at the group's clock, timed as one step (module docstring); None
        when no rank has anything to do."""
        t0 = self.clock
        active: list[tuple[Rank, Plan]] = []
        for rank in self.ranks:
            rank.clock = t0
            plan = rank.plan()
            if plan is not None:
                active.append((rank, plan))
        if not active:
            return None
        if any(plan.chunks for _, plan in active):
            return self._mixed(t0, active)
        decoding = [(rank, plan) for rank, plan in active if plan.batch]
        ready = min(plan.ready for _, plan in active)
        if decoding:
            return self._decode(t0, decoding, ready)
        return self._commit(Action(ActionKind.WAIT, t0, ready))

    def _mixed(self, t0: float, active: list[tuple[Rank, Plan]]) -> Action:
        steps = self.steps
        size = len(self.ranks)
        slowest = max(
            steps.own_part(plan.prefill, plan.batch, plan.context, plan.spans())
            for _, plan in active
        )
        prefill = sum(plan.prefill for _, plan in active)
        batch = sum(plan.batch for _, plan in active)
        end = t0 + steps.group_mixed_step(slowest, prefill / size, batch / size)
        for rank, plan in active:
            if plan.chunks:
                rank.action = Action(
                    ActionKind.MIXED,
                    t0,
                    end,
                    plan.batch,
                    plan.context,
                    1,
                    plan.prefill,
                    plan.chunks,
                )
            elif plan.batch:
                rank.action = Action(
                    ActionKind.DECODE, t0, end, plan.batch, plan.context, 1, first_end=end
                )
        return self._commit(Action(ActionKind.MIXED, t0, end, steps=1))

    def _decode(self, t0: float, decoding: list[tuple[Rank, Plan]], ready: float) -> Action:
        steps = self.steps
        total = sum(plan.batch for _, plan in decoding)
        batch = max(1, round(total / len(self.ranks)))
        context = sum(plan.batch * plan.context for _, plan in decoding) / total
        slowest = max(steps.own_part(0, plan.batch, plan.context, ()) for _, plan in decoding)
        extra = max(0.0, steps.group_decode_extra(slowest, batch, context))
        count = min(plan.steps for _, plan in decoding)
        if ready < math.inf:
            count = steps.steps_until(batch, context, count, ready - t0, extra)
        end = t0 + steps.decode_run(batch, context, count, extra)
        first = t0 + steps.decode_run(batch, context, 1, extra)
        for rank, plan in decoding:
            rank.action = Action(
                ActionKind.DECODE, t0, end, plan.batch, plan.context, count, first_end=first
            )
        return self._commit(Action(ActionKind.DECODE, t0, end, batch, context, count, extra=extra))

    def _commit(self, action: Action) -> Action:
        self.action = action
        self.version += 1
        return action

    # --- applying and interrupting ----------------------------------------------------------

    def apply(self, out: list[SimResult]) -> None:
        """Apply every rank's part of the step at its end (idle ranks' clocks move to it)."""
        action = self.action
        assert action is not None
        self.action = None
        self.clock = action.end
        for rank in self.ranks:
            if rank.action is not None:
                rank.apply(out)
            else:
                rank.clock = action.end

    def interrupt(self, t: float) -> bool:
        """Something changed at `t` on one of the ranks: cut the group's decode run after the
        step in progress, or end its wait at `t` (True when the step's end moved); an idle
        group's clock moves to `t`."""
        action = self.action
        if action is None:
            if self.clock < t:
                self.clock = t
                for rank in self.ranks:
                    rank.clock = t
            return False
        if action.kind is ActionKind.DECODE and t < action.end:
            steps = self.steps
            count = steps.steps_until(
                action.batch, action.context, action.steps, t - action.start, action.extra
            )
            if count < action.steps:
                action.steps = count
                action.end = action.start + steps.decode_run(
                    action.batch, action.context, count, action.extra
                )
                for rank in self.ranks:
                    if rank.action is not None:
                        rank.action.steps = count
                        rank.action.end = action.end
                self.version += 1
                return True
        elif action.kind is ActionKind.WAIT and t < action.end:
            self.action = None
            self.clock = t
            for rank in self.ranks:
                rank.clock = t
            self.version += 1
            return True
        return False
