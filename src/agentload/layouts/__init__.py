"""The layout search over simulated deployments (`agentload simulate --choose-layout`): which
deployment of a GPU budget serves the most agents at each tier. One entry,
`choose.choose_layout`; one module a step (its docstring says which)."""
