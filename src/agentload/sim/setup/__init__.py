"""From names to an engine: what a user names (system, backend, model, GPUs, serving layout,
options) becomes the numbers the engine runs (`DeploymentConfig`).

Contract: `serving` parses and checks the serving layout (pools of engine instances, each a
parallel layout); `build` derives each pool's ranks, KV memory, step times, power and notes,
and says how far its step times can be trusted; `listing` shows the step-time catalog's rows on
their hardware. An impossible deployment is one line (`InputError`); nothing here runs the
engine.
"""
