"""The task score of a real model, alone and under the demo's load (issue 31, item 3).

    .venv/bin/python bench/quality_tasks.py [--agents 4] [--duration 420] [--tasks 280]
        [--out bench/out/quality-tasks]

Gemma 3 270M (the `gemma` extra) on llama.cpp, asked the analogies task set
(`agentload.quality.tasks`, scored exactly) through the completions API, greedily:
1. alone: each question sent once with nothing else running (its reference), then again (the
   repeat alone); the score of each, with its Wilson interval (95%);
2. under load: a plain run of `--agents` agents of the demo's workload
   (`agentload.run.presets.LOCAL_WORKLOAD`) for `--duration` seconds, with one check lane (a
   share of 1/agents) sending the questions one after another against their references; the
   score over the run's window, with its interval, beside the score alone on the same
   questions, and how many replies diverged from their reference (and how many of those flipped
   a near tie).

Writes `OUT/tasks-<agents>.json` and prints the figures. `--references FILE` takes an earlier
run's `task-references.json` instead of recording them again (the same engine and model).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from rich.console import Console  # noqa: E402

from agentload.client.endpoint import Endpoint  # noqa: E402
from agentload.engines.gemma import GEMMA_MODEL_NAME  # noqa: E402
from agentload.engines.llamacpp import LocalEngine  # noqa: E402
from agentload.engines.process import engine_threads  # noqa: E402
from agentload.quality.binomial import wilson  # noqa: E402
from agentload.quality.call import CheckClient  # noqa: E402
from agentload.quality.record import record_references  # noqa: E402
from agentload.quality.reference import (  # noqa: E402
    ReferenceSet,
    load_references,
    write_references,
)
from agentload.quality.settings import QualityOptions  # noqa: E402
from agentload.quality.tasks import correct, task_conversations, task_size  # noqa: E402
from agentload.results.files import CHECKS_FILE  # noqa: E402
from agentload.results.jsonl import read_jsonl  # noqa: E402
from agentload.results.quality import CheckRecord, CheckSettings, QualityThresholds  # noqa: E402
from agentload.run.execute import Execution, execute  # noqa: E402
from agentload.run.presets import LOCAL_WORKLOAD  # noqa: E402
from agentload.run.search_settings import SearchSettings  # noqa: E402
from agentload.run.settings import AgentSettings  # noqa: E402
from agentload.target.deployment import TargetOptions  # noqa: E402

SLOT_CONTEXT = 18_432
SETTLE_S = 10.0
RAMP_S = 2.0
LEVEL = 0.95


def record(engine: LocalEngine, count: int) -> tuple[ReferenceSet, float]:
    """Every question's reference and repeat alone, and the seconds it took."""
    endpoint = Endpoint(base_url=engine.url, model=engine.model, api="chat")
    settings = CheckSettings(tasks=count, conversations=0)
    conversations = task_conversations(settings.task_set, count, settings.task_api)

    async def go() -> ReferenceSet:
        async with CheckClient(endpoint, settings) as client:
            return await record_references(
                client,
                conversations,
                origin="this deployment at one agent",
                tie_margin_nats=QualityThresholds().tie_margin_nats,
                notes=[],
            )

    began = time.perf_counter()
    references = asyncio.run(go())
    return references, time.perf_counter() - began


def score(hits: int, n: int) -> dict[str, object]:
    low, high = wilson(hits, n, LEVEL) if n else (0.0, 1.0)
    return {"correct": hits, "asked": n, "score": hits / n if n else None, "interval": [low, high]}


def words(name: str, figures: dict[str, object]) -> str:
    low, high = figures["interval"]  # type: ignore[misc]
    return (
        f"{name}: {figures['correct']} of {figures['asked']} = {figures['score']:.1%} "
        f"({low:.1%}-{high:.1%} at {LEVEL:.0%})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--duration", type=float, default=420.0)
    parser.add_argument("--tasks", type=int, default=task_size("analogies"))
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "quality-tasks")
    parser.add_argument(
        "--references", type=Path, help="the task references of an earlier run (not recorded)"
    )
    args = parser.parse_args()
    folder = args.out / time.strftime("%Y%m%dT%H%M%S")
    folder.mkdir(parents=True)
    slots = args.agents + 2
    with LocalEngine.start(
        GEMMA_MODEL_NAME,
        parallel=slots,
        ctx_size=slots * SLOT_CONTEXT,
        threads=engine_threads(),
        log_dir=folder / "engine",
    ) as engine:
        path = folder / "task-references.json"
        if args.references is not None:
            references, took = load_references(args.references), 0.0
        else:
            references, took = record(engine, args.tasks)
        write_references(path, references)
        answers = [r.conversation.answer or "" for r in references.references]
        alone = sum(
            correct(r.reply.text, a) for r, a in zip(references.references, answers, strict=True)
        )
        again = sum(1 for r in references.references if r.repeat is not None and r.repeat.correct)
        result: dict[str, object] = {
            "model": engine.model,
            "engine": "llama.cpp",
            "record_s": round(took, 1),
            "alone": score(alone, len(answers)),
            "repeat_alone": score(again, len(answers)),
        }
        print(words("alone", result["alone"]))  # type: ignore[arg-type]
        print(words("repeated alone", result["repeat_alone"]))  # type: ignore[arg-type]
        request = Execution(
            workload=LOCAL_WORKLOAD,
            search=SearchSettings.for_run(
                args.agents, args.duration, ramp_s=RAMP_S, settle_s=SETTLE_S
            ),
            target=TargetOptions(url=engine.url, model=engine.model),
            out=folder / "loaded",
            label="quality-tasks",
            agents=AgentSettings(start_mid_session=True),
            quality=QualityOptions(
                settings=CheckSettings(share=1 / args.agents, tasks=args.tasks, conversations=0),
                references=path,
            ),
        )
        summary = execute(request, console=Console(quiet=True))
    quality = summary.probes[0].quality
    assert quality is not None
    probe = summary.probes[0]
    asked = [
        c.reference
        for c in read_jsonl(folder / "loaded" / CHECKS_FILE, CheckRecord).items
        if probe.window_start <= c.t_done < probe.window_end and c.error is None
    ]
    by_id = references.by_id()
    same = sum(correct(by_id[i].reply.text, by_id[i].conversation.answer or "") for i in asked)
    result["alone_same_questions"] = score(same, len(asked))
    result["loaded"] = {
        "agents": args.agents,
        "window_s": probe.window_s,
        "agent_calls": quality.agent_calls,
        "p25_output_tokens_per_s": probe.p25_output_tokens_per_s,
        **score(quality.task_correct, quality.task_attempts),
        "exact": quality.exact,
        "diverged": quality.diverged,
        "near_ties": quality.near_ties,
        "gate": quality.gate.model_dump() if quality.gate else None,
    }
    print(words(f"under {args.agents} agents", result["loaded"]))  # type: ignore[arg-type]
    print(words("the same questions alone", result["alone_same_questions"]))  # type: ignore[arg-type]
    print(
        f"  {quality.exact} replies exact, {quality.diverged} diverged, {quality.near_ties} "
        f"flipped a near tie; gate {quality.gate.outcome if quality.gate else '—'}; "
        f"{quality.agent_calls} agent calls in {probe.window_s:.0f} s"
    )
    (folder / f"tasks-{args.agents}.json").write_text(json.dumps(result, indent=1) + "\n")
    print(folder)


if __name__ == "__main__":
    main()
