"""Which data-parallel rank of a pool a call goes to: round robin, session affinity, or cache-aware.

Each attention data-parallel rank (an engine instance without DP) is a target, as a KV-aware
router sees them (Dynamo routes to DP ranks; SGLang's DP attention balances within an engine
instance): a policy picks among all the pool's ranks (SGLang's router with `--dp-aware`).
Loads are the router's own view of the ranks: `active` (requests routed and not finished),
`active_tokens` (their prompt + output tokens) and `pending_prefill` (the uncached prompt
tokens of those not yet through prefill, as the router estimated them when it routed them).

- `round_robin`: ranks in turn.
- `affinity` (session-affine): a session's calls all go to the rank its first call went to,
  a new session to the one with the fewest live sessions (SGLang's PD router pins a
  conversation the same way).
- `cache_aware`: SGLang's router `cache_aware` policy with its defaults: when the loads are
  unbalanced (max - min > `BALANCE_ABS_THRESHOLD` requests and max > min x
  `BALANCE_REL_THRESHOLD`), the least loaded rank; else the rank whose cache holds the
  longest prefix of the prompt if it covers more than `CACHE_THRESHOLD` of it; else the rank
  with the smallest cache. SGLang's router keeps an approximate tree of the text it routed;
  here the ranks' own caches are read (what it approximates), and a rank's size counts
  the prompts routed to it and not yet prefilled (its tree holds them from the moment it
  routes them).
- `kv`: Dynamo's KV router with temperature 0 (`DefaultWorkerSelector`): the lowest
  `KV_OVERLAP_WEIGHT` x (prefill blocks it would have: pending plus this prompt's uncached) +
  (decode blocks it would have: active plus this request's); on a prefill-only rank the
  decode term is the prefill term, as Dynamo's. Dynamo reads the workers' KV events, i.e.
  their caches, as here.

Cost: a rank's cached prefix is looked up (`KvCache.match`) only on the ranks the
session's calls went to (the last `VISITED`) and on the `OTHERS` least loaded of the rest. A
rank that never saw the session can hold only the prefix sessions share (a system prompt),
held alike by every warm rank, so among those the least loaded is the one a full scan picks
(unless it alone lacks the shared prefix: the one approximation).

Decode pools (disaggregated serving) hold no cache across calls, so `cache_aware` and `kv` send
a hand-off to the decode rank with the fewest active tokens; `affinity` keeps a session on one
decode rank; `round_robin` takes them in turn.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Protocol

from agentload.sim.cache.protocol import Keys, KvCache
from agentload.sim.engine.config import Routing

CACHE_THRESHOLD = 0.3
"""SGLang router `--cache-threshold` default (`sglang_router.router_args.RouterArgs`): the
matched share of a prompt above which the rank holding it is chosen."""
BALANCE_ABS_THRESHOLD = 64
"""SGLang router `--balance-abs-threshold` default: a load gap (requests) above which..."""
BALANCE_REL_THRESHOLD = 1.5
"""... together with a max/min load ratio above this (`--balance-rel-threshold` default), the
least loaded rank is chosen instead."""
KV_OVERLAP_WEIGHT = 1.0
"""Dynamo's `--kv-overlap-score-weight` default: prefill blocks against active blocks."""
VISITED = 4
"""Ranks a session's calls went to that the router checks, most recent first."""
OTHERS = 2
"""Least loaded ranks the session has not been to that the router checks."""


class Routable(Protocol):
    """What a router reads of a rank."""

    cache: KvCache
    sessions: int
    active: int
    active_tokens: int
    pending_prefill: int


