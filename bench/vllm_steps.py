"""vLLM's step costs measured on its own, beside what the simulator's roofline says for them: a
cold prompt's prefill by length, a cached prefix extended by a few new tokens, and decode steps
by batch size (issue 32, item 4: which part of the step model is wrong).

    PYTHONPATH=src .venv/bin/python bench/vllm_steps.py OUT [--factors validation.json]

One vLLM server (vLLM's CPU build serving the generated model as the validation's searches ran
it: `PARALLEL` requests at once of `SLOT_TOKENS`, one thread, nice 5) is sent, one request at a
time unless said, prompts given as token ids (no chat template, no tokenising in the API
server), each prompt's tokens drawn apart from every other's (no prefix-cache hit unless wanted):

- **prefill**: a cold prompt of `PREFILL_LENGTHS` tokens, one output token; the request's
  latency (`REPEATS` times each, the median).
- **extend**: a prefix of `EXTEND_CONTEXTS` tokens sent once (cached), then the same prefix
  with `EXTEND_NEW` new tokens: the latency of the second.
- **decode**: `DECODE_BATCHES` requests at once, each a cold `DECODE_PROMPT`-token prompt and
  `DECODE_TOKENS` forced output tokens, streamed: the median gap between tokens after the
  first `DECODE_SKIP` (all requests decoding together), the step time at that batch.

- **server**: the API server's own cost per request (`agentload.sim.engine.frontend`): a chat
  call (`/v1/chat/completions`: the chat template, the whole prompt tokenised) of about
  `SERVER_LENGTHS` tokens of text, sent twice; the second's latency less the roofline's step
  for the part the prefix cache did not serve (read from its usage) is the server's time, fitted
  as `request_s + prompt_token_s L` (the frontend factors, measured alone).

The least-squares fit of the cold prefills, `o + a L + b L^2 / 2`, splits a prompt token's
cost into its linear layers (`a`) and its attention (`b` a (query, key) pair). The roofline's
four factors are then fitted to these step times alone (`fit_factors`: least squares of the log
ratio over every probe), and its step times for the same shapes given beside, at those factors
and at `--factors` (a validation.json: each run's factors calibrated on a search's probes).
Results go to OUT/steps.json.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import statistics
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agentload.engines.vllm import BATCH_TOKENS, VllmEngine  # noqa: E402
from agentload.sim.calibration.on_run import FITTED_FACTORS  # noqa: E402
from agentload.sim.setup.build import DeploymentSpec, build_deployment  # noqa: E402
from agentload.sim.steps.roofline import RooflineParams  # noqa: E402

VLLM_SYSTEM = "cpu-xeon-vcpu"
"""The machine vLLM's step times (and the quiet search) were measured on: one vCPU of this
project's Intel Xeon guest (`agentload.sim.data.gpus.json`; the earlier vCPU was an AMD EPYC
Genoa, `cpu-epyc-genoa-vcpu`)."""
PARALLEL = 12
SLOT_TOKENS = 18_432
ENGINE_NICE = 5
REPEATS = 3
PREFILL_LENGTHS = (256, 1024, 2048, 4096, 8192, 16_384)
EXTEND_CONTEXTS = (2048, 8192)
EXTEND_NEW = (128, 512)
DECODE_BATCHES = (1, 2, 4, 8, 12)
DECODE_PROMPT = 1024
DECODE_TOKENS = 64
DECODE_SKIP = 8
"""Gaps left out at a decode probe's start (the other requests' prefills run then)."""
SERVER_LENGTHS = (512, 2048, 4096, 8192, 16_384)
FIRST_TOKEN = 300
VOCABULARY = 3500
"""Token ids from `FIRST_TOKEN` on: plain text tokens of the generated model's vocabulary."""
HTTP_TIMEOUT_S = 600
_seeds = itertools.count()


def tokens(count: int) -> list[int]:
    """`count` token ids no other call of this shares (a fresh seed each call)."""
    seed = next(_seeds)
    out: list[int] = []
    for i in itertools.count():
        digest = hashlib.sha256(f"steps/{seed}/{i}".encode()).digest()
        out.extend(FIRST_TOKEN + b % VOCABULARY for b in digest)
        if len(out) >= count:
            return out[:count]
    raise AssertionError("unreachable")


