"""The frozen models of `summary.json` (schema version 2) and its parts.

A results directory (file names in `agentload.results.files`) holds:
- `manifest.json`: tool version, settings, workload fingerprint, endpoint, server and hardware
  facts, times (rewritten at the end with the measured times);
- `records.jsonl`: one request record a line, appended as calls finish;
- `probes.jsonl`: one probe a line (a search), appended as probes finish;
- `power.jsonl`: power samples, when a sampler ran; `server_metrics.jsonl`: scrapes;
- `summary.json`: written last and atomically; its presence marks a finished run.

Units are in the field names. Throughputs are for the whole deployment (all `gpus`); per-GPU
figures divide by `gpus`. Power is the mean accelerator power of the whole deployment.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from agentload.frozen import Frozen
from agentload.results.quality import QualityFigures, QualitySummary, TierQuality

SUMMARY_SCHEMA_VERSION = 2
"""2: a simulated deployment's units are engine instances and data-parallel ranks
(`SimulatedDeployment.dp_ranks`, `gpus_per_dp_rank`; `SimulatedPool.engine_instances`,
`dp_ranks`). Schema 1, which lived a day, called both replicas; its simulated summaries are
refused, naming the field (its other summaries read as 2: nothing else changed)."""


class PowerFigures(Frozen):
    """How power was measured over a window, and what it came to."""

    source: str = "none"
    """`nvml`, `amdsmi`, `prometheus`, `command`, `rapl`, `assumed` (a declared constant) or
    `none`."""
    assumed: bool = False
    """True when the watts are a declared constant, not a measurement."""
    description: str | None = None
    """The source as configured, e.g. `nvml (all GPUs)` or `assumed 2.2 W (1 vCPU(s) serving x
    2.2 W: ...)`: for an assumed figure, what it stands for and where its number comes from."""
    mean_watts: float | None = Field(default=None, ge=0)
    energy_j: float | None = None
    coverage: float | None = None
    """Share of the window covered by samples (1.0 = no gaps)."""
    valid: bool = False
    reason: str | None = None
    """Why the figure is missing or invalid, when it is."""


class TierCheck(Frozen):
    """A probe against one tier: the percentiles the tier names, as measured over the window."""

    output_speed_tokens_per_s: float | None = None
    """Per-request output speed at the tier's percentile, tokens/s."""
    ttft_s: float | None = None
    """Time to first token at the tier's percentile, s."""
    interactivity_tokens_per_s: float | None = None
    """End-to-end interactivity (1 / the tier's percentile of e2e s per output token)."""
    reason: str = ""
    """The verdict in words (`output 69.0 >= 60 tokens/s, TTFT 12.500 > 2 s`, or `error rate
    12.0% above 5.0%`)."""
    confident: bool | None = None
    """True when the window decided the verdict at the requested confidence; False when it is
    the point estimate, inside the noise or on too few requests (a verdict the plan did not
    need decided, or one still undecided at the longest window); None in older results."""
    output_speed_interval_tokens_per_s: tuple[float, float] | None = None
    """The percentile bootstrap interval of `output_speed_tokens_per_s` at `interval_level`
    (None in older results, and when the tier has no speed floor)."""
    ttft_interval_s: tuple[float, float] | None = None
    """The percentile bootstrap interval of `ttft_s` at `interval_level`."""
    interactivity_interval_tokens_per_s: tuple[float, float] | None = None
    """The bootstrap interval of `interactivity_tokens_per_s` at `interval_level`."""
    interval_level: float | None = Field(default=None, gt=0, lt=1)
    """The confidence of the three intervals above (the search's `--confidence`)."""


class MethodologyStamp(Frozen):
    """Whether figures were measured under a benchmark's rules (`agentload.measure.methodology`)."""

    rules: str = "agentperf"
    """The rules checked: `agentperf` (Artificial Analysis AgentPerf's measurement rules)."""
    valid: bool
    reasons: tuple[str, ...] = ()
    """Why the figures are not valid under the rules, one line each (empty when valid)."""
    notes: tuple[str, ...] = ()
    """What a reader should know that does not invalidate them."""


class OneAgentBaseline(Frozen):
    """A call's latency at one agent, as a one-agent probe measured it (`measure.sessions`):
    TTFT = ttft_s_at_zero + s_per_uncached_token x uncached prompt tokens, then the other
    output tokens at output_tokens_per_s."""

    ttft_s_at_zero: float = Field(ge=0)
    s_per_uncached_token: float = Field(ge=0)
    output_tokens_per_s: float = Field(gt=0)
    calls: int = Field(ge=1)
    """One-agent calls the baseline was fitted on."""


