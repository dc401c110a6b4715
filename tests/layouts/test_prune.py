"""Step 2 of the layout search and the dominance after the estimate, pure: what is ruled out
and why, one example a reason, and options the estimate says add nothing."""

from __future__ import annotations

from agentload.layouts.candidates import enumerate_candidates
from agentload.layouts.prune import MemoryFit, dominance, examples, prune, prune_counts
from agentload.results.layouts import Candidate, Estimated, TierEstimate
from agentload.sim.setup.build import rank_memory
from agentload.sim.specs.hardware import gpu_spec
from agentload.sim.specs.model import model_shape
from agentload.sim.specs.parallel import Layout
from agentload.units import BYTES_PER_GB

DEEPSEEK = "sgl-project/DeepSeek-V4-Pro-FP8"


def _memory_on_gb300(layout: Layout, drafts: bool) -> MemoryFit:
    model, gpu = model_shape(DEEPSEEK), gpu_spec("gb300")
    m = rank_memory(model, gpu, layout)
    return MemoryFit(
        weights_per_gpu_gb=m.weights_per_gpu_bytes / BYTES_PER_GB,
        gpu_memory_gb=gpu.memory_bytes / BYTES_PER_GB,
        kv_capacity_tokens=max(0, m.kv_capacity_tokens),
    )


def test_pruning_says_which_pool_and_why() -> None:
    candidates = enumerate_candidates(16, [Layout(tp=4, ep=4), Layout(tp=8, ep=8)])
    kept, pruned = prune(candidates, _memory_on_gb300, peak_context_tokens=60_000)
    assert [c.layout for c in kept] == ["2A:tp8,ep8", "1P:tp8,ep8+1D:tp8,ep8"]
    assert prune_counts(pruned) == {"weights do not fit": len(candidates) - 2}
    assert all("tp4,ep4" in p.detail and "GB of weights per GPU" in p.detail for p in pruned)
    _, too_small = prune(kept, _memory_on_gb300, peak_context_tokens=1e9)
    assert {p.reason for p in too_small} == {"KV too small for one session"}
    assert "the largest call's 1,000,000,000" in too_small[0].detail
    both = (*pruned, *too_small)
    assert [p.reason for p in examples(both)] == [
        "weights do not fit",
        "KV too small for one session",
    ]


def _estimated(candidate: Candidate, score: float) -> Estimated:
    return Estimated(
        candidate=candidate,
        estimates=(TierEstimate(tier="t20", agents=score, limit="output_speed", pool="x"),),
        score=score,
    )


def test_an_option_the_estimate_says_adds_nothing_is_marked_dominated() -> None:
    plain = _estimated(Candidate(layout="2A:tp8,ep8", gpus=16), 1000)
    host = _estimated(Candidate(layout="2A:tp8,ep8", gpus=16, host_kv=True), 1005)
    mtp = _estimated(Candidate(layout="2A:tp8,ep8", gpus=16, speculative="mtp"), 1500)
    marked = {e.candidate.name: e.dominated_by for e in dominance([plain, host, mtp])}
    assert marked == {
        "2A:tp8,ep8": None,
        "2A:tp8,ep8 host-kv": "2A:tp8,ep8",  # within 1%: no better
        "2A:tp8,ep8 mtp": None,
    }