def post(engine: VllmEngine, path: str, body: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    """One request, not streamed: its latency, s, and its JSON answer."""
    request = urllib.request.Request(
        f"{engine.url}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    began = time.perf_counter()
    with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as response:
        answer = json.loads(response.read())
    return time.perf_counter() - began, answer


def complete(engine: VllmEngine, prompt: list[int], output: int = 1) -> float:
    """One request's latency, s (not streamed)."""
    body = {"model": engine.model, "prompt": prompt, "max_tokens": output, "ignore_eos": True}
    return post(engine, "/v1/completions", body)[0]


def chat(engine: VllmEngine, text: str) -> tuple[float, int, int]:
    """One chat call of one user message, one output token: its latency, s, and the prompt
    tokens the server counted and found cached."""
    body = {
        "model": engine.model, "messages": [{"role": "user", "content": text}],
        "max_tokens": 1, "ignore_eos": True,
    }  # fmt: skip
    took, answer = post(engine, "/v1/chat/completions", body)
    usage = answer["usage"]
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    return took, int(usage["prompt_tokens"]), int(cached)


def server_calls(engine: VllmEngine) -> list[dict[str, float]]:
    """Chat calls of about `SERVER_LENGTHS` tokens, each sent twice: the repeat's latency, its
    prompt tokens and the tokens its prefix cache served (module docstring, **server**)."""
    from tokenizers import Tokenizer

    assert engine.tokenizer_path is not None
    tokenizer = Tokenizer.from_file(str(engine.tokenizer_path))
    rows = []
    for length in SERVER_LENGTHS:
        times = []
        for _ in range(REPEATS):
            text = tokenizer.decode(tokens(length))
            chat(engine, text)
            took, prompt, cached = chat(engine, text)
            times.append((took, prompt, cached))
        took, prompt, cached = sorted(times)[len(times) // 2]
        rows.append({"s": took, "prompt": prompt, "cached": cached})
    return rows


def streamed_gaps(engine: VllmEngine, prompt: list[int], output: int, out: list[float]) -> None:
    """Stream one request; the gaps between its token events go to `out`."""
    body = {
        "model": engine.model, "prompt": prompt, "max_tokens": output, "ignore_eos": True,
        "stream": True,
    }  # fmt: skip
    request = urllib.request.Request(
        f"{engine.url}/v1/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    times = []
    with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as response:
        for line in response:
            if line.startswith(b"data: {"):
                times.append(time.perf_counter())
    out.extend(b - a for a, b in itertools.pairwise(times[DECODE_SKIP:]))


def measure(engine: VllmEngine) -> dict[str, Any]:
    """The three kinds of probe (module docstring)."""
    complete(engine, tokens(256), 8)  # warm-up
    prefill = {
        length: statistics.median(complete(engine, tokens(length)) for _ in range(REPEATS))
        for length in PREFILL_LENGTHS
    }
    extend = []
    for context, new in itertools.product(EXTEND_CONTEXTS, EXTEND_NEW):
        times = []
        for _ in range(REPEATS):
            prefix = tokens(context)
            complete(engine, prefix)
            times.append(complete(engine, prefix + tokens(new)))
        extend.append({"context": context, "new": new, "s": statistics.median(times)})
    decode = {}
    for batch in DECODE_BATCHES:
        gaps: list[float] = []
        threads = [
            threading.Thread(
                target=streamed_gaps, args=(engine, tokens(DECODE_PROMPT), DECODE_TOKENS, gaps)
            )
            for _ in range(batch)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        decode[batch] = statistics.median(gaps)
    return {"prefill": prefill, "extend": extend, "decode": decode, "server": server_calls(engine)}


def server_cost(model_name: str, factors: dict[str, float], rows: list[dict[str, Any]]) -> dict:
    """The API server's cost per request from the repeated chat calls: each one's latency less
    the roofline's step (at `factors`) for its uncached tail and its one output token, fitted as
    `request_s + prompt_token_s L` (least squares, both kept at or above 0)."""
    table = build_deployment(_spec(model_name, factors)).config.steps
    lengths, server = [], []
    for row in rows:
        tail = max(1, int(row["prompt"]) - int(row["cached"]))
        engine_s = table.mixed_step(tail, 0, 0.0, [(tail, int(row["cached"]))])
        lengths.append(float(row["prompt"]))
        server.append(float(row["s"]) - engine_s)
    design = np.column_stack([np.ones(len(lengths)), lengths])
    (fixed, per_token), *_ = np.linalg.lstsq(design, np.array(server), rcond=None)
    return {
        "request_s": max(0.0, float(fixed)),
        "prompt_token_s": max(0.0, float(per_token)),
        "server_s": dict(zip((int(n) for n in lengths), server, strict=True)),
    }


def split(prefill: dict[int, float]) -> dict[str, float]:
    """The cold prefills fitted as `o + a L + b L^2 / 2`: seconds, per token, per pair."""
    lengths = np.array(sorted(prefill), dtype=float)
    times = np.array([prefill[int(n)] for n in lengths])
    design = np.column_stack([np.ones_like(lengths), lengths, lengths**2 / 2])
    (o, a, b), *_ = np.linalg.lstsq(design, times, rcond=None)
    return {"overhead_s": float(o), "per_token_s": float(a), "per_pair_s": float(b)}


def _spec(model_name: str, factors: dict[str, float]) -> DeploymentSpec:
    """The measured server as the simulator's deployment, at the roofline's `factors`."""
    roofline = {k: v for k, v in factors.items() if k in RooflineParams.model_fields}
    return DeploymentSpec(
        system=VLLM_SYSTEM, backend="vllm", model=model_name, gpus=1,
        max_running=PARALLEL, max_batch_tokens=BATCH_TOKENS, steps="roofline",
        roofline=RooflineParams(**roofline),
    )  # fmt: skip


def modelled(model_name: str, factors: dict[str, float]) -> dict[str, Any]:
    """The roofline's step times for the same shapes at `factors`: a cold prefill (its chunks
    of `BATCH_TOKENS`), an extension, a decode step by batch; and its own split."""
    built = build_deployment(_spec(model_name, factors))
    table = built.config.steps

    def prefill_s(context: int, new: int) -> float:
        total, done = 0.0, 0
        while done < new:
            chunk = min(BATCH_TOKENS, new - done)
            total += table.mixed_step(chunk, 0, 0.0, [(chunk, context + done)])
            done += chunk
        return total

    work = built.model.work()
    flops = built.gpu.peak_flops(built.model.weight_dtype) * factors["compute_efficiency"]
    return {
        "prefill": {n: prefill_s(0, n) for n in PREFILL_LENGTHS},
        "extend": [
            {"context": c, "new": n, "s": prefill_s(c, n)}
            for c, n in itertools.product(EXTEND_CONTEXTS, EXTEND_NEW)
        ],
        "decode": {
            b: table.decode_step(b, DECODE_PROMPT + DECODE_TOKENS / 2) for b in DECODE_BATCHES
        },
        "per_token_s": 2.0 * work.active_params / flops,
        "per_pair_s": work.attention_flops / flops,
    }


def _shapes(times: dict[str, Any]) -> list[float]:
    """A measurement's (or the model's) step times in one order: prefills, extensions, decodes."""
    return [
        *(float(v) for _, v in sorted(times["prefill"].items(), key=lambda kv: int(kv[0]))),
        *(float(row["s"]) for row in times["extend"]),
        *(float(v) for _, v in sorted(times["decode"].items(), key=lambda kv: int(kv[0]))),
    ]


def fit_factors(model_name: str, measured: dict[str, Any]) -> dict[str, float]:
    """The roofline's four factors (`FITTED_FACTORS`' bounds) that best give the measured step
    times: least squares of log(modelled / measured) over every probe (Nelder-Mead in log
    space from the factors' starts)."""
    target = np.log(_shapes(measured))
    names = [f.name for f in FITTED_FACTORS]
    lower = np.log([f.lower for f in FITTED_FACTORS])
    upper = np.log([f.upper for f in FITTED_FACTORS])

    def objective(x: np.ndarray) -> float:
        values = dict(zip(names, np.exp(np.clip(x, lower, upper)), strict=True))
        return float(np.sum((np.log(_shapes(modelled(model_name, values))) - target) ** 2))

    start = np.log([f.start for f in FITTED_FACTORS])
    found = minimize(objective, start, method="Nelder-Mead", options={"maxfev": 2000})
    found = minimize(objective, found.x, method="Nelder-Mead", options={"maxfev": 2000})
    return dict(zip(names, (float(v) for v in np.exp(np.clip(found.x, lower, upper))), strict=True))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--factors", type=Path, help="a validation.json (calibration.factors)")
    parser.add_argument(
        "--refit",
        action="store_true",
        help="no server: fit OUT/steps.json's measured times again (after the step model changed)",
    )
    args = parser.parse_args(argv)
    if args.refit:
        return refit(args.out / "steps.json", args.factors)
    args.out.mkdir(parents=True, exist_ok=True)
    engine = VllmEngine.start(
        parallel=PARALLEL, slot_tokens=SLOT_TOKENS, threads=1, nice=ENGINE_NICE,
        log_dir=args.out / "engine",
    )  # fmt: skip
    try:
        facts = engine.facts()
        measured = measure(engine)
    finally:
        engine.stop()
    result: dict[str, Any] = {
        "engine": facts, "measured": measured, "split": split(measured["prefill"]),
    }  # fmt: skip
    fitted = fit_factors(engine.model, measured)
    result["fitted"] = {"factors": fitted, **modelled(engine.model, fitted)}
    result["server"] = server_cost(engine.model, fitted, measured["server"])
    if args.factors:
        factors = json.loads(args.factors.read_text())["calibration"]["factors"]
        result["calibrated"] = {"factors": factors, **modelled(engine.model, factors)}
    (args.out / "steps.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(json.dumps(result, indent=1, default=str))
    return 0


def refit(path: Path, factors_from: Path | None) -> int:
    """The roofline's factors fitted again to the step times `path` holds, and its step times at
    them (and at `factors_from`'s) written back; the measured times are kept as they are."""
    result = json.loads(path.read_text())
    model = result["engine"]["model"]["name"]
    fitted = fit_factors(model, result["measured"])
    result["fitted"] = {"factors": fitted, **modelled(model, fitted)}
    if "server" in result["measured"]:
        result["server"] = server_cost(model, fitted, result["measured"]["server"])
    calibrated = result.get("calibrated", {}).get("factors")
    if factors_from:
        calibrated = json.loads(factors_from.read_text())["calibration"]["factors"]
    if calibrated:
        result["calibrated"] = {"factors": calibrated, **modelled(model, calibrated)}
    path.write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(json.dumps(result["fitted"]["factors"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
