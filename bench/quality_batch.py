"""What llama.cpp does to greedy outputs when other requests share the batch.

    .venv/bin/python bench/quality_batch.py [--model generated|gemma3-270m] [--prompts 12]
        [--tokens 64] [--together 2,4,8] [--slots 4] [--windows N]

One llama.cpp server (`--slots` slots, one thread per `engine_threads()`). `--prompts` short
story openings are completed greedily (temperature 0, a fixed seed, `--tokens` tokens, the 5
most likely alternatives at each position) through the completions API: each alone (the
reference), each alone again, then all of them sent K at a time for each K of `--together`.
Each reply is compared with its reference (`agentload.quality.compare`): exact or not, the
first differing token, whether that was a flip to the reference's runner-up (and how close the
two were alone), and the reference tokens' log-probability drift before it.

With `--windows N`, each K of `--together` is repeated N times and each repetition judged as a
probe's window is (`agentload.quality.gate`, the default thresholds, against the repeat alone):
on an unchanged server every failing gate is a false failure, counted with its Wilson interval.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from agentload.client.endpoint import Endpoint  # noqa: E402
from agentload.engines.llamacpp import LocalEngine  # noqa: E402
from agentload.engines.process import engine_threads  # noqa: E402
from agentload.quality.binomial import wilson  # noqa: E402
from agentload.quality.call import CheckClient, CheckReply  # noqa: E402
from agentload.quality.checked import check_record  # noqa: E402
from agentload.quality.compare import Comparison, compare  # noqa: E402
from agentload.quality.figures import quality_figures  # noqa: E402
from agentload.quality.gate import judge_quality  # noqa: E402
from agentload.quality.reference import CheckConversation, Reference  # noqa: E402
from agentload.quality.tokens import ReplyTokens  # noqa: E402
from agentload.results.quality import (  # noqa: E402
    CheckSettings,
    QualityFigures,
    QualityThresholds,
)

WORDS = [
    "ice",
    "fire",
    "sand",
    "glass",
    "stone",
    "rain",
    "gold",
    "mist",
    "iron",
    "salt",
    "wind",
    "snow",
]
MARGIN = QualityThresholds().tie_margin_nats


def conversations(count: int, tokens: int) -> list[CheckConversation]:
    return [
        CheckConversation(
            id=f"story-{i}",
            kind="workload",
            api="completions",
            prompt=f"Story {i}: Once upon a time in a land of {WORDS[i % len(WORDS)]},",
            max_tokens=tokens,
        )
        for i in range(count)
    ]


def margin(reference: ReplyTokens, at: int | None) -> float | None:
    """How close the reference's first and second choices were at `at`, nats."""
    if at is None or reference.top is None or at >= len(reference.top):
        return None
    ranked = sorted(reference.top[at].values(), reverse=True)
    return ranked[0] - ranked[1] if len(ranked) > 1 else None


def line(name: str, references: list[ReplyTokens], replies: list[CheckReply]) -> str:
    seen: list[tuple[Comparison, float | None]] = []
    for reference, reply in zip(references, replies, strict=True):
        assert reply.reply is not None, reply.error
        found = compare(reference, reply.reply, tie_margin_nats=MARGIN)
        seen.append((found, margin(reference, found.first_diff)))
    differ = [c for c, _ in seen if not c.exact]
    ties = sum(1 for c in differ if c.near_tie)
    firsts = sorted(c.first_diff for c in differ if c.first_diff is not None)
    margins = [m for c, m in seen if m is not None and not c.exact]
    drifts = [c.logprob_drift_nats for c, _ in seen if c.logprob_drift_nats is not None]
    span = f"tokens {firsts[0]}-{firsts[-1]}" if firsts else "—"
    gaps = f"{min(margins):.3f}-{max(margins):.3f}" if margins else "—"
    return (
        f"{name:<14} {len(differ):>2} of {len(seen)} differ ({ties} to a runner-up within "
        f"{MARGIN:g} nats), first at {span}, alone margin there {gaps} nats; drift before it "
        f"{min(drifts):.2g}-{max(drifts):.2g} nats per token"
    )


def judged(
    asked: list[CheckConversation],
    references: list[ReplyTokens],
    replies: list[CheckReply],
    alone: QualityFigures,
) -> QualityFigures:
    """One repetition's replies as a probe's window: its figures and the gate's verdict."""
    records = [
        check_record(
            f"check-{i}",
            Reference(conversation=c, reply=r),
            reply,
            agents=0,
            tie_margin_nats=MARGIN,
        )
        for i, (c, r, reply) in enumerate(zip(asked, references, replies, strict=True))
    ]
    figures = quality_figures(records)
    gate = judge_quality(figures, alone, QualityThresholds())
    return figures.model_copy(update={"gate": gate})


async def measure(engine: LocalEngine, args: argparse.Namespace) -> None:
    endpoint = Endpoint(base_url=engine.url, model=engine.model)
    asked = conversations(args.prompts, args.tokens)
    async with CheckClient(endpoint, CheckSettings()) as client:
        first = [await client.send(c) for c in asked]
        references = [r.reply for r in first if r.reply is not None]
        assert len(references) == len(asked), [r.error for r in first]
        again = [await client.send(c) for c in asked]
        print(line("alone, again", references, again))
        alone = quality_figures(
            [
                check_record(
                    f"alone-{i}",
                    Reference(conversation=c, reply=r),
                    a,
                    agents=0,
                    tie_margin_nats=MARGIN,
                )
                for i, (c, r, a) in enumerate(zip(asked, references, again, strict=True))
            ]
        )
        for k in args.together:
            outcomes = []
            for _ in range(max(1, args.windows)):
                replies: list[CheckReply] = []
                for start in range(0, len(asked), k):
                    batch = asked[start : start + k]
                    replies += await asyncio.gather(*(client.send(c) for c in batch))
                outcomes.append(judged(asked, references, replies, alone))
            print(line(f"{k} at once", references, replies))
            if args.windows:
                print(windows_line(outcomes))


def windows_line(windows: list[QualityFigures]) -> str:
    """The gate over the repetitions, and their check calls summed."""
    failed = sum(1 for w in windows if w.gate is not None and w.gate.outcome == "fail")
    low, high = wilson(failed, len(windows))
    return (
        f"{'':<14} gate over {len(windows)} repetitions: {failed} failed ({low:.0%}-{high:.0%} "
        f"at 95%); their {sum(w.checks for w in windows)} calls: "
        f"{sum(w.exact for w in windows)} exact, {sum(w.near_ties for w in windows)} flipped a "
        f"near tie, {sum(w.diverged for w in windows)} diverged"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="generated")
    parser.add_argument("--prompts", type=int, default=12)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument(
        "--together", type=lambda s: [int(x) for x in s.split(",")], default=[2, 4, 8]
    )
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--windows", type=int, default=0, help="judge each K this many times")
    args = parser.parse_args()
    with LocalEngine.start(
        args.model, parallel=args.slots, ctx_size=args.slots * 4096, threads=engine_threads()
    ) as engine:
        print(f"{engine.model} on llama.cpp, {args.slots} slots, {engine.threads} thread(s)")
        asyncio.run(measure(engine, args))


if __name__ == "__main__":
    main()