class SessionFigures(Frozen):
    """What the sessions felt like over a window, per session instance: its wall time (first
    send to last close of its calls there), the share of it spent waiting on the model (the
    rest is tool time and the agent's own), and its slowdown against the same calls at one
    agent."""

    sessions: int = Field(ge=0)
    """Session instances with a call closed in the window."""
    calls: int = Field(ge=0)
    wall_s_p50: float | None = None
    wall_s_p90: float | None = None
    model_share: float | None = None
    """Time waiting on the model / wall time, summed over the sessions (0..1)."""
    tool_share: float | None = None
    """1 - model_share: tool time between calls (and the agent's own time), 0..1."""
    slowdown_p50: float | None = None
    """Wall time / the same session's estimated wall time at one agent (1.0 = no slowdown)."""
    slowdown_p90: float | None = None
    baseline: OneAgentBaseline | None = None
    """The one-agent call latencies the slowdown compares with; None when there was none."""


class ArrivalFigures(Frozen):
    """An open-loop run's arrivals, and the concurrency they came to over the window."""

    arrivals: str
    """How sessions arrived (`poisson arrivals at 0.5 sessions/s`, or the trace's times)."""
    sessions_arrived: int = Field(ge=0)
    """Sessions that arrived during the run."""
    sessions_active_mean: float = Field(ge=0)
    """Sessions in progress (first send to last close), time-averaged over the window."""
    sessions_active_peak: int = Field(ge=0)


class ProbeFigures(Frozen):
    """One concurrency level measured over its steady-state window (for an open-loop run,
    `agents` is the mean of sessions active, rounded, and `arrivals` says how they came)."""

    index: int = Field(ge=0)
    agents: int = Field(ge=1)
    window_start: float
    window_end: float
    window_s: float
    requests_ok: int
    requests_failed: int
    error_rate: float | None
    errors_by_kind: dict[str, int] = Field(default_factory=dict)
    """Failed requests closed in the window, by cause (`agentload.client.errors` kinds)."""
    total_tokens_per_s: float = Field(ge=0)
    output_tokens_per_s: float = Field(ge=0)
    cached_input_tokens_per_s: float = Field(ge=0)
    uncached_input_tokens_per_s: float
    input_tokens_per_s: float
    p25_output_tokens_per_s: float | None
    p50_output_tokens_per_s: float | None
    p95_ttft_s: float | None
    p50_ttft_s: float | None
    p90_interactivity_tokens_per_s: float | None = None
    """End-to-end normalised interactivity (AgentX, InferenceX, AIPerf): 1 / the 90th
    percentile of per-request end-to-end latency / output tokens, tokens/s."""
    cache_hit_rate: float | None
    """Client side: cached / prompt tokens from the server's usage."""
    server_cache_hit_rate: float | None = None
    """Server side: from its Prometheus counters over the window, when scraped."""
    achieved_concurrency: float
    mean_watts: float | None = Field(default=None, ge=0)
    power_source: str = "none"
    power_reason: str | None = None
    """Why the probe has no power figure, when a sampler ran but its figure is invalid."""
    verdicts: dict[str, str] = Field(default_factory=dict)
    """Tier name -> `pass`, `fail` or `uncertain` (inside the noise)."""
    checks: dict[str, TierCheck] = Field(default_factory=dict)
    """Tier name -> the figures its verdict was judged on (absent in older results)."""
    goodput_calls_per_s: dict[str, float] = Field(default_factory=dict)
    """Tier name -> successful calls closed in the window that each met the tier's criteria,
    per second of window (`agentload.measure.goodput`)."""
    sessions: SessionFigures | None = None
    arrivals: ArrivalFigures | None = None
    methodology: MethodologyStamp | None = None
    notes: tuple[str, ...] = ()
    probe_s: float | None = Field(default=None, ge=0)
    """What the probe cost, s: from its resize (the new agents' ramp, or a shrink's wait for
    the leaving agents' calls in flight) through the settle to the window's end; None for a
    plain run and in older results."""
    quality: QualityFigures | None = None
    """The window's check calls against their references, and the gate's verdict
    (`agentload.quality`); None without quality checks and in older results."""


