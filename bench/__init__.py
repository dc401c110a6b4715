"""Load-generator benchmarks: a fast mock server and agentload beside its peers (`run_all.py`)."""
