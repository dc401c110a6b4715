"""Issue 30's engine mechanisms against public data: the tables docs/simulation.md quotes.

    PYTHONPATH=src .venv/bin/python bench/sim_mechanisms.py [--lockstep-agents 150,300,460]

Prints, as Markdown, for DeepSeek V4 Pro on SGLang's operator data (aiconfigurator-core):

1. **Wide EP** (`agentload.sim.steps.ep`): per-GPU decode output within the 20 tokens/s step
   bound (MTP, 27.5K context, KV included) and the full 8K prefill chunk rate, by EP size, on
   GB300 and GB200 (their ratio beside InferenceX's GB300 / GB200 vLLM figures).
2. **Step times** against the public DeepSeek V4 points in `bench/data/public/dsv4.json`: B300
   DEP8 verification steps (TRT-LLM FP4 fixed-batch decode rounds) and HGX B200's ITL
   (Lambda, vLLM).
3. **Lockstep** (`agentload.sim.engine.lockstep`): B300 DEP8 with MTP, the AgentPerf-shaped load
   replayed closed-loop (agents starting at a random call), ranks alone against in lockstep.
4. **KV** (`CompressedKv`): V4's bytes a token and a request's fixed state.

Nothing here is fitted; every figure is simulated except the published ones it names.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from agentload.sim.engine.sim_engine import SimEngine  # noqa: E402
from agentload.sim.engine.speculative import deepseek_mtp  # noqa: E402
from agentload.sim.replay import replay, session_calls  # noqa: E402
from agentload.sim.setup.build import DeploymentSpec, build_deployment  # noqa: E402
from agentload.sim.specs.model import model_shape  # noqa: E402
from agentload.workload.synthetic import SyntheticParams, generate  # noqa: E402

MODEL = "sgl-project/DeepSeek-V4-Pro-FP8"
PUBLIC = ROOT / "bench" / "data" / "public" / "dsv4.json"
CONTEXT = 27_500
"""The AgentPerf workload's mean prompt, tokens."""
FLOOR = 20.0
SPEED_MARGIN = 1.25
"""As the layout search's estimate: a p25 floor met at a mean 25% above it."""
EP_SIZES = (8, 16, 24, 32, 40, 48, 64, 72)
GB200_EP_SIZES = (16, 24, 32, 48, 64, 72)
"""GB200's 186 GB do not hold DEP8's share of the FP8 weights."""
SETTLE_S, UNTIL_S = 150.0, 330.0
SESSIONS = 4096


def built(system: str, parallel: str, gpus: int, *, backend: str = "sglang", **extra):  # type: ignore[no-untyped-def]
    return build_deployment(
        DeploymentSpec(
            system=system,
            backend=backend,
            model=extra.pop("model", MODEL),
            gpus=gpus,
            parallel=parallel,
            **extra,
        )
    )