class AgentsInterval(Frozen):
    """Where a repeat of the search would answer a tier, at `level` (`agentload.search.interval`):
    from `low` to `high` agents, the answer itself always inside."""

    low: int = Field(ge=0)
    """Fewest agents a repeat would answer (0: none)."""
    high: int | None = Field(default=None, ge=0)
    """Most agents a repeat would answer; None when the tier passed at the search's cap (a
    repeat would answer the cap or pass beyond it)."""
    level: float = Field(gt=0, lt=1)
    """The probability a repeat lands inside, as estimated (0.9)."""
    crossing_agents: float | None = Field(default=None, gt=0)
    """Where the tier's health crosses zero, by the line through the probes near the answer."""
    spread: float | None = Field(default=None, ge=0)
    """A repeat's crossing about `crossing_agents`: one standard deviation, in log agents."""
    basis: str = ""
    """What the interval rests on, in words."""


Limit = Literal[
    "output_speed", "ttft", "interactivity", "error_rate", "quality", "max_agents", "not_probed"
]
"""What set a tier's answer: its output-speed floor, its TTFT ceiling, its e2e interactivity
floor, the error rate, the quality gate, the search's --max-agents cap, or nothing measured."""


class TierResult(Frozen):
    """One SLO tier: the most agents that met it, and the figures at that point."""

    name: str
    output_speed_floor_tokens_per_s: float | None
    output_speed_percentile: float
    ttft_ceiling_s: float | None
    ttft_percentile: float
    interactivity_floor_tokens_per_s: float | None = None
    interactivity_percentile: float | None = None
    max_agents: int | None = Field(ge=1)
    """None when even the smallest probe failed the tier."""
    first_failing_agents: int | None = Field(default=None, ge=1)
    max_agents_interval: AgentsInterval | None = None
    """Where a repeat of the search would answer, at its stated level (None for a run, an
    unsettled tier and older results)."""
    total_tokens_per_s: float | None = Field(default=None, ge=0)
    output_tokens_per_s: float | None = Field(default=None, ge=0)
    cached_input_tokens_per_s: float | None = Field(default=None, ge=0)
    uncached_input_tokens_per_s: float | None = None
    total_tokens_per_s_per_gpu: float | None = Field(default=None, ge=0)
    p25_output_tokens_per_s: float | None = None
    p50_output_tokens_per_s: float | None = None
    p95_ttft_s: float | None = None
    p90_interactivity_tokens_per_s: float | None = None
    goodput_calls_per_s: float | None = None
    """Calls per second that met this tier at `max_agents`."""
    cache_hit_rate: float | None = None
    mean_watts: float | None = Field(default=None, ge=0)
    power_source: str = "none"
    """Where `mean_watts` and the per-MW figures come from (`assumed`: a declared constant)."""
    agents_per_mw: float | None = Field(default=None, ge=0)
    total_tokens_per_s_per_mw: float | None = Field(default=None, ge=0)
    output_tokens_per_s_per_mw: float | None = None
    cached_input_tokens_per_s_per_mw: float | None = None
    uncached_input_tokens_per_s_per_mw: float | None = None
    joules_per_output_token: float | None = None
    joules_per_token: float | None = None
    limit: Limit | None = None
    """What set the answer (None in older results)."""
    answer_probe_s: float | None = Field(default=None, ge=0)
    """Probe time the search had spent when this tier's answer settled: every probe's
    `probe_s` up to the one that closed its bracket, s (None: it never settled, or older
    results)."""
    answer_gpu_s: float | None = Field(default=None, ge=0)
    """`answer_probe_s` x the deployment's GPUs: the GPU time this answer cost (with --gpus)."""
    explanation: str | None = None
    """The answer in words a user acts on: which limit, by how much, and what the deployment
    did at the probe that decided it (e.g. `out of reach: p95 TTFT 12.5 s at 1 agent > 2 s
    ceiling (6.2x); unloaded, p25 output speed 69 tokens/s`)."""
    quality: TierQuality | None = None
    """The quality gate on this tier's answer (None without quality checks, older results)."""
    notes: tuple[str, ...] = ()


class SelfCheckFigures(Frozen):
    """The load generator's self-check over a run (`agentload.measure.selfcheck`): did it
    keep up?"""

    ok: bool = True
    """False when a figure crossed its limit (named in `notes`)."""
    loop_lag_p50_s: float | None = None
    """How late the client's event loop woke a timer, seconds: every client timestamp can be
    late by this much."""
    loop_lag_p99_s: float | None = None
    loop_lag_max_s: float | None = None
    lag_samples: int = 0
    send_delay_p50_s: float | None = None
    """How long after an agent meant to send a call it went out, seconds."""
    send_delay_p99_s: float | None = None
    send_delay_max_s: float | None = None
    sends: int = 0
    cpu_s: float = 0.0
    """Client CPU time, seconds (all processes)."""
    wall_s: float = 0.0
    cpu_share: float | None = None
    """CPU time over wall time of the busiest client process (1.0 = one core saturated)."""
    processes: int = 1
    """Client processes (workers) the figures cover; lags and delays are the worst of them."""
    notes: tuple[str, ...] = ()


