"""Prompt building: client CPU per call to make a long prompt's chat messages.

    .venv/bin/python bench/prompts.py [--workload synthetic:agentic-coding] [--repeat 20]

Takes the workload's longest session and times `TextMaker.messages` (every synthetic segment of
the prompt laid out, and its word line hashed, in one numpy batch) at a few call depths, against
the same segments' text made one segment at a time (`segment_text`: a batch of one per segment)
in the same run. Prints ms per call, the ratio, and how many such prompts one
core makes per second: with thousands of agents at long contexts this, not the stream, is most
of the client's work per call.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from agentload.engines.tokenizer import default_tokenizer_path
from agentload.workload.load import DEFAULT_WORKLOAD, load_workload
from agentload.workload.model import prompt_tokens
from agentload.workload.text import TextMaker
from agentload.workload.tokenizers import FileTokenizer

INSTANCE = "bench.a0.s0"
ROUNDS = 3
"""Each timing is the best of this many rounds (the machine may be shared)."""


def best_ms(work: Any, repeat: int) -> float:
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(repeat):
            work()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best * 1e3


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default=DEFAULT_WORKLOAD)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args(argv)
    maker = TextMaker(FileTokenizer(default_tokenizer_path()), run_salt="bench")
    session = max(load_workload(args.workload).sessions, key=lambda s: len(s.turns))
    prompts = list(session.prompts())
    depths = sorted({min(10, len(prompts) - 1), len(prompts) // 4, len(prompts) - 1})
    print(f"session {session.id}: {len(prompts)} calls")
    for depth in depths:
        prompt = prompts[depth]
        maker.messages(prompt, INSTANCE)  # warm the corpus caches
        batched = best_ms(lambda p=prompt: maker.messages(p, INSTANCE), args.repeat)
        single = best_ms(lambda p=prompt: [maker.segment_text(s, INSTANCE) for s in p], args.repeat)
        print(
            f"call {depth:>3}: {len(prompt):>4} segments, {prompt_tokens(prompt):>7,} tokens: "
            f"messages {batched:6.2f} ms (one segment at a time {single:6.2f} ms, "
            f"x{single / batched:.2f}); {1e3 / batched:,.0f} such prompts/s on one core"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
