"""Checks of a deployment before a costly run: `agentload doctor`, and the preflight of `run`
and `search`."""