class SimulatedPool(Frozen):
    """One pool of a simulated deployment: its role, workers and layout, as built."""

    role: str
    """`aggregated`, `prefill` or `decode`."""
    engine_instances: int = Field(ge=1)
    """Engine instances (model copies of `tp x dp` GPUs; `--layout` counts them)."""
    parallel: str
    dp_ranks: int = Field(ge=1)
    """Data-parallel ranks over all the pool's engine instances (each with its own scheduler and
    KV cache; an engine instance without attention DP is one)."""
    gpus: int = Field(ge=1)
    kv_capacity_tokens: int
    """HBM for KV per data-parallel rank, tokens."""
    step_source: str


class SimulatedDeployment(Frozen):
    """The deployment a simulation stands for, as the user named it and as it was built
    (`agentload.vocabulary`: a deployment, its engine instances, their data-parallel ranks). For
    a disaggregated one, `parallel`, `dp_ranks` and `gpus_per_dp_rank` are its prefill pool's;
    `pools` has both."""

    system: str
    backend: str
    model: str
    gpus: int = Field(ge=1)
    parallel: str
    dp_ranks: int = Field(ge=1)
    """Data-parallel ranks (each with its own scheduler and KV cache; an engine instance without
    attention DP is one)."""
    gpus_per_dp_rank: int = Field(ge=1)
    kv_host_gb: float = 0.0
    max_batch_tokens: int
    max_running: int
    routing: str
    layout: str | None = None
    """The serving layout as `--layout` spells it (`1P:tp1,dp8,ep8+1D:tp1,dp64,ep64`; an
    aggregated one `9A:tp1,dp8,ep8`); None in results written before layouts existed."""
    pools: tuple[SimulatedPool, ...] = ()
    speculative: str | None = None
    """Speculative decoding, its acceptance and their source; None: one token a step."""
    kv_transfer: str | None = None
    """Disaggregated: the link prefill hands KV to decode over, its bandwidth and source."""


class KvWorkingSet(Frozen):
    """The fleet's KV working set against the deployment's HBM (`agentload.sim.specs.kvset`):
    what a perfect prefix cache needs, and the agent count where it stops fitting."""

    kv_bytes_per_token: float
    """Per token, one data-parallel rank (tensor-parallel copies included), bytes."""
    tokens_per_agent_active: float
    """Mean prompt + output of a call: held while the call runs."""
    tokens_per_agent_idle: float
    """Mean context kept for the next call through the tool time."""
    tokens_per_agent_peak: float
    shared_tokens: float
    """Prefix every session shares (system prompt, tools), counted once per data-parallel
    rank."""
    kv_capacity_tokens: int
    """HBM for KV over all data-parallel ranks, tokens."""
    agents_that_fit: int
    """The most agents whose working set (`tokens_per_agent_active` each) fits in HBM."""
    hbm_needed_gb_at_max_agents: float
    """HBM a perfect prefix cache needs at the most agents probed, GB (KV only)."""
    max_agents: int


class CalibrationFigure(Frozen):
    """One figure of one probe of a measured run: as measured, as the calibrated simulation
    predicts it, and the error. `fitted` figures were minimised by the fit (their errors are
    residuals, small by construction); the others are predictions."""

    agents: int = Field(ge=1)
    figure: str
    """A `ProbeFigures` field: `total_tokens_per_s`, `p25_output_tokens_per_s`,
    `p50_output_tokens_per_s`, `p95_ttft_s` or `p50_ttft_s` (units in the name)."""
    measured: float
    predicted: float | None
    """None when the simulated probe had no sample of it."""
    error: float | None
    """predicted / measured - 1."""
    fitted: bool


class CalibrationFacts(Frozen):
    """How a simulation's fitted factors were obtained from a measured run (`agentload
    simulate --calibrate`): the run, the probes fitted, the factors found and every error."""

    source: str
    """The measured results directory, as given."""
    label: str | None = None
    measured: str
    """What was measured: the endpoint or engine, and its model."""
    workload: str
    fitted_agents: tuple[int, ...]
    """Agent counts of the probes the factors were fitted to."""
    fitted_figures: tuple[str, ...]
    objective: str
    """What the fit minimised, in words."""
    factors: dict[str, float]
    """The fitted factors by name (the roofline's `compute_efficiency`,
    `bandwidth_efficiency`, `step_overhead_s`, and any other the model fits)."""
    prompt_token_scale: float = 1.0
    """Prompt tokens as the measured server counted them per token the workload intended
    (its chat template and tokenizer), applied to the simulated prompts."""
    rms_log_error: float
    """Root mean square of log(predicted / measured) over the fitted figures."""
    evaluations: int
    """Simulations the fit ran."""
    points: tuple[CalibrationFigure, ...]
    """Every probe of the measured run, fitted and not, figure by figure."""
    notes: tuple[str, ...] = ()


