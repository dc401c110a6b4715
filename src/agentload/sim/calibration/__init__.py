"""Calibration: a deployment's factors fitted to a measured run (pure: points in, factors out).

Contract: `measured` reads a measured results directory as the simulator needs it (probes,
windows, the agents' schedule); `fit` minimises the log errors of a model's predicted probes
against measured ones; `on_run` replays the run's own schedule on the named deployment and
fits the roofline's factors to it, with the facts a summary keeps.
"""
