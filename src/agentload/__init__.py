"""agentload: how many coding agents an LLM deployment serves, per GPU and per MW."""

__version__ = "0.1.0"
