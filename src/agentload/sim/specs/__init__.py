"""What exists, from public sources: accelerators (`hardware`), the links between them
(`links`), models' shapes from their configs (`model`), how one engine instance spreads over
its GPUs (`parallel`), the work a step does to the hardware (`work`), and the KV working set of
an agent fleet (`kvset`).

Contract: pure data and pure functions of it; every figure names its source (the files under
`agentload/sim/data/`); an unknown system or model is one line (`InputError`).
"""
