"""A rank's prefix cache: a radix tree over prompt segments, LRU-evicted block by block.

Model (what an SGLang radix cache or vLLM's prefix-caching block manager does, at the
granularity of the workload's segments rather than of tokens):

- A node is one segment at one position of a prompt chain; its children are the segments that
  followed it in some prompt. A node holds a prefix of its segment's tokens in HBM (`hbm`) and,
  with a host tier, the next ones in host memory (`host`). Invariants: a node with tokens in HBM
  has every ancestor wholly in HBM; a node with tokens stored anywhere has every ancestor wholly
  stored. So a prompt's cached prefix is a single run from its start: the HBM part, then the
  host part.
- Hits are whole blocks (`block_tokens`): a prompt reuses the stored run of its key chain,
  rounded down to a block boundary and never the whole prompt (its last token is always
  computed, as engines do).
- Memory is counted in tokens: the tree's HBM tokens plus what running requests reserve outside
  it (prompt tokens still to compute, output tokens). Capacity is a token count.
- Eviction frees HBM from the tail of the least recently used leaf, whole blocks at a time,
  never from a node a running request pins (a request pins the deepest node of its cached
  prefix, which protects every ancestor: only leaves are evicted). With a host tier, evicted
  blocks move to host memory (itself LRU-evicted the same way); without one they are dropped.
- An aborted request gives back what it reserved and its pin; an unfinished prefill leaves
  nothing in the tree, a decoding request's prompt stays cached as a finished one's does.
- A leaf's recency is the time its last request finished; an inner node inherits the latest
  recency of its evicted children, so the LRU order over leaves is the LRU order over blocks.

Cost per request is independent of the prompt's length: a session's last chain and node path
are remembered, a new prompt's common prefix with it is found by slice comparisons (in C) and
a binary search for the still-stored part, and only the segments past it are walked.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable, Sequence
from typing import cast

from agentload.sim.cache.protocol import Admission, Keys, Match, common_prefix

MEMO_SESSIONS = 1024
"""Sessions whose last chain a rank remembers (least recently used forgotten first; a
forgotten session's next lookup walks from the root, with the same answer)."""
HEAP_SLACK = 2
"""An LRU heap is compacted when it holds more than this many entries per live node."""
HEAP_FLOOR = 4096


class _Node:
    """One segment at one position of a prompt chain (module docstring)."""

    __slots__ = (
        "alive",
        "children",
        "end",
        "hbm",
        "hbm_kids",
        "host",
        "key",
        "parent",
        "pins",
        "time",
        "tokens",
    )

    def __init__(self, key: Hashable, parent: _Node | None, tokens: int, end: int) -> None:
        self.key = key
        self.parent = parent
        self.children: dict[Hashable, _Node] = {}
        self.tokens = tokens
        self.end = end
        self.hbm = 0
        self.host = 0
        self.hbm_kids = 0
        self.pins = 0
        self.time = 0.0
        self.alive = True


def _stored_run(path: Sequence[_Node], n: int) -> int:
    """How many leading nodes of `path[:n]` are alive and wholly stored (monotone, so a binary
    search: an ancestor of a stored node is wholly stored)."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        node = path[mid - 1]
        if node.alive and node.hbm + node.host == node.tokens:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _hbm_run(path: Sequence[_Node]) -> int:
    """How many leading nodes of `path` are wholly in HBM (monotone, binary search)."""
    lo, hi = 0, len(path)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        node = path[mid - 1]
        if node.hbm == node.tokens:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _compact(heap: list[tuple[float, int, _Node]], *, hbm: bool) -> None:
    """Keep only a heap's live entries (each node's latest), in place (callers hold it)."""
    latest: dict[int, tuple[float, int, _Node]] = {}
    for entry in heap:
        time, _, node = entry
        if not node.alive or node.pins or node.time != time:
            continue
        if hbm and (not node.hbm or node.hbm_kids):
            continue
        if not hbm and (not node.host or node.children):
            continue
        latest[id(node)] = entry
    heap[:] = list(latest.values())
    heapq.heapify(heap)


class RadixCache:
    """One rank's KV memory: the prefix tree, reservations of running requests, host tier.

    Times passed in are virtual seconds; they order the LRU. All sizes are tokens.
    """

    def __init__(
        self, capacity_tokens: int, block_tokens: int, host_capacity_tokens: int = 0
    ) -> None:
        if capacity_tokens < 1 or block_tokens < 1 or host_capacity_tokens < 0:
            raise ValueError("cache sizes must be positive (host capacity may be 0)")
        if 0 < host_capacity_tokens < block_tokens:
            raise ValueError("a host tier must hold at least one block")
        self.capacity = capacity_tokens
        self.block = block_tokens
        self.host_capacity = host_capacity_tokens
        self.root = _Node(None, None, 0, 0)
        self.stored_tokens = 0
        """HBM tokens held by tree nodes."""
        self.reserved_tokens = 0
        """HBM tokens reserved by running requests outside the tree."""
        self.host_tokens = 0
        self.evicted_tokens = 0
        """HBM tokens evicted (moved to host or dropped), cumulative."""
        self.dropped_host_tokens = 0
        """Host tokens evicted from the host tier, cumulative."""
        self.loaded_tokens = 0
        """Host tokens loaded back to HBM on a hit, cumulative."""
        self._hbm_heap: list[tuple[float, int, _Node]] = []
        self._host_heap: list[tuple[float, int, _Node]] = []
        self._seq = itertools.count()
        self._memo: dict[Hashable, tuple[Keys, list[_Node]]] = {}
        self.nodes = 0
        """Live nodes in the tree (root excluded)."""

    # --- lookup ---------------------------------------------------------------------------

    def match(self, session: Hashable, keys: Keys, tokens: Sequence[int]) -> Match:
        """The stored prefix of a prompt (read-only). `session` selects the remembered chain
        used as a shortcut; the answer is the same as a walk from the root."""
        memo = self._memo.get(session)
        node = self.root
        start = 0
        path: list[_Node] = []
        if memo is not None:
            last_keys, last_path = memo
            common = common_prefix(last_keys, keys)
            start = _stored_run(last_path, common)
            if start:
                path = last_path[:start]
                node = path[-1]
        n = len(keys)
        i = start
        while i < n:
            child = node.children.get(keys[i])
            if child is None:
                break
            if child.tokens != tokens[i]:
                raise ValueError(
                    f"segment key {keys[i]!r} came with {tokens[i]} tokens, "
                    f"earlier with {child.tokens}"
                )
            path.append(child)
            if child.hbm + child.host < child.tokens:
                break
            node = child
            i += 1
        if not path:
            return Match(0, 0, path)
        last = path[-1]
        stored_end = last.end - last.tokens + last.hbm + last.host
        full = _hbm_run(path)
        if full == len(path):
            hbm_end = stored_end
        else:
            partial = path[full]
            hbm_end = partial.end - partial.tokens + partial.hbm
        return Match(hbm_end, stored_end, path)

    # --- admission, insertion, release ----------------------------------------------------

    def admit(
        self, match: Match, prompt_tokens: int, output_tokens: int, now: float
    ) -> Admission | None:
        """Reserve HBM for a request (its uncached prompt, its output, and the host blocks it
        loads back), evicting LRU blocks as needed; None (nothing reserved) when it does not
        fit beside what running requests pin."""
        block = self.block
        hit = min(match.stored_end, prompt_tokens - 1) // block * block
        loaded = match.stored_end - match.hbm_end
        reserved = prompt_tokens - hit + output_tokens
        need = loaded + reserved
        if need > self.capacity - self.reserved_tokens:
            return None
        path = cast("Sequence[_Node]", match.found)
        anchor = path[-1] if path else self.root
        hbm_anchor = None
        if loaded:
            full = _hbm_run(path)
            if full < len(path) and path[full].hbm:
                hbm_anchor = path[full]
            elif full:
                hbm_anchor = path[full - 1]
        self._pin(anchor)
        if hbm_anchor is not None:
            self._pin(hbm_anchor)
        free = self.capacity - self.stored_tokens - self.reserved_tokens
        if free < need:
            free += self._evict(need - free)
        if hbm_anchor is not None:
            self._unpin(hbm_anchor, now)
        if free < need:
            self._unpin(anchor, now)
            return None
        if loaded:
            self._load(path)
        self.reserved_tokens += reserved
        anchor.time = now
        return Admission(
            hit, max(0, hit - match.hbm_end), loaded, prompt_tokens - hit, output_tokens, path
        )

    def insert(
        self,
        session: Hashable,
        keys: Keys,
        tokens: Sequence[int],
        admission: Admission,
        now: float,
    ) -> Admission:
        """A request's prefill is done: its whole prompt becomes stored in HBM (shareable),
        its reservation for the prompt is released, the pin moves to the prompt's last node;
        returns the admission holding that node (release it when the request finishes)."""
        path = cast("Sequence[_Node]", admission.held)
        node = self.root
        added = 0
        if path:
            node = path[-1]
            if node.hbm < node.tokens:
                added += node.tokens - node.hbm
                node.hbm = node.tokens
        made: list[_Node] = []
        for i in range(len(path), len(keys)):
            key = keys[i]
            child = node.children.get(key)
            if child is None:
                child = _Node(key, node, tokens[i], node.end + tokens[i])
                child.hbm = child.tokens
                node.children[key] = child
                node.hbm_kids += 1
                added += child.tokens
                self.nodes += 1
            elif child.hbm < child.tokens:
                if child.hbm == 0:
                    node.hbm_kids += 1
                added += child.tokens - child.hbm
                self.host_tokens -= child.host
                child.host = 0
                child.hbm = child.tokens
            made.append(child)
            node = child
        self.stored_tokens += added
        self.reserved_tokens -= admission.prompt_reserved
        memo = self._memo
        memo.pop(session, None)
        memo[session] = (keys, [*path, *made])
        if len(memo) > MEMO_SESSIONS:
            del memo[next(iter(memo))]
        self._pin(node)
        self._unpin(path[-1] if path else self.root, now)
        node.time = now
        return admission._replace(held=node)

    def release(self, admission: Admission, now: float) -> None:
        """A request finished: its output reservation is freed, its prompt becomes evictable
        (recency `now`)."""
        leaf = cast("_Node", admission.held)
        self.reserved_tokens -= admission.output_reserved
        leaf.time = now
        self._unpin(leaf, now)

    def cancel(self, admission: Admission, now: float) -> None:
        """A request was aborted before its prefill finished: its whole reservation is freed
        and its pin dropped. Nothing of its prompt enters the tree (host blocks it loaded back
        stay in HBM, cached)."""
        path = cast("Sequence[_Node]", admission.held)
        self.reserved_tokens -= admission.prompt_reserved + admission.output_reserved
        self._unpin(path[-1] if path else self.root, now)

    def forget(self, session: Hashable) -> None:
        """Drop a session's remembered chain (a lookup shortcut only; the tree is kept)."""
        self._memo.pop(session, None)

    def reserve(self, tokens: int) -> int:
        """Reserve up to `tokens` more HBM tokens for running requests (the blocks a decoding
        sequence fills as it goes, vLLM's way: `agentload.sim.engine.vllm`), evicting LRU
        blocks; returns how many it reserved (fewer when everything left is pinned)."""
        free = self.capacity - self.stored_tokens - self.reserved_tokens
        if free < tokens:
            free += self._evict(tokens - free)
        got = min(tokens, free)
        self.reserved_tokens += got
        return got

    def unreserve(self, tokens: int) -> None:
        """Give back `tokens` that `reserve` took (a request finished or was preempted)."""
        self.reserved_tokens -= tokens

    # --- internals ------------------------------------------------------------------------

    def _pin(self, node: _Node) -> None:
        node.pins += 1

    def _unpin(self, node: _Node, now: float) -> None:
        node.pins -= 1
        if node.pins == 0 and node is not self.root:
            self._offer(node)

    def _offer(self, node: _Node) -> None:
        """Put a node on each LRU heap it now qualifies for (stale entries are skipped when
        popped: an entry is live while the node is an unpinned leaf with that recency)."""
        if node.pins or node is self.root:
            return
        if node.hbm and not node.hbm_kids:
            heap = self._hbm_heap
            heapq.heappush(heap, (node.time, next(self._seq), node))
            if len(heap) > HEAP_SLACK * self.nodes + HEAP_FLOOR:
                _compact(heap, hbm=True)
        if node.host and not node.children:
            heap = self._host_heap
            heapq.heappush(heap, (node.time, next(self._seq), node))
            if len(heap) > HEAP_SLACK * self.nodes + HEAP_FLOOR:
                _compact(heap, hbm=False)

    def _load(self, path: Sequence[_Node]) -> None:
        """Move the host part of a matched path back to HBM (shallow to deep)."""
        moved = 0
        for node in path[_hbm_run(path) :]:
            if node.host:
                if node.hbm == 0:
                    node.parent.hbm_kids += 1  # type: ignore[union-attr]
                node.hbm += node.host
                moved += node.host
                node.host = 0
        self.host_tokens -= moved
        self.stored_tokens += moved
        self.loaded_tokens += moved

    def _evict(self, need: int) -> int:
        """Free at least `need` HBM tokens from LRU leaves (whole blocks, tail first); returns
        what was freed (less when everything left is pinned)."""
        freed = 0
        heap = self._hbm_heap
        block = self.block
        host_tier = self.host_capacity > 0
        while freed < need and heap:
            time, _, node = heapq.heappop(heap)
            if not node.alive or node.pins or not node.hbm or node.hbm_kids or node.time != time:
                continue
            start = node.end - node.tokens
            top = start + node.hbm
            want = need - freed
            if host_tier and want > self.host_capacity:
                want = self.host_capacity
            cut = max(start, (top - want) // block * block)
            gone = top - cut
            if host_tier:
                room = self.host_capacity - self.host_tokens
                if room < gone:
                    self._evict_host(gone - room)
                    room = self.host_capacity - self.host_tokens
                if room >= gone:
                    node.host += gone
                    self.host_tokens += gone
                else:
                    self._drop_host_below(node)
            node.hbm -= gone
            freed += gone
            self.evicted_tokens += gone
            if node.hbm:
                heapq.heappush(heap, (time, next(self._seq), node))
                if node.host and not node.children:
                    heapq.heappush(self._host_heap, (node.time, next(self._seq), node))
                continue
            parent = node.parent
            assert parent is not None
            parent.hbm_kids -= 1
            if parent.time < node.time:
                parent.time = node.time
            if node.host:
                self._offer(node)
            else:
                self._remove(node)
            if not parent.hbm_kids:
                self._offer(parent)
        self.stored_tokens -= freed
        return freed

    def _evict_host(self, need: int) -> None:
        """Drop at least `need` host tokens from LRU host leaves (whole blocks, tail first)."""
        freed = 0
        heap = self._host_heap
        block = self.block
        while freed < need and heap:
            time, _, node = heapq.heappop(heap)
            if not node.alive or node.pins or not node.host or node.children or node.time != time:
                continue
            base = node.end - node.tokens + node.hbm
            top = base + node.host
            cut = max(base, (top - (need - freed)) // block * block)
            gone = top - cut
            node.host -= gone
            freed += gone
            if node.host:
                heapq.heappush(heap, (time, next(self._seq), node))
            elif node.hbm == 0:
                self._remove(node)
        self.host_tokens -= freed
        self.dropped_host_tokens += freed

    def _drop_host_below(self, node: _Node) -> None:
        """Drop a node's host part and every (host-only) descendant: used when the host tier
        cannot take the node's evicted blocks (it is full of blocks a request is loading)."""
        dropped = node.host
        node.host = 0
        stack = list(node.children.values())
        node.children.clear()
        while stack:
            child = stack.pop()
            dropped += child.host
            child.alive = False
            self.nodes -= 1
            stack.extend(child.children.values())
        self.host_tokens -= dropped
        self.dropped_host_tokens += dropped

    def _remove(self, node: _Node) -> None:
        """Detach a node that stores nothing (and so has no children)."""
        parent = node.parent
        assert parent is not None and not node.children
        del parent.children[node.key]
        node.alive = False
        self.nodes -= 1
        if parent.time < node.time:
            parent.time = node.time
            self._offer(parent)
        elif not parent.children:
            self._offer(parent)

    # --- checks ---------------------------------------------------------------------------

    def check(self) -> None:
        """Verify the invariants and the token accounting (for tests; walks the whole tree)."""
        hbm = host = 0
        stack = [self.root]
        while stack:
            node = stack.pop()
            hbm += node.hbm
            host += node.host
            assert 0 <= node.hbm + node.host <= node.tokens, "node stores too much"
            kids = 0
            for child in node.children.values():
                assert child.alive and child.parent is node
                assert child.hbm + child.host > 0 or child.pins, "an empty node in the tree"
                if child.hbm:
                    kids += 1
                    assert node.hbm == node.tokens, "HBM below a node not wholly in HBM"
                assert node.hbm + node.host == node.tokens, "stored below a partial node"
                stack.append(child)
            assert kids == node.hbm_kids, "hbm_kids out of date"
        assert hbm == self.stored_tokens, f"tree tokens {self.stored_tokens} != {hbm}"
        assert host == self.host_tokens, f"host tokens {self.host_tokens} != {host}"
        assert self.stored_tokens + self.reserved_tokens <= self.capacity, "HBM over capacity"
        assert self.host_tokens <= self.host_capacity, "host over capacity"
