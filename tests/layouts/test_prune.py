"""Step 2 of the layout search and the dominance after the estimate, pure: what is ruled out
and why, one example a reason, and options the estimate says add nothing."""

from __future__ import annotations

from agentload.layouts.candidates import enumerate_candidates, pool_layouts
from agentload.layouts.prune import MemoryFit, MemoryOf, dominance, examples, prune, prune_counts
from agentload.results.layouts import Candidate, Estimated, TierEstimate
from agentload.sim.setup.build import rank_memory
from agentload.sim.setup.serving import parse_layout
from agentload.sim.specs.hardware import gpu_spec
from agentload.sim.specs.model import model_shape
from agentload.sim.specs.parallel import Layout
from agentload.units import BYTES_PER_GB

DEEPSEEK = "sgl-project/DeepSeek-V4-Pro-FP8"


def _memory_on(system: str) -> MemoryOf:
    model, gpu = model_shape(DEEPSEEK), gpu_spec(system)

    def memory(layout: Layout, drafts: bool) -> MemoryFit:
        m = rank_memory(model, gpu, layout)
        return MemoryFit(
            weights_per_gpu_gb=m.weights_per_gpu_bytes / BYTES_PER_GB,
            gpu_memory_gb=gpu.memory_bytes / BYTES_PER_GB,
            kv_capacity_tokens=max(0, m.kv_capacity_tokens),
        )

    return memory


_memory_on_gb300 = _memory_on("gb300")


def _layouts(budget: int) -> tuple[Layout, ...]:
    return pool_layouts(
        catalog_tp=[1, 2, 4, 8], moe=True, scale_up_gpus=8, ep_data_sizes=[8, 16], budget=budget
    )


def test_a_copy_spans_hgx_nodes_only_when_none_fits_one_node() -> None:
    h200 = enumerate_candidates(16, _layouts(16))
    kept, pruned = prune(h200, _memory_on("h200_sxm"), 60_000, domain=8)
    assert {c.layout for c in kept} == {
        "1A:tp16,ep16",
        "1A:tp8,pp2,ep8",
        "1A:tp2,dp8,ep16",
        "1A:tp4,dp4,ep16",
        "1A:tp8,dp2,ep16",
    }  # tp1,dp16,ep16 keeps the dense weights whole on each of 141 GB: no room for KV
    assert prune_counts(pruned) == {"weights do not fit": len(pruned)}
    b300 = enumerate_candidates(16, _layouts(16))
    kept, pruned = prune(b300, _memory_on("b300_sxm"), 60_000, domain=8)
    assert all(not any(p.layout.spans(8) for p in parse_layout(c.layout)) for c in kept)
    spanning = [p for p in pruned if p.reason == "model copy spans domains"]
    assert spanning and all("crosses the scale-up domain of 8 GPUs" in p.detail for p in spanning)


def test_attention_tp_inside_dp_ranks_is_tried_only_where_dp_alone_does_not_fit() -> None:
    split = enumerate_candidates(8, [Layout(tp=1, dp=8, ep=8), Layout(tp=2, dp=4, ep=8)])
    kept, pruned = prune(split, _memory_on("b300_sxm"), 60_000, domain=8)
    assert {c.layout for c in kept} == {"1A:tp1,dp8,ep8"}
    assert {p.reason for p in pruned} == {"attention TP where DP alone fits"}
    assert "tp1,dp8,ep8 holds the weights and a session" in pruned[0].detail


def test_the_example_of_a_reason_is_the_nearest_miss() -> None:
    every = enumerate_candidates(16, _layouts(16))
    _, pruned = prune(every, _memory_on("h100_sxm"), 60_000, domain=8)
    (example,) = examples(pruned)
    assert example.reason == "weights do not fit"
    assert example.detail.startswith("tp16,ep16 aggregated: 99 GB of weights per GPU")


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
