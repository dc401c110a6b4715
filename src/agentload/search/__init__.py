"""The search's planning (pure): where to probe next, when an answer is settled, and how sure it
is. Plans, beliefs about a tier's limit, health curves, the sequential test, priors, and what an
answer rests on. Executing a probe (agents, hosts, windows) is `agentload.run`'s."""
