"""Decode, cost, frontier and compare: the published arithmetic, as pure functions."""
