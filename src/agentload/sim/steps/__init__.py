"""Step times: how long a rank's step takes, from any source, as one table.

Contract: every source ends as a `table.StepTable` (decode steps, mixed steps, and decode
runs jumped over in closed form), the only step-time interface the engine's hot loop uses.
Sources: aiconfigurator-core's measured operators (`aic`, kept on disk by `store`, its
coverage in `catalog`), expert parallelism wider than its data from the data's trend (`ep`),
and a roofline from public specs (`roofline`) with factors fitted per system on published
figures and the error band that follows (`systems`).
"""
