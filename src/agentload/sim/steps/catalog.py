"""Which (system, backend, model, parallel layout) combinations aiconfigurator-core evaluates.

The candidates are the library's own support matrix (`systems/support_matrix/*.csv`, rows
that PASS in aggregated mode), crossed with the layouts `tp1..tp8` (expert parallelism equal
to tensor parallelism for MoE models). A combination is listed only if it really evaluates
here: the model compiles against the default perf data and a decode step, a mixed step and a
chunk's attention all answer (some raise `PerfDataNotAvailableError` although the matrix says
PASS).

The list is computed once and shipped (`data/aic_combinations.json`, with the library version
it was computed with): probing every candidate takes about half an hour on one core, and the
answer depends only on the library version. `catalog_for(version)` says whether the shipped
list matches the installed library; regenerate it with

    python -m agentload.sim.steps.catalog [--out FILE] [--systems h200_sxm,gb300]
    python -m agentload.sim.steps.catalog --merge h200.json gb300.json ... --out FILE

Attention-data-parallel layouts (`tp1,dp8,ep8`, how DeepSeek-class MoEs are usually served)
are not probed here (too many); `probe(..., dp=8)` checks one on demand. Whether the weights
fit the GPUs is a separate question (`agentload.sim.setup.build`).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import time
from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path

from pydantic import Field

from agentload.errors import InputError
from agentload.frozen import Frozen
from agentload.sim.specs.parallel import Layout
from agentload.sim.steps.aic import AicSource, aic_version, library_notes

LAYOUTS = (1, 2, 4, 8)
"""Tensor-parallel sizes probed (expert parallelism = tensor parallelism for MoE models: the
library requires moe_tp * moe_ep = tp, and wide expert parallelism is how MoEs are served)."""
RACK_LAYOUTS = (16, 32)
"""Also probed on rack-scale NVLink systems (GB200/GB300 NVL72)."""
RACK_SYSTEMS = frozenset({"gb200", "gb300"})
PASSING = ("PASS", "HYBRID_PASS")
CATALOG = "aic_combinations.json"
_SIZE = re.compile(r"(tp|ep|dp)(\d+)")


class Combination(Frozen):
    """One evaluable deployment shape."""

    system: str
    backend: str
    backend_version: str | None
    model: str
    tp: int = Field(ge=1)
    ep: int = Field(ge=1)
    dp: int = Field(default=1, ge=1)

    @property
    def parallel(self) -> str:
        return Layout(tp=self.tp, ep=self.ep, dp=self.dp).spec


class Catalog(Frozen):
    """The combinations that evaluate with one library version."""

    aiconfigurator_core: str
    systems: tuple[str, ...]
    """Systems probed (the library knows others; regenerate to add them)."""
    layouts: tuple[int, ...]
    probed: int
    """Candidates tried (combinations that failed are not listed)."""
    seconds: float
    combinations: tuple[Combination, ...]


def candidates(systems: Iterable[str] | None = None) -> list[tuple[str, str, str]]:
    """(model, system, backend) triples the library's support matrix says pass."""
    try:
        import aiconfigurator_core
    except ImportError as exc:
        raise InputError(f"aiconfigurator-core is not installed: {exc}") from exc
    folder = Path(aiconfigurator_core.__file__).parent / "systems" / "support_matrix"
    wanted = set(systems) if systems is not None else None
    seen: set[tuple[str, str, str]] = set()
    for path in sorted(folder.glob("*.csv")):
        with path.open(newline="") as f:
            for row in csv.DictReader(f):
                if row.get("Mode") != "agg" or row.get("Status") not in PASSING:
                    continue
                if wanted is not None and row["System"] not in wanted:
                    continue
                seen.add((row["HuggingFaceID"], row["System"], row["Backend"]))
    return sorted(seen)


def probe(
    model: str, system: str, backend: str, tp: int, ep: int, dp: int = 1
) -> Combination | str:
    """The combination if it evaluates, else why not (one line)."""
    try:
        source = AicSource(model, system, backend, tp=tp, ep=ep, dp=dp)
        with library_notes(source.notes):
            source.chunk_attention(256, 4096.0)
            source.decode_attention(8, 4096.0)
    except InputError as exc:
        return str(exc).splitlines()[0]
    except Exception as exc:  # the library raises many kinds; any is "does not evaluate"
        return f"{type(exc).__name__}: {exc}".splitlines()[0]
    return Combination(
        system=system,
        backend=backend,
        backend_version=source.backend_version,
        model=model,
        tp=tp,
        ep=ep,
        dp=dp,
    )


def _is_moe(model: str) -> bool:
    from agentload.sim.specs.model import model_shape

    try:
        return model_shape(model).experts > 0
    except Exception:  # a config this reader does not understand: probe it as dense
        return False