class RegimeError(Frozen):
    """How a system's step-time calibration does in one regime of prompt and output lengths."""

    regime: str
    """`8K/1K`: input / output tokens of the published points."""
    input_tokens: int
    output_tokens: int
    fitted_points: int
    held_out_points: int
    fit_rms_log_error: float | None = None
    """Over the fitted points' throughput and interactivity (None: none fitted)."""
    held_out_error: float | None = None
    """The largest relative error of the held-out points' throughput or interactivity."""


class StepUncertainty(Frozen):
    """How far a simulation's step times, and so its figures, can be trusted: whether anything
    calibrates them for this system, and the relative error band that follows (a simulated
    figure may be this share off either way; None: not stated)."""

    calibrated: bool
    error_band: float | None = Field(default=None, ge=0)
    basis: str
    """Where the band comes from, in words (what was fitted to what, or why nothing was)."""
    long_context_band: float | None = Field(default=None, ge=0)
    """The error on held-out long-context points (8K input tokens and more) of the system's
    calibration: agents' calls are ~27K tokens, so this is the band a comparison of agents
    carries (None: no long-context point of the system was checked)."""
    regimes: tuple[RegimeError, ...] = ()
    """The calibration's fit and held-out error per regime of prompt and output lengths."""


class SimulationFacts(Frozen):
    """What a simulated result stands for and where its numbers came from: it was computed by
    `agentload.sim`, not measured, and says so everywhere it shows."""

    deployment: SimulatedDeployment
    step_source: str
    """Where the step times came from (aiconfigurator-core's data, with its version, or a
    roofline from public specs with its efficiency factors)."""
    step_library: str | None = None
    power_model: str
    kv: KvWorkingSet | None = None
    calibration: CalibrationFacts | None = None
    """The measured run its factors were fitted to, the fit and its errors, when calibrated
    (`--calibrate`)."""
    validation: str = "docs/simulation.md (predicted vs published and measured, with errors)"
    uncertainty: StepUncertainty | None = None
    """Calibrated or not, and the error band every comparison of this result carries (results
    written before it was stated have none)."""
    notes: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = ()
    """Every input assumed rather than sourced or measured, with its value (`name: value
    (why)`)."""


class SearchCost(Frozen):
    """What a search's probes cost, and which plan chose them."""

    plan: str
    """`sweep` (the default) or `bisect` (the original plan, `--plan bisect`)."""
    prior: str | None = None
    """The results directory the plan started from (`--prior`), when one was given."""
    probes: int = Field(ge=0)
    probe_s: float = Field(ge=0)
    """Every probe's `probe_s` summed: ramps, shrinks, settles and windows, s."""
    gpu_s: float | None = Field(default=None, ge=0)
    """`probe_s` x the deployment's GPUs (with --gpus)."""


class Summary(Frozen):
    """`summary.json`: the headline of a results directory."""

    schema_version: int = SUMMARY_SCHEMA_VERSION
    kind: Literal["run", "search"]
    tool_version: str
    label: str
    complete: bool
    """False when the run was interrupted; the figures cover what was measured."""
    gpus: int | None = Field(default=None, ge=1)
    power: PowerFigures = PowerFigures()
    probes: tuple[ProbeFigures, ...] = ()
    tiers: tuple[TierResult, ...] = ()
    client_ok: bool = True
    """False when the client fell behind its schedule (event-loop lag); figures are suspect."""
    selfcheck: SelfCheckFigures | None = None
    """The client's self-check figures behind `client_ok` (None in older results)."""
    simulated: SimulationFacts | None = None
    """Set when the figures were computed by the simulator, not measured."""
    methodology: MethodologyStamp | None = None
    """Whether the probes were measured under AgentPerf's rules, and why not
    (`agentload.measure.methodology.summary_stamp`); None in older results."""
    search: SearchCost | None = None
    """A search's plan and what its probes cost (None for a run and in older results)."""
    quality: QualitySummary | None = None
    """What the quality checks were checked against and how (None without them, and in
    older results; `measured` False for a simulated deployment)."""
    notes: tuple[str, ...] = ()
