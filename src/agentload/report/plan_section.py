"""The HTML report's fleet-plan section: shown when the results directory holds a `plan.json`
(written by `agentload plan DIR --save`), in the same tables `agentload plan` prints."""

from __future__ import annotations

import html
from pathlib import Path

from agentload.analysis.plan_file import PLAN_FILE, read_plan
from agentload.analysis.plan_tables import plan_tables
from agentload.analysis.render import table_html
from agentload.errors import InputError


def plan_section(directory: Path) -> str:
    """The section's HTML, or "" when the directory holds no plan."""
    try:
        plan = read_plan(directory)
    except InputError as exc:
        return f"<h2>Fleet plan</h2><p>The saved plan does not read: {html.escape(str(exc))}</p>"
    if plan is None:
        return ""
    tables = "".join(f'<div class="wide">{table_html(t)}</div>' for t in plan_tables(plan))
    kind = html.escape(plan.deployment.provenance)
    return (
        "<h2>Fleet plan</h2>"
        f'<p class="source">A fleet sized on this directory\'s {kind} tier '
        f"{html.escape(plan.deployment.tier)} by <code>agentload plan --save</code>; the figures "
        f"marked typed in are the planner's assumptions. Source: {html.escape(PLAN_FILE)}.</p>"
        f"{tables}"
    )