def build_catalog(
    systems: Iterable[str] | None = None,
    layouts: tuple[int, ...] = LAYOUTS,
    progress: Callable[[str], None] | None = None,
) -> Catalog:
    """Probe every candidate at every layout (slow: see the module docstring)."""
    version = aic_version()
    if version is None:
        raise InputError("aiconfigurator-core is not installed")
    start = time.perf_counter()
    found: list[Combination] = []
    probed = 0
    todo = candidates(systems)
    for model, system, backend in todo:
        moe = _is_moe(model)
        sizes = layouts + RACK_LAYOUTS if system in RACK_SYSTEMS else layouts
        for tp in sizes:
            probed += 1
            began = time.perf_counter()
            outcome = probe(model, system, backend, tp, tp if moe else 1)
            if isinstance(outcome, Combination):
                found.append(outcome)
            if progress is not None:
                ok = "ok" if isinstance(outcome, Combination) else outcome[:100]
                took = time.perf_counter() - began
                progress(f"{system} {backend} {model} tp{tp} ({took:.1f} s): {ok}")
    return Catalog(
        aiconfigurator_core=version,
        systems=tuple(sorted({system for _, system, _ in todo})),
        layouts=layouts,
        probed=probed,
        seconds=round(time.perf_counter() - start, 1),
        combinations=tuple(found),
    )


def merge(catalogs: Iterable[Catalog]) -> Catalog:
    """One catalog from several (e.g. one per system, probed in separate processes)."""
    parts = list(catalogs)
    versions = {part.aiconfigurator_core for part in parts}
    if len(versions) != 1:
        raise InputError(f"catalogs from different library versions: {sorted(versions)}")
    return Catalog(
        aiconfigurator_core=versions.pop(),
        systems=tuple(sorted({s for part in parts for s in part.systems})),
        layouts=parts[0].layouts,
        probed=sum(part.probed for part in parts),
        seconds=round(sum(part.seconds for part in parts), 1),
        combinations=tuple(c for part in parts for c in part.combinations),
    )


def shipped_catalog() -> Catalog:
    """The list shipped with agentload (see `Catalog.aiconfigurator_core` for its version)."""
    path = resources.files("agentload.sim") / "data" / CATALOG
    return from_json(path.read_text())


def catalog_for(version: str | None = None) -> tuple[Catalog, bool]:
    """The shipped catalog and whether it was computed with `version` (default: the installed
    aiconfigurator-core); a stale one is still a good guide, but say so."""
    catalog = shipped_catalog()
    wanted = version if version is not None else aic_version()
    return catalog, catalog.aiconfigurator_core == wanted


def to_json(catalog: Catalog) -> str:
    """The catalog as JSON, one (system, backend, version, model) a line with the layouts that
    evaluate (`tp8,ep8`...): small, and small diffs when regenerated."""
    data = catalog.model_dump(mode="json", exclude={"combinations"})
    groups: dict[tuple[str, str, str | None, str], list[str]] = {}
    for combo in catalog.combinations:
        key = (combo.system, combo.backend, combo.backend_version, combo.model)
        groups.setdefault(key, []).append(combo.parallel)
    rows = [
        json.dumps([system, backend, version, model, layouts], separators=(",", ":"))
        for (system, backend, version, model), layouts in groups.items()
    ]
    head = json.dumps(data)[:-1]
    lines = ",\n  ".join(rows)
    return f'{head}, "groups": [\n  {lines}\n]}}\n'


def from_json(text: str) -> Catalog:
    """A catalog written by `to_json`."""
    data = json.loads(text)
    combinations = []
    for system, backend, version, model, layouts in data.pop("groups"):
        for spec in layouts:
            sizes = dict(_SIZE.findall(spec))
            combinations.append(
                Combination(
                    system=system,
                    backend=backend,
                    backend_version=version,
                    model=model,
                    tp=int(sizes.get("tp", 1)),
                    ep=int(sizes.get("ep", 1)),
                    dp=int(sizes.get("dp", 1)),
                )
            )
    return Catalog(**data, combinations=tuple(combinations))


def _read(path: Path) -> Catalog:
    text = path.read_text()
    return from_json(text) if '"groups"' in text else Catalog.model_validate_json(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Probe aiconfigurator-core combinations.")
    parser.add_argument("--out", type=Path, default=None, help="write here (default: stdout)")
    parser.add_argument("--systems", default=None, help="comma-separated systems (default all)")
    parser.add_argument("--merge", nargs="+", type=Path, help="merge these catalog files instead")
    args = parser.parse_args(argv)
    if args.merge:
        catalog = merge(_read(path) for path in args.merge)
    else:
        systems = args.systems.split(",") if args.systems else None
        catalog = build_catalog(systems, progress=lambda line: print(line, file=sys.stderr))
    text = to_json(catalog)
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
