"""The one base of agentload's value models: frozen (validated once, never changed) and strict
about unknown fields. A model that also holds non-pydantic values extends its `model_config`
with `arbitrary_types_allowed=True`; pydantic merges a subclass's config with this one.

`same_named` copies the fields a model repeats from an object that names them the same way,
so a model built from another says "the same figures" once."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """A frozen pydantic model that refuses fields it does not declare."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def same_named(source: object, names: Iterable[str]) -> dict[str, Any]:
    """`source`'s attributes `names`, keyed by name (keywords for a model that repeats them)."""
    return {name: getattr(source, name) for name in names}
