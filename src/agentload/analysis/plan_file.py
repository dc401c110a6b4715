"""`plan.json`: a fleet plan saved beside the results it was sized on, for the HTML report.

`agentload plan DIR --save` writes it (atomically, owner-only, like every results file); the
report reads it with `read_plan` and shows it as a section. It is the plan's own file: the
measured files of the directory are never touched.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from pydantic import ValidationError

from agentload.analysis.plan import FleetPlan
from agentload.errors import InputError, first_problem
from agentload.files import write_json_atomic

PLAN_FILE = "plan.json"


def write_plan(directory: Path, plan: FleetPlan) -> Path:
    """Write the plan into a results directory; its path."""
    out = directory / PLAN_FILE
    write_json_atomic(out, orjson.loads(plan.model_dump_json()))
    return out


def read_plan(directory: Path) -> FleetPlan | None:
    """The plan saved in a results directory; None when there is none. A plan that does not
    read is a one-line `InputError` naming the file and the field."""
    path = directory / PLAN_FILE
    if not path.is_file():
        return None
    try:
        return FleetPlan.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", path=path) from None
    except ValidationError as exc:
        where, message = first_problem(exc)
        raise InputError(message.lower(), path=path, field=where) from None