class Router:
    """Routes the calls of one pool (indexes into its ranks)."""

    def __init__(
        self,
        ranks: Sequence[Routable],
        policy: Routing,
        *,
        decode: bool = False,
        prefill_only: bool = False,
    ):
        self.ranks = ranks
        self.policy = policy
        self.decode = decode
        """A decode pool: no cache across calls (hand-offs go to the least loaded)."""
        self.prefill_only = prefill_only
        """A prefill pool: no decoding load (Dynamo's prefill-node cost)."""
        self._turn = 0
        self._assigned: dict[Hashable, int] = {}
        self._visited: dict[Hashable, list[int]] = {}
        self.overlap: int | None = None
        """The cached prefix the last route found on the rank it chose (None: not looked
        up)."""

    def route(
        self, session: Hashable, keys: Keys, tokens: Sequence[int], prompt: int, output: int = 0
    ) -> int:
        """The rank for a call of `session` whose prompt is `keys`/`tokens` (`prompt`
        tokens in all) and which generates `output` tokens."""
        self.overlap = None
        policy = self.policy
        if policy == "round_robin":
            index = self._turn % len(self.ranks)
            self._turn += 1
            return index
        if policy == "affinity":
            return self._affine(session)
        if self.decode:
            loads = [rank.active_tokens for rank in self.ranks]
            return loads.index(min(loads))
        if len(self.ranks) == 1:
            return 0
        if policy == "cache_aware":
            index = self._cache_aware(session, keys, tokens, prompt)
        else:
            index = self._kv(session, keys, tokens, prompt, output)
        self._visit(session, index)
        return index

    def forget(self, session: Hashable) -> list[int]:
        """A session is over: its slot and history go; returns the ranks it was routed to
        (as far as the router remembers)."""
        seen = self._visited.pop(session, [])
        index = self._assigned.pop(session, None)
        if index is None:
            return seen
        self.ranks[index].sessions -= 1
        return [index, *(i for i in seen if i != index)]

    # --- policies -----------------------------------------------------------------------------

    def _affine(self, session: Hashable) -> int:
        assigned = self._assigned.get(session)
        if assigned is not None:
            return assigned
        counts = [rank.sessions for rank in self.ranks]
        index = counts.index(min(counts))
        self._assigned[session] = index
        self.ranks[index].sessions += 1
        return index

    def _candidates(self, session: Hashable, loads: Sequence[int]) -> list[int]:
        """The ranks whose cache is looked up: where the session went, and the least loaded
        others."""
        seen = self._visited.get(session, [])
        pick = list(seen)
        want = len(seen) + OTHERS
        for index in sorted(range(len(loads)), key=loads.__getitem__):
            if index not in seen:
                pick.append(index)
                if len(pick) == want:
                    break
        return pick

    def _overlap(self, index: int, session: Hashable, keys: Keys, tokens: Sequence[int]) -> int:
        return self.ranks[index].cache.match(session, keys, tokens).stored_end

    def _cache_aware(
        self, session: Hashable, keys: Keys, tokens: Sequence[int], prompt: int
    ) -> int:
        loads = [rank.active for rank in self.ranks]
        low, high = min(loads), max(loads)
        if high - low > BALANCE_ABS_THRESHOLD and high > low * BALANCE_REL_THRESHOLD:
            return loads.index(low)
        best, best_key, best_match = -1, (0.0, 0, 0), 0
        for index in self._candidates(session, loads):
            matched = self._overlap(index, session, keys, tokens)
            key = (matched / prompt, -loads[index], -index)
            if best < 0 or key > best_key:
                best, best_key, best_match = index, key, matched
        if best_key[0] > CACHE_THRESHOLD:
            self.overlap = best_match
            return best
        sizes = [
            (r.cache.stored_tokens + r.pending_prefill, loads[i], i)
            for i, r in enumerate(self.ranks)
        ]
        return min(sizes)[2]

    def _kv(
        self, session: Hashable, keys: Keys, tokens: Sequence[int], prompt: int, output: int
    ) -> int:
        ranks = self.ranks
        pending = [rank.pending_prefill for rank in ranks]
        block = ranks[0].cache.block
        prefill_only = self.prefill_only
        best, best_key, best_match = -1, (0.0, 0, 0), 0
        for index in self._candidates(session, pending):
            matched = self._overlap(index, session, keys, tokens)
            prefill = (pending[index] + prompt - matched) / block
            if prefill_only:
                decode = float(int(prefill))
            else:
                decode = (ranks[index].active_tokens + prompt + output) / block
            key = (KV_OVERLAP_WEIGHT * prefill + decode, pending[index], index)
            if best < 0 or key < best_key:
                best, best_key, best_match = index, key, matched
        self.overlap = best_match
        return best

    def _visit(self, session: Hashable, index: int) -> None:
        seen = self._visited.get(session)
        if seen is None:
            self._visited[session] = [index]
            return
        if seen and seen[0] == index:
            return
        if index in seen:
            seen.remove(index)
        seen.insert(0, index)
        del seen[VISITED:]
