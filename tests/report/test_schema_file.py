"""The published JSON Schema of summary.json is the schema the code writes."""

from __future__ import annotations

import json

from agentload.results.summary import SUMMARY_SCHEMA_VERSION, Summary
from tests.paths import REPO

SCHEMA_FILE = REPO / "docs" / "summary.schema.json"


def test_the_committed_schema_matches_the_model() -> None:
    committed = json.loads(SCHEMA_FILE.read_text())
    assert committed == json.loads(json.dumps(Summary.model_json_schema())), (
        "summary.json's schema changed: regenerate docs/summary.schema.json, and bump "
        "SUMMARY_SCHEMA_VERSION if old readers would misread the new files"
    )
    assert committed["properties"]["schema_version"]["default"] == SUMMARY_SCHEMA_VERSION
