"""The simulator as the layout search sees it, a black box: the space of a budget (the catalog's
layouts, the system's scale-up domain), a layout's rank memory (for pruning), each pool's step
table (tabulated once per role, layout and option, for the estimate), and a candidate as the
deployment request the real search runs.

`Simulated` keeps what one layout search has built (pool models, rank KV budgets) so that no
step table is tabulated twice; everything it answers comes from `agentload.sim`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from agentload.errors import InputError
from agentload.layouts.candidates import (
    enumerate_candidates,
    has_host_tier,
    host_kv_gb,
    pool_layouts,
    speculative_options,
)
from agentload.layouts.estimate import PoolModel, WorkloadShape, estimate
from agentload.layouts.prune import MemoryFit, dominance
from agentload.results.layouts import Candidate, Estimated, Pruned, Space
from agentload.results.tiers import Tier
from agentload.sim.engine.speculative import Speculative, draft_weight_scale, parse_speculative
from agentload.sim.setup.build import DeploymentSpec, _build_pool, engine_memory, rank_memory
from agentload.sim.setup.serving import Pool, parse_layout
from agentload.sim.specs.hardware import GpuSpec, gpu_spec
from agentload.sim.specs.links import interconnect
from agentload.sim.specs.model import ModelShape, model_shape
from agentload.sim.specs.parallel import Layout
from agentload.sim.steps.catalog import catalog_for
from agentload.sim.steps.ep import EP_SIZES
from agentload.units import BYTES_PER_GB

AS_GIVEN = "as given"
"""The key of the deployment's own speculative decoding (`estimates`)."""
PoolKey = tuple[str, str, str | None, float]
"""A pool model's role, layout, speculative option and host tier (GB)."""


