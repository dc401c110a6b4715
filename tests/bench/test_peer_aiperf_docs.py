"""The AIPerf peer figures in docs/engines.md are the committed runs' own: each run's answer,
wall time and client CPU as `bench/peer_aiperf.py` wrote them to its `peer.json`."""

from __future__ import annotations

import json
import re

from tests.paths import REPO

PEER = REPO / "bench" / "data" / "peer-aiperf"


def test_each_peer_run_is_in_the_docs_table_as_measured() -> None:
    docs = (REPO / "docs" / "engines.md").read_text()
    runs = sorted(PEER.glob("*/peer.json"))
    assert len(runs) >= 3
    for path in runs:
        for run in json.loads(path.read_text())["runs"]:
            answer = "none" if run["answer"] is None else str(run["answer"])
            cells = (
                rf"\| {run['tool'].replace('aiperf', 'AIPerf')} \| {answer}\b[^|]*\| \d+ \| "
                rf"{run['wall_s'] / 60:.1f} \| {run['client_cpu_s']:.0f} \|"
            )
            assert re.search(cells, docs), f"{path.parent.name} {run['tool']}: {cells}"
