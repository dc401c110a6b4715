"""The names of a results directory's files: the one place they are spelled."""

from __future__ import annotations

MANIFEST_FILE = "manifest.json"
RECORDS_FILE = "records.jsonl"
PROBES_FILE = "probes.jsonl"
POWER_FILE = "power.jsonl"
SERVER_METRICS_FILE = "server_metrics.jsonl"
SUMMARY_FILE = "summary.json"
REPORT_FILE = "report.html"
REFERENCES_FILE = "references.json"
"""The quality checks' references: where they came from and each reply (`agentload.quality`)."""
CHECKS_FILE = "checks.jsonl"
"""One check call a line, compared with its reference, appended as they finish."""
CONFIG_FILE = "config.toml"
"""The options the run was started with (`agentload.config_file`): `--config` runs it again."""
