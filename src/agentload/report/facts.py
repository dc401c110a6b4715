"""The HTML report's Run facts, from `manifest.json` alone: first the groups a reader wants
(the engine and its command line in full, the model, the hardware, the workload with its
parameters, the power source, the search settings, the tool), then every fact the manifest
holds, folded below them (`<details>`: closed on screen, left out when printed).

A measured run on the embedded engine names the engine's build, flags and sizing; a run
against a URL names the server and what it said of itself (agentload did not start it, so
its flags are the deployment's to tell); a simulated run names the simulated deployment.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl

import orjson

from agentload.report.formats import e, pct, utc
from agentload.results.files import MANIFEST_FILE
from agentload.results.tiers import Tier, slo_text
from agentload.units import count_words, number

FACT_CHARS = 160
"""Longest manifest value shown in the folded dump."""
LIST_FACT_ITEMS = 8
"""Longer lists in the folded dump are summarised by their length (the groups show them)."""
WORD_CHARS = 60
"""Longest word kept whole on its line (a longer one, a path or a JSON value, breaks where it
must rather than leave its column)."""
COLUMNS = '<colgroup><col class="what"><col></colgroup>'
PARAMETERS_MARK = "?"
"""What separates a workload source from its parameters (`synthetic:agentic-coding?a=1&b=2`)."""

Row = tuple[str, str]
Group = tuple[str, list[Row]]
Field = tuple[str, str, Callable[[Any], str]]
"""A manifest key, the name its row shows, and how its value is written."""


def workload_parameters(workload: Mapping[str, Any]) -> list[Row]:
    """The workload's parameters as its spec gives them (`sessions`, `mean_input`, ...),
    in the spec's order; none for a source without any."""
    spec = workload.get("spec")
    if not isinstance(spec, str) or PARAMETERS_MARK not in spec:
        return []
    return parse_qsl(spec.split(PARAMETERS_MARK, 1)[1], keep_blank_values=True)


def workload_words(workload: Mapping[str, Any]) -> str | None:
    """`sessions=64 · system_tokens=1024 · ...`: the header's line of parameters."""
    parameters = workload_parameters(workload)
    return " · ".join(f"{k}={v}" for k, v in parameters) if parameters else None


def fact_groups(manifest: Mapping[str, Any]) -> list[Group]:
    """The groups a reader wants first, each with the rows the manifest has."""
    groups = [
        ("Engine", _engine(manifest)),
        ("Model", _model(manifest)),
        ("Hardware", _hardware(manifest)),
        ("Workload", _workload(_section(manifest, "workload"))),
        ("Power", _power(manifest)),
        ("Search", _search(_section(_section(manifest, "settings"), "search"))),
        ("Tool", _tool(manifest)),
    ]
    return [(name, rows) for name, rows in groups if rows]


def facts_section(manifest: Mapping[str, Any]) -> str:
    """The Run facts section: the groups, then the folded dump."""
    if not manifest:
        return f"<h2>Run facts</h2><p>No {e(MANIFEST_FILE)}.</p>"
    rows = "".join(
        f'<tr><th colspan="2">{e(name)}</th></tr>'
        + "".join(f"<tr><td>{_words(k)}</td><td>{_value(k, v)}</td></tr>" for k, v in group)
        for name, group in fact_groups(manifest)
    )
    dump = list(_flatten("", manifest))
    dumped = "".join(
        f"<tr><td>{_dotted(key)}</td><td>{_words(_fact_text(key, value))}</td></tr>"
        for key, value in dump
    )
    return (
        "<h2>Run facts</h2>"
        f'<table class="facts">{COLUMNS}{rows}</table>'
        f"<details><summary>Every fact in {e(MANIFEST_FILE)} ({len(dump):,})</summary>"
        f'<table class="facts raw">{COLUMNS}{dumped}</table></details>'
        f'<p class="source">Source: {e(MANIFEST_FILE)}.</p>'
    )


# --- the groups ---------------------------------------------------------------------------------


