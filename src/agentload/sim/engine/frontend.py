"""The API server in front of the engine: a cost per request before it reaches the scheduler.

An OpenAI-compatible server applies the chat template and tokenises the whole prompt (not only
its uncached part) before the engine's scheduler sees the request. `FrontendCost` is that time:
a fixed part per request plus a part per prompt token. In the simulation it delays a request's
arrival at the scheduler, so it is in every time to first token, and it does not occupy the
engine: a GPU deployment's API server runs on host cores beside the GPUs. (On a CPU engine
that shares its cores with the server, the server's work also slows the engine's steps; that
part stays in the step factors.) Zero by default: the step-time data (aiconfigurator-core's
operator data, the published figures the systems are calibrated on) carries no such term; a
calibration on a measured run fits it (`agentload.sim.calibration.on_run`).
"""

from __future__ import annotations

from pydantic import Field

from agentload.frozen import Frozen


class FrontendCost(Frozen):
    """Seconds the API server spends on a request before the scheduler sees it."""

    request_s: float = Field(default=0.0, ge=0)
    """Fixed per request (parsing, the chat template, the hand-off to the engine)."""
    prompt_token_s: float = Field(default=0.0, ge=0)
    """Per prompt token (tokenising the whole prompt)."""

    def delay(self, prompt_tokens: int) -> float:
        """The seconds a request of `prompt_tokens` spends in the server before scheduling."""
        return self.request_s + self.prompt_token_s * prompt_tokens

    @property
    def zero(self) -> bool:
        return self.request_s == 0 and self.prompt_token_s == 0
