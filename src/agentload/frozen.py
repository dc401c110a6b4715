"""The one base of agentload's value models: frozen (validated once, never changed) and strict
about unknown fields. A model that also holds non-pydantic values extends its `model_config`
with `arbitrary_types_allowed=True`; pydantic merges a subclass's config with this one."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    """A frozen pydantic model that refuses fields it does not declare."""

    model_config = ConfigDict(frozen=True, extra="forbid")
