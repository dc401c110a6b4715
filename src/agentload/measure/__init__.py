"""Metrics (pure functions of records), power samplers, server-metrics scrapers."""
