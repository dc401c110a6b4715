"""The system under test as the user named it (a URL and model, or the embedded local engine:
llama.cpp or vLLM), checked, then opened: its endpoint, a tokenizer for its prompts, facts about
it, and the target spec the agents' hosts open (`agentload.target.http`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
from pydantic import ValidationError
from rich.console import Console

from agentload.client.endpoint import Api, Endpoint, not_http
from agentload.client.facts import server_facts
from agentload.client.reach import check_reachable, reaching
from agentload.engines.server import DEFAULT_ENGINE, EngineName
from agentload.errors import AgentloadError, at_least_one, first_problem
from agentload.measure.meters import Meters, ServerWindows, power_recorder
from agentload.measure.power_spec import PowerSpec
from agentload.measure.server_metrics import ServerMetricsScraper
from agentload.results.samples import ServerScrape
from agentload.target.context import ContextCheck, Fit, check_context
from agentload.target.http import HttpTargetSpec
from agentload.target.preflight import preflight
from agentload.workload.text import TextMaker
from agentload.workload.tokenizers import Tokenizer, load_tokenizer

MAX_NICE = 19
"""The most a process's priority can be lowered (Linux niceness 0..19 without privileges)."""


@dataclass(frozen=True)
class TargetOptions:
    """Where load goes: a URL and model, or (url None) the embedded local engine."""

    url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    tokenizer: str | None = None
    """A tokenizer.json path; default: the local engine's, or the server's tokenize endpoint."""
    engine: EngineName = DEFAULT_ENGINE
    """The embedded engine (`--engine`): llama.cpp or vLLM's CPU build."""
    engine_model: str = "generated"
    engine_parallel: int | None = None
    """Slots for the local engine; default: the most agents the run will have."""
    engine_ctx_per_slot: int | None = None
    """Each slot's context, tokens; None: sized from the workload (`agentload.target.local`)."""
    engine_threads: int | None = None
    """The local engine's threads; None: every usable CPU but one per client process."""
    engine_nice: int | None = None
    """How much lower the local engine's priority is; None: `LOCAL_ENGINE_NICE`."""
    request_timeout_s: float | None = None
    metrics_url: str | None = None
    """The server's Prometheus endpoint; default: `<server root>/metrics` for the local engine."""
    headers: tuple[tuple[str, str], ...] = ()
    """Extra request headers (`Endpoint.headers`: `{session}`, `{agent}`, `{env:VAR}`)."""
    extra_body: dict[str, Any] | None = None
    """Merged into every request body."""
    ca_bundle: str | None = None
    insecure: bool = False

    def check(self, api: Api) -> None:
        """Refuse malformed options before anything is created (`check_target_options`)."""
        check_target_options(self, api)

    @contextlib.contextmanager
    def open(
        self,
        *,
        api: Api,
        agents: int,
        out: Path,
        console: Console,
        fit: Fit | None = None,
        clients: int = 1,
        refuse_misfit: bool = True,
    ) -> Iterator[OpenTarget]:
        """Yield the target ready for `agents` concurrent agents; a local engine stops on exit.

        With `fit`, the workload's calls are counted against the server's context first: a
        local engine's slots are sized to them (`agentload.target.local`), and a server they
        would not fit is refused before any load, in one line naming the fix. `clients` is the
        number of client processes sharing this machine with a local engine. Without
        `refuse_misfit` (doctor), a misfit is not refused: the check is in
        `OpenTarget.context`."""
        if self.url is not None:
            if not self.model:
                raise AgentloadError("--model is required with --url")
            endpoint = self.endpoint(api, base_url=self.url, model=self.model)
            check_reachable(endpoint)
            tokenizer = load_tokenizer(self.tokenizer or self.url, model=self.model)
            facts: dict[str, Any] = {"server": server_facts(endpoint)}
            context = None
            if fit is not None:
                with reaching(*self._counted_at(endpoint), "counting the workload's prompts"):
                    context = check_context(endpoint, TextMaker(tokenizer, "context-check"), fit)
                if context.window.tokens is not None or context.need.ratio is not None:
                    console.print(context.line(), highlight=False, soft_wrap=True)
                facts["context"] = context.facts()
                if not context.fits and refuse_misfit:
                    raise AgentloadError(
                        f"{context.line()}: serve the model with a longer context (vLLM "
                        "--max-model-len, SGLang --context-length, llama.cpp --ctx-size per "
                        "slot) or use a workload with shorter calls"
                    )
            metrics, missing = self.metrics_url, None
            if metrics is None:
                metrics, missing = found_metrics(endpoint.base_url)
                if metrics is not None:
                    console.print(
                        f"server metrics: {metrics} (found beside --url; --metrics-url names "
                        "another)",
                        highlight=False,
                        soft_wrap=True,
                    )
            yield OpenTarget(endpoint, tokenizer, facts, metrics, context, metrics_missing=missing)
            return
        from agentload.target.local import LocalOptions, open_local

        options = LocalOptions(
            model=self.engine_model,
            parallel=self.engine_parallel or agents,
            slot_tokens=self.engine_ctx_per_slot,
            threads=self.engine_threads,
            nice=self.engine_nice,
            clients=clients,
            engine=self.engine,
        )
        with open_local(
            options,
            api=api,
            endpoint_for=lambda a, engine: self.endpoint(
                a, base_url=engine.url, model=engine.model
            ),
            tokenizer=self.tokenizer,
            fit=fit,
            log_dir=out / "engine",
            console=console,
            refuse_misfit=refuse_misfit,
        ) as local:
            engine = local.engine
            facts = {"server": server_facts(local.endpoint), "engine": engine.facts()}
            if local.context is not None:
                facts["context"] = local.context.facts()
            metrics = self.metrics_url or f"{engine.url}/metrics"
            yield OpenTarget(
                local.endpoint, local.tokenizer, facts, metrics, local.context, url_given=False
            )

    def _counted_at(self, endpoint: Endpoint) -> tuple[str, str]:
        """Where prompts are counted, and the options that named it: the server, and a
        tokenizer server given apart from it."""
        tokenizer = self.tokenizer or ""
        if tokenizer.startswith(("http://", "https://")):
            return f"{endpoint.base_url} or {tokenizer}", "--url, --tokenizer"
        return endpoint.base_url, "--url"

    def endpoint(self, api: Api, *, base_url: str, model: str) -> Endpoint:
        """The endpoint these options describe at `base_url`; a one-line error naming the
        option when one is malformed."""
        values: dict[str, Any] = {
            "base_url": base_url,
            "model": model,
            "api": api,
            "api_key_env": self.api_key_env,
            "headers": self.headers,
            "extra_body": self.extra_body,
            "ca_bundle": self.ca_bundle,
            "insecure": self.insecure,
        }
        if self.request_timeout_s is not None:
            values["total_timeout_s"] = self.request_timeout_s
        try:
            return Endpoint.model_validate(values)
        except ValidationError as exc:
            field, words = first_problem(exc)
            option = _OPTIONS.get((field or "").split(".")[0], "--url")
            raise AgentloadError(f"{option}: {words}") from None