def _section(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _engine(manifest: Mapping[str, Any]) -> list[Row]:
    simulated = _section(manifest, "simulated")
    if simulated:
        return _simulated_engine(simulated)
    engine = _section(manifest, "engine")
    if not engine:
        return _remote_engine(_section(manifest, "server"), _section(manifest, "endpoint"))
    name = str(engine.get("engine") or "embedded engine")
    version = engine.get("llama_cpp") or engine.get("vllm") or engine.get("server_version")
    rows: list[Row] = [("engine", f"{name} ({version})" if version else name)]
    args = engine.get("args")
    if isinstance(args, list) and args:
        rows.append(("command line", shlex.join(str(a) for a in args)))
    sizes = ("parallel", "ctx_size_tokens", "slot_ctx_tokens")
    parallel, ctx, slot = (engine.get(k) for k in sizes)
    if isinstance(parallel, int) and isinstance(ctx, int):
        per = f" ({slot:,} the longest call)" if isinstance(slot, int) else ""
        rows.append(("calls at once, KV", f"{parallel:,} calls, {ctx:,} tokens of KV{per}"))
    threads = engine.get("threads")
    if isinstance(threads, int):
        rows.append(("threads", f"{threads:,} (lowered priority: nice {engine.get('nice', 0)})"))
    if isinstance(engine.get("cache_ram"), str):
        rows.append(("RAM prompt cache", engine["cache_ram"]))
    build = _section(engine, "build")
    if build:
        rows.append(("build", ", ".join(f"{k} {v}" for k, v in build.items())))
    return rows


def _remote_engine(server: Mapping[str, Any], endpoint: Mapping[str, Any]) -> list[Row]:
    url = server.get("url") or endpoint.get("base_url")
    rows: list[Row] = []
    if url:
        rows.append(("server", f"{url} (not started by agentload: its flags are its own)"))
    models = server.get("models")
    if isinstance(models, list):
        ids = [str(m.get("id")) for m in models if isinstance(m, dict) and m.get("id")]
        if ids:
            rows.append(("serves", ", ".join(ids)))
    for key in ("version", "props"):
        if key in server:
            rows.append((key, _fact_text(key, server[key])))
    return rows


def _simulated_engine(simulated: Mapping[str, Any]) -> list[Row]:
    d = _section(simulated, "deployment")
    rows: list[Row] = [
        ("engine", f"SIMULATED {d.get('backend', '?')}, not measured"),
        ("layout", f"{d.get('layout') or d.get('parallel')} on {d.get('gpus')} GPUs"),
        ("routing", str(d.get("routing"))),
    ]
    for key in ("speculative", "kv_transfer"):
        if d.get(key):
            rows.append((key.replace("_", " "), str(d[key])))
    for key, name in (("step_source", "step times"), ("step_library", "step data")):
        if simulated.get(key):
            rows.append((name, str(simulated[key])))
    return rows


def _model(manifest: Mapping[str, Any]) -> list[Row]:
    endpoint = _section(manifest, "endpoint")
    model = _section(_section(manifest, "engine"), "model")
    return _given(endpoint, (("model", "served as", str),)) + _given(
        model,
        (
            ("source", "source", str),
            ("spec", "shape", _pairs),
            ("parameters", "parameters", _count),
            ("path", "file", str),
        ),
    )


def _hardware(manifest: Mapping[str, Any]) -> list[Row]:
    hardware = _section(manifest, "hardware")
    simulated = _section(_section(manifest, "simulated"), "deployment")
    rows: list[Row] = []
    gpus = manifest.get("gpus")
    if simulated:
        rows.append(("accelerators", f"{simulated.get('gpus')} x {simulated.get('system')}"))
    elif isinstance(gpus, int):
        rows.append(("accelerators", count_words(gpus, "GPU")))
    engine = _section(manifest, "engine")
    if _section(engine, "build").get("backend") == "cpu" and isinstance(engine.get("threads"), int):
        rows.append(("engine on", f"CPU, {count_words(engine['threads'], 'thread')}"))
    return rows + _given(
        hardware,
        (
            ("client_cpus", "client", lambda n: count_words(n, "CPU")),
            ("client_cpu_model", "processor", str),
            ("client_platform", "platform", str),
            ("client_python", "Python", str),
        ),
    )


def _workload(workload: Mapping[str, Any]) -> list[Row]:
    if not workload:
        return []
    source = str(workload.get("name") or workload.get("spec") or "unknown")
    rows: list[Row] = [("source", source)]
    rows += [(f"· {k}", v) for k, v in workload_parameters(workload)]
    return rows + _given(
        workload,
        (
            ("sessions", "sessions loaded", _count),
            ("theoretical_cache_hit_rate", "theoretical cache hit rate", _ceiling),
            ("fingerprint", "fingerprint", str),
        ),
    )


def _power(manifest: Mapping[str, Any]) -> list[Row]:
    simulated = _section(manifest, "simulated")
    if simulated.get("power_model"):
        return [("source", f"simulated: {simulated['power_model']}")]
    power = manifest.get("power")
    return [("source", str(power) if power else "not measured")]


def _search(search: Mapping[str, Any]) -> list[Row]:
    if not search:
        return []
    rows: list[Row] = []
    tiers = search.get("tiers")
    if isinstance(tiers, list):
        for raw in tiers:
            tier = Tier.model_validate(raw)
            rows.append((f"tier {tier.name}", slo_text(tier)))
    if search.get("length_s") is not None:
        rows.append(("one probe", f"{search.get('max_agents')} agents for {search['length_s']} s"))
        return rows
    names = (
        ("start_agents", "start agents"),
        ("max_agents", "max agents"),
        ("settle_s", "settle, s"),
        ("window_s", "window, s"),
        ("max_window_s", "max window, s"),
        ("precision", "precision"),
        ("plan", "plan"),
    )
    rows += [(name, str(search[key])) for key, name in names if key in search]
    return rows


def _tool(manifest: Mapping[str, Any]) -> list[Row]:
    tool = _section(manifest, "tool")
    times = _section(manifest, "times")
    rows: list[Row] = [
        ("agentload", str(tool.get("version", "?"))),
        ("command", str(manifest.get("command", "?"))),
        ("label", str(manifest.get("label", "?"))),
    ]
    for key in ("started_at", "finished_at"):
        if isinstance(times.get(key), int | float):
            rows.append((key.replace("_at", ""), utc(times[key])))
    workers = manifest.get("workers")
    host = manifest.get("host") or manifest.get("backend")
    if isinstance(workers, int):
        rows.append(("client workers", f"{workers:,} ({host or 'local'})"))
    return rows


# --- cells ----------------------------------------------------------------------------------


def _given(section: Mapping[str, Any], fields: Sequence[Field]) -> list[Row]:
    """A row for each of `fields` (key, name, how it is written) that `section` has."""
    return [
        (name, write(section[key]))
        for key, name, write in fields
        if section.get(key) not in (None, "", {}, [])
    ]


def _count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _pairs(value: Any) -> str:
    return (
        ", ".join(f"{k} {v}" for k, v in value.items()) if isinstance(value, dict) else str(value)
    )


def _ceiling(value: Any) -> str:
    rate = pct(value) if isinstance(value, float) else str(value)
    return f"{rate} (a perfect cache, prompts only)"


def _value(key: str, value: str) -> str:
    """A group's value: a command line or a file path as code, anything else as text."""
    if key in ("command line", "file"):
        return f"<code>{_words(value)}</code>"
    return _words(value)


def _words(text: str) -> str:
    """Escaped text whose words (up to `WORD_CHARS`) never break inside, at a hyphen or a
    slash: `--threads-batch`, `Linux-6.18.44-fc`, a model's path."""
    return " ".join(
        f'<span class="w">{e(word)}</span>' if 0 < len(word) <= WORD_CHARS else e(word)
        for word in text.split(" ")
    )


def _dotted(key: str) -> str:
    """A dotted key that may break after its dots, never inside a word."""
    return "<wbr>".join(e(part + ".") for part in key.split(".")[:-1]) + e(key.split(".")[-1])


def _flatten(prefix: str, value: Any) -> Iterable[tuple[str, Any]]:
    """(dotted key, scalar) pairs of a nested JSON value; long lists as their length."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _flatten(f"{prefix}.{key}" if prefix else str(key), inner)
    elif isinstance(value, list) and len(value) > LIST_FACT_ITEMS:
        yield prefix, f"[{len(value)} items]"
    else:
        yield prefix, value


def _fact_text(key: str, value: Any) -> str:
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    if is_number and (key.startswith("times.") or key.endswith("_at")):
        return f"{value:.0f} ({utc(value)})"  # epoch seconds, to the second the time shows
    if isinstance(value, float):
        text = number(value)
    else:
        text = value if isinstance(value, str) else orjson.dumps(_rounded(value)).decode()
    return text if len(text) <= FACT_CHARS else text[:FACT_CHARS] + "…"


def _rounded(value: Any) -> Any:
    """A JSON value with its floats to the four significant digits a reader needs (the file
    keeps them whole)."""
    if isinstance(value, float):
        return float(f"{value:.4g}")
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value
