"""Agents in a closed loop, the runner, ramp and rescale, the steady-state window, search."""