_OPTIONS = {
    "base_url": "--url",
    "model": "--model",
    "api_key_env": "--api-key-env",
    "total_timeout_s": "--request-timeout",
    "headers": "--header",
    "extra_body": "--extra-body",
    "ca_bundle": "--ca-bundle",
}


@dataclass(frozen=True)
class OpenTarget:
    """A target ready for load: its endpoint, a tokenizer for its prompts, and facts about it."""

    endpoint: Endpoint
    tokenizer: Tokenizer
    facts: dict[str, Any]
    metrics_url: str | None
    context: ContextCheck | None = None
    """The workload's calls against the server's context, when checked."""

    url_given: bool = True
    """False for the embedded engine (its URL changes from run to run)."""
    metrics_missing: str | None = None
    """Why there is no metrics URL (none given, and none found beside the server's API)."""
    virtual = False
    simulated = None

    @property
    def spec(self) -> HttpTargetSpec:
        """What the agents' hosts open to send calls here."""
        return HttpTargetSpec.of(self.endpoint, self.tokenizer)

    def manifest(self) -> dict[str, Any]:
        return {"endpoint": self.endpoint.model_dump(mode="json"), **self.facts}

    def identity(self) -> dict[str, Any]:
        """The same model and API (and URL, unless the target is the local engine)."""
        endpoint: dict[str, Any] = {"model": self.endpoint.model, "api": self.endpoint.api}
        if self.url_given:
            endpoint["base_url"] = self.endpoint.base_url
        return {"endpoint": endpoint}

    async def check(self, console: Console, *, strict: bool = True) -> None:
        """The preflight (`agentload.target.preflight`): one forced-length call."""
        await preflight(self.endpoint, console, strict=strict)

    @contextlib.contextmanager
    def meters(self, out: Path, power: PowerSpec | None) -> Iterator[Meters]:
        """The power sampler asked for, and the server's Prometheus counters when scraped."""
        server = ServerWindows(self.metrics_url, out) if self.metrics_url else None
        with power_recorder(power, out) as recorder:
            yield Meters(recorder, server)


