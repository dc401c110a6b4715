"""The layout search over simulated deployments (`agentload simulate --choose-layout`): which
deployment of a GPU budget serves the most agents at each tier.

One entry, `choose.choose_layout(request.LayoutRequest) -> request.LayoutResult`, in five steps,
a module each: enumerate (`candidates`), prune (`prune`), estimate (`estimate`, pure
arithmetic over the simulator's step tables), search the promising few (`searches`, the real
simulated search of `agentload.run.execute`), rank (`rank`); `simulated` is the simulator as
the search sees it, a black box; `price` what a GPU-hour and an agent-hour cost. What it writes
is `layouts.json` (`agentload.results.layouts`); its tables and page are
`agentload.report.layouts`'s.
"""
