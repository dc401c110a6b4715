"""The simulated engine: requests in, results out, on a virtual clock (no asyncio, no wall time).

Contract: `SimEngine(DeploymentConfig)` takes `SimRequest`s at virtual times and returns
`SimResult`s; it is deterministic (ties broken in submission order, the one random draw, the
accepted draft tokens, seeded). Inside: data-parallel ranks by role (`roles`: aggregated,
prefill, decode) each with its own scheduler and KV cache (`agentload.sim.cache`), routers over
a pool's ranks (`routing`), speculative decoding (`speculative`), and the power model
(`power`). Step times come in as step tables (`agentload.sim.steps`); nothing here reads a
file or knows a system, a model or a layout by name (`agentload.sim.setup` derives the
numbers).
"""