@dataclass
class Simulated:
    """One layout search's deployment (`base`: system, backend, model, routing, step source),
    its model and system, and what has been built for it so far."""

    base: DeploymentSpec
    model: ModelShape
    gpu: GpuSpec
    speculative: dict[str | None, Speculative | None] = field(default_factory=dict)
    """Each speculative option tried, parsed (None: off)."""
    pools: dict[PoolKey, PoolModel] = field(default_factory=dict)
    budgets: dict[str, float] = field(default_factory=dict)
    """A layout's rank HBM KV pool, bytes (for the host tier's size)."""
    catalogued: bool = False
    """The catalog has operator data for the (system, backend, model): a layout whose step
    data does not evaluate is pruned, not simulated on the roofline instead."""
    domain: int = 1
    """GPUs of the system's scale-up domain."""

    @classmethod
    def of(cls, base: DeploymentSpec) -> Simulated:
        """The search's model and system, from the simulator's specs."""
        model = model_shape(base.model, kv_dtype_bytes=base.kv_dtype_bytes)
        return cls(base=base, model=model, gpu=gpu_spec(base.system))

    @property
    def label(self) -> str:
        """The search in a few words (`layouts-gb300-x72-DeepSeek-V4-Pro-FP8`)."""
        base = self.base
        return f"layouts-{base.system}-x{base.gpus}-{self.model.name.rsplit('/', 1)[-1]}"

    def space(
        self, speculative: str | None, kv_host_gb: float | None
    ) -> tuple[Space, tuple[Candidate, ...]]:
        """The pool layouts and options, and every deployment of the budget they make
        (`speculative`: as `--speculative` fixes it, None: off and MTP where published;
        `kv_host_gb` 0: no host tier)."""
        base, model = self.base, self.model
        catalog, _ = catalog_for()
        tp = [
            c.tp
            for c in catalog.combinations
            if (c.system, c.backend, c.model) == (base.system, base.backend, model.name)
            and c.dp == 1
        ]
        domain = interconnect(self.gpu).scale_up_gpus
        self.domain, self.catalogued = domain, bool(tp)
        layouts = pool_layouts(
            catalog_tp=tp,
            moe=model.experts > 0,
            scale_up_gpus=domain,
            ep_data_sizes=EP_SIZES,
            budget=base.gpus,
        )
        options = speculative_options(speculative, model)
        self.speculative = {
            spec: parse_speculative(spec, model=model.name, mtp_layers=model.mtp_layers)
            if spec
            else None
            for spec in options
        }
        host = (
            (False, True)
            if has_host_tier(base.system, base.backend) and kv_host_gb != 0
            else (False,)
        )
        candidates = enumerate_candidates(base.gpus, layouts, speculative=options, host_kv=host)
        space = Space(
            budget=base.gpus,
            layouts=tuple(lay.spec for lay in layouts),
            speculative=options,
            host_kv=host,
            domain_gpus=domain,
            across_domains=tuple(lay.spec for lay in layouts if lay.spans(domain)),
            notes=self._space_notes(domain, bool(tp)),
        )
        return space, candidates

    def _space_notes(self, domain: int, catalogued: bool) -> tuple[str, ...]:
        base = self.base
        notes = [
            f"a model copy crosses the scale-up domain ({domain} GPUs) only where no copy fits "
            "within one; pipeline stages only across domains",
            "attention TP inside DP ranks only where attention DP alone does not fit",
            f"routing fixed at {base.routing} for every candidate (--routing)",
        ]
        if not catalogued:
            notes.append(
                f"the catalog has no step data for {base.system} {base.backend} "
                f"{self.model.name}: roofline step times"
            )
        return tuple(notes)

    def memory(self, layout: Layout, drafts: bool) -> MemoryFit:
        """A layout's rank memory (with speculative decoding's draft layers when `drafts`)."""
        model = self.model
        scale = max(
            (
                draft_weight_scale(model.layers, model.mtp_layers, s)
                for s in self.speculative.values()
                if drafts
            ),
            default=1.0,
        )
        engine = engine_memory(self.base, self.gpu, layout, drafts)
        memory = rank_memory(
            model,
            self.gpu,
            layout,
            max_batch_tokens=self.base.max_batch_tokens,
            memory_fraction=engine.fraction,
            weight_scale=scale,
            max_running=self.base.max_running,
            speculative=drafts,
            workspace=engine.workspace,
        )
        self.budgets.setdefault(layout.spec, memory.kv_budget_bytes)
        return MemoryFit(
            weights_per_gpu_gb=memory.weights_per_gpu_bytes / BYTES_PER_GB,
            gpu_memory_gb=self.gpu.memory_bytes / BYTES_PER_GB,
            kv_capacity_tokens=max(0, memory.kv_capacity_tokens),
        )

    def estimate_all(
        self,
        kept: Sequence[Candidate],
        tiers: Sequence[Tier],
        shape: WorkloadShape,
        given_host: float | None,
    ) -> tuple[tuple[Estimated, ...], tuple[Pruned, ...]]:
        """Every survivor's estimates, dominance marked, best at the first tier first; and
        those whose step data does not evaluate, pruned ("no step data")."""
        found = []
        missing: list[Pruned] = []
        for candidate in kept:
            host = self._host_gb(candidate, given_host)
            try:
                pools = tuple(
                    self._pool_model(pool, candidate.speculative, host)
                    for pool in parse_layout(candidate.layout)
                )
            except InputError as exc:
                missing.append(Pruned(candidate=candidate, reason="no step data", detail=str(exc)))
                continue
            estimates = tuple(estimate(tier, shape, pools) for tier in tiers)
            found.append(
                Estimated(
                    candidate=candidate,
                    kv_host_gb=host,
                    estimates=estimates,
                    score=estimates[0].agents,
                )
            )
        ranked = tuple(sorted(dominance(found), key=lambda e: (-e.score, e.candidate.name)))
        return ranked, tuple(missing)

    def _host_gb(self, candidate: Candidate, given: float | None) -> float:
        if not candidate.host_kv:
            return 0.0
        front = parse_layout(candidate.layout)[0].layout
        return host_kv_gb(self.budgets.get(front.spec, 0.0), given)

    def _pool_model(self, pool: Pool, spec: str | None, host_gb: float) -> PoolModel:
        """A pool as the estimate sees it; its step table tabulated once per (role, layout,
        speculative, host tier) (`agentload.sim.setup.build`, kept on disk)."""
        spec = spec if pool.role != "prefill" else None
        host_gb = host_gb if pool.role != "decode" else 0.0
        key = (pool.role, pool.layout.spec, spec, host_gb)
        found = self.pools.get(key)
        if found is None:
            speculative = self.speculative.get(spec)
            steps = "aic" if self.catalogued and self.base.steps == "auto" else self.base.steps
            request = self.base.model_copy(
                update={"speculative": speculative, "kv_host_gb": host_gb, "steps": steps}
            )
            one = Pool(role=pool.role, instances=1, layout=pool.layout)
            built = _build_pool(request, self.model, self.gpu, one)
            found = PoolModel(
                role=pool.role,
                ranks=1,
                steps=built.steps,
                kv_capacity_tokens=built.rank.kv_capacity_tokens,
                kv_host_tokens=built.rank.kv_host_tokens,
                max_batch_tokens=built.rank.max_batch_tokens,
                max_running=built.rank.max_running,
                tokens_per_step=speculative.mean_tokens if speculative is not None else 1.0,
            )
            self.pools[key] = found
        return found.model_copy(update={"ranks": pool.ranks})

    def own_pools(self) -> tuple[PoolModel, ...]:
        """The deployment `base` itself, as named (its layout, speculative decoding and host
        tier), as the estimate sees it."""
        base = self.base
        self.speculative[AS_GIVEN] = base.speculative
        spec = AS_GIVEN if base.speculative is not None else None
        return tuple(self._pool_model(pool, spec, base.kv_host_gb) for pool in base.pools())

    def candidate_pools(self, target: Estimated) -> tuple[PoolModel, ...]:
        """An estimated candidate's pools as the estimate saw them."""
        candidate = target.candidate
        return tuple(
            self._pool_model(pool, candidate.speculative, target.kv_host_gb)
            for pool in parse_layout(candidate.layout)
        )

    def deployment(self, target: Estimated) -> DeploymentSpec:
        """An estimated candidate as the deployment its search simulates."""
        candidate = target.candidate
        return self.base.model_copy(
            update={
                "layout": candidate.layout,
                "gpus": candidate.gpus,
                "speculative": self.speculative.get(candidate.speculative),
                "kv_host_gb": target.kv_host_gb,
            }
        )