def wide_ep_rows(system: str, sizes: tuple[int, ...]) -> list[dict[str, float]]:
    mtp = deepseek_mtp(3, MODEL)
    bound = mtp.mean_tokens / (FLOOR * SPEED_MARGIN)
    rows = []
    for n in sizes:
        deployment = built(system, f"tp1,dp{n},ep{n}", n, speculative=mtp)
        steps = deployment.config.steps
        kv = deployment.config.rank.kv_capacity_tokens
        by_speed = max(
            (b for b in range(1, 257) if steps.decode_step(b, CONTEXT) <= bound), default=0
        )
        batch = min(by_speed, kv // CONTEXT)
        step = steps.decode_step(max(batch, 1), CONTEXT)
        chunk = [(8192, CONTEXT)]
        rows.append(
            {
                "ep": n,
                "kv_tokens": kv,
                "step_64_ms": steps.decode_step(64, CONTEXT) * 1e3,
                "batch": batch,
                "kv_bound": batch < by_speed,
                "decode_tok_s_gpu": batch * mtp.mean_tokens / step if batch else 0.0,
                "prefill_tok_s_gpu": 8192 / steps.mixed_step(8192, 0, CONTEXT, chunk),
            }
        )
    return rows


def render_wide_ep(gb300: list[dict[str, float]], gb200: list[dict[str, float]]) -> list[str]:
    out = [
        "| system | layout | KV tokens a rank | verification step at 64 a rank, ms | batch a rank "
        "at 20 tok/s | decode output, tok/s a GPU | 8K prefill chunk, tok/s a GPU |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for system, rows in (("gb300", gb300), ("gb200", gb200)):
        for r in rows:
            bound = " (KV)" if r["kv_bound"] else ""
            out.append(
                f"| {system} | DEP{r['ep']} | {r['kv_tokens']:,.0f} | {r['step_64_ms']:.0f} | "
                f"{r['batch']:.0f}{bound} | {r['decode_tok_s_gpu']:,.0f} | "
                f"{r['prefill_tok_s_gpu']:,.0f} |"
            )
    best300 = max(r["decode_tok_s_gpu"] for r in gb300)
    best200 = max(r["decode_tok_s_gpu"] for r in gb200)
    public = json.loads(PUBLIC.read_text())["inferencex_dsv4_8k1k"]
    vllm = {p["system"]: p["tput_per_gpu"] for p in public if "vLLM" in p["serving"]}
    out.append("")
    out.append(
        f"Best GB300 over best GB200 (simulated, decode output a GPU): {best300 / best200:.2f}x; "
        f"InferenceX's dynamo-vLLM FP4 8K/1K at 27 tok/s a user: "
        f"{vllm['GB300 NVL72'] / vllm['GB200 NVL72']:.2f}x "
        f"({vllm['GB300 NVL72']:,} against {vllm['GB200 NVL72']:,} tok/s a GPU)."
    )
    return out


def step_rows() -> list[str]:
    public = json.loads(PUBLIC.read_text())
    out = [
        "| system, layout | simulated (SGLang operator data, FP8 experts) | published | "
        "published by |",
        "| --- | --- | --- | --- |",
    ]
    b300 = built("b300_sxm", "tp1,dp8,ep8", 8, speculative=deepseek_mtp(3, MODEL)).config.steps
    for row in public["b300_trtllm_dep8_fixed_batch_decode"]["rows"]:
        local = row["local_batch"]
        ms = b300.decode_step(local, 8192 + 512) * 1e3
        out.append(
            f"| B300 DEP8, MTP (3 drafts), {local} sequences a rank, 8K context | "
            f"{ms:.1f} ms a verification step | {row['decode_round_ms']:.1f} ms a decode round "
            f"(FP4 experts, {row['tokens_per_step']:.2f} tokens a step) | TRT-LLM, InferenceX "
            "run 27493336994 |"
        )
    lambda_point = next(
        p for p in public["other_dsv4"] if "Lambda" in p["source"] or "lambda" in p["source"]
    )
    b200 = built(
        "b200_sxm", "tp8,ep8", 8, backend="vllm", model="deepseek-ai/DeepSeek-V4-Pro"
    ).config.steps
    ms = b200.decode_step(32, 8192 + 1024) * 1e3
    out.append(
        f"| HGX B200, TP8 EP8, 32 sequences, ~9K context, no MTP | {ms:.1f} ms a decode step "
        f"(vLLM operator data, FP4 experts) | {lambda_point['itl_mean_ms']} ms mean ITL | vLLM, "
        "lambda.ai |"
    )
    return out


def lockstep_rows(counts: list[int]) -> list[str]:
    deployment = built(
        "b300_sxm", "tp1,dp8,ep8", 8, speculative=deepseek_mtp(3, MODEL), routing="cache_aware"
    )
    sessions = generate(SyntheticParams(sessions=SESSIONS, seed=1)).sessions
    gc.collect()
    gc.freeze()
    out = [
        "| agents (a GPU) | ranks alone: p25 / p50 output, tok/s; p95 TTFT, s | lockstep: p25 / "
        "p50; p95 TTFT | CPU, s |",
        "| ---: | --- | --- | ---: |",
    ]
    for n in counts:
        cells = []
        started = time.process_time()
        for group in (1, deployment.config.rank.group_size):
            config = deployment.config.model_copy(
                update={"rank": deployment.config.rank.model_copy(update={"group_size": group})}
            )
            cells.append(_closed_loop(config, sessions, n))
        cpu = time.process_time() - started
        out.append(f"| {n} ({n / 8:.1f}) | {cells[0]} | {cells[1]} | {cpu:.1f} |")
    return out


def _closed_loop(config, sessions, agents: int) -> str:  # type: ignore[no-untyped-def]
    rng = random.Random(agents)

    def agent(i: int):  # type: ignore[no-untyped-def]
        round_ = 0
        while True:
            session = sessions[rng.randrange(len(sessions))]
            calls = list(session_calls(session, f"a{i}r{round_}"))
            start = rng.randrange(len(calls)) if round_ == 0 else 0
            yield from calls[start:]
            round_ += 1

    results = replay(SimEngine(config), [agent(i) for i in range(agents)], until=UNTIL_S)
    window = [r for r in results if SETTLE_S <= r.t_done <= UNTIL_S and r.error is None]
    speeds = sorted(
        (r.completion_tokens - 1) / (r.t_last - r.t_first)
        for r in window
        if r.completion_tokens > 1 and r.t_last > r.t_first
    )
    ttft = sorted(r.t_first - r.t_submit for r in window)
    p25 = speeds[len(speeds) // 4]
    p50 = statistics.median(speeds)
    p95 = ttft[min(len(ttft) - 1, int(0.95 * len(ttft)))]
    return f"{p25:.1f} / {p50:.1f}; {p95:.2f}"


def kv_rows() -> list[str]:
    model = model_shape(MODEL)
    return [
        f"DeepSeek V4 Pro KV: {model.kv_bytes_per_token():,.0f} bytes a token (dense BF16 over "
        f"{model.kv_layers:.2f} layer-equivalents would be {model.kv_layers * 2 * 512 * 2:,.0f}); "
        f"a running request's fixed state {model.kv_state_bytes(False) / 1e6:.1f} MB, "
        f"{model.kv_state_bytes(True) / 1e6:.1f} MB with MTP."
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lockstep-agents", default="150,300,460")
    args = parser.parse_args(argv)
    started = time.process_time()
    counts = [int(x) for x in args.lockstep_agents.split(",") if x]
    sections = [
        ("Wide EP, DeepSeek V4 Pro FP8, SGLang data, MTP", render_wide_ep(
            wide_ep_rows("gb300", EP_SIZES), wide_ep_rows("gb200", GB200_EP_SIZES)
        )),
        ("Step times against public DeepSeek V4 points", step_rows()),
        ("DP-attention lockstep, B300 DEP8, MTP, cache-aware", lockstep_rows(counts)),
        ("KV", kv_rows()),
    ]  # fmt: skip
    for title, lines in sections:
        print(f"**{title}**\n")
        print("\n".join(lines))
        print()
    print(f"({time.process_time() - started:.0f} s of CPU)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