def found_metrics(base_url: str) -> tuple[str | None, str | None]:
    """The server's Prometheus endpoint beside its API (`<root>/metrics`, where vLLM, SGLang
    and llama.cpp serve it), when one scrape there reads a known engine's metrics: (its URL,
    None); else (None, why not)."""
    scraper = ServerMetricsScraper(base_url)

    async def once() -> ServerScrape:
        try:
            return await scraper.scrape()
        finally:
            await scraper.aclose()

    scrape = asyncio.run(once())
    if scrape.error is None:
        return scraper.url, None
    return None, f"{scraper.url}: {scrape.error}"


def parse_header(spec: str) -> tuple[str, str]:
    """`--header 'Name: value'` as (name, value); one line naming the option when malformed."""
    name, sep, value = spec.partition(":")
    if not sep or not name.strip():
        raise AgentloadError("--header: expected 'Name: value'")
    return name.strip(), value.strip()


def parse_extra_body(text: str | None) -> dict[str, Any] | None:
    """`--extra-body` as a JSON object; one line naming the option when it is not one."""
    if text is None:
        return None
    try:
        body = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise AgentloadError(f"--extra-body: not valid JSON ({exc.msg})") from None
    if not isinstance(body, dict):
        raise AgentloadError("--extra-body: expected a JSON object")
    return body


def check_target_options(target: TargetOptions, api: Api) -> None:
    """Refuse a malformed target before anything is created (one line naming the option):
    the local engine's sizes and priority, the URL, the key's variable (named and set), the
    request timeout, the metrics URL."""
    for option, size in (
        ("--engine-parallel", target.engine_parallel),
        ("--engine-ctx", target.engine_ctx_per_slot),
        ("--engine-threads", target.engine_threads),
    ):
        at_least_one(option, size)
    nice = target.engine_nice
    if nice is not None and not 0 <= nice <= MAX_NICE:
        raise AgentloadError(f"--engine-nice: must be 0 to {MAX_NICE}, got {nice}")
    if target.metrics_url is not None:
        parts = urlsplit(target.metrics_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise AgentloadError(f"--metrics-url: {not_http(target.metrics_url, '/metrics')}")
    if target.request_timeout_s is not None and not target.request_timeout_s > 0:
        raise AgentloadError(f"--request-timeout: must be > 0 s, got {target.request_timeout_s:g}")
    if target.ca_bundle is not None and not Path(target.ca_bundle).is_file():
        raise AgentloadError(f"--ca-bundle: no such file: {target.ca_bundle}")
    if target.url is None:
        endpoint = target.endpoint(api, base_url="http://127.0.0.1:1", model="local")
    elif not target.model:
        raise AgentloadError("--model is required with --url")
    else:
        endpoint = target.endpoint(api, base_url=target.url, model=target.model)
    endpoint.secrets()  # a one-line error now if a variable it needs is not set
