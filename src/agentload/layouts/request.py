"""What a layout search is asked (`LayoutRequest`) and what it gives back (`LayoutResult`): the
typed edge of `agentload.layouts.choose.choose_layout`."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from agentload.frozen import Frozen
from agentload.layouts.price import price_of
from agentload.results.layouts import LayoutSearch, Price
from agentload.run.search_settings import SearchSettings
from agentload.run.settings import AgentSettings
from agentload.sim.setup.build import DeploymentSpec

LAYOUT_PRECISION = 0.25
"""The searches' precision unless one is asked for: a bracket within 25% ranks layouts."""


class LayoutRequest(Frozen):
    """A layout search: the deployment whose layout is searched, the workload and tiers, how
    each candidate is searched, and how many searches at most."""

    workload: str
    """The workload as `--workload` names it."""
    deployment: DeploymentSpec
    """The system, backend, model, GPU budget (`gpus`), routing and step source; its layout,
    speculative decoding and host KV tier are what is searched."""
    speculative: str | None = None
    """As `--speculative` spells it, fixing speculative decoding (None: off, and MTP where the
    model has published acceptance)."""
    kv_host_gb: float | None = Field(default=None, ge=0)
    """The host KV tier tried per rank, GB (None: SGLang HiCache's default; 0: none)."""
    search: SearchSettings
    """Each candidate's search: tiers (the first ranks the estimates), windows, precision."""
    max_agents: int | None = Field(default=None, ge=1)
    """Each search's cap (None: `CAP_FACTOR` times the candidate's largest estimate)."""
    agents: AgentSettings
    searches: int = Field(ge=1)
    """Full simulated searches at most."""
    price: Price = Field(default_factory=lambda: price_of(None, None))
    out: Path | None = None
    """The layout search's directory (None: `results/<time>-layouts-...`)."""
    skip_bad_lines: bool = False
    config: str | None = None
    """The effective options as TOML (`agentload.config_file`), saved as `config.toml`."""


class LayoutResult(Frozen):
    """A finished layout search: where it wrote, and `layouts.json`'s content."""

    out: Path
    layouts: LayoutSearch
