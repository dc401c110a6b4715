"""Quality under load: references, inline checks, and the gate on each tier's answer.

A *Reference* is the greedy reply (temperature 0, a fixed seed) to a check conversation,
recorded alone on a deployment (or taken from one the user trusts). A *Check* is the same
conversation sent again while the agents load the deployment, its reply compared with its
reference token by token. The gate judges each probe's window on its check calls; a tier's
answer is the most agents that meet its speed and pass the gate.

Pure: `binomial` (the interval), `tokens` (a reply's tokens and log-probabilities), `compare`
(a reply against its reference), `figures` (a window's check calls), `gate` (the verdict and the
tiers' verdicts under it), `words` (what the terminal and the report say), `conversations` and
`tasks` (what is checked). I/O at the edges: `call` (one greedy call), `record` (recording
references), `reference` (the references file), `settings` (the `--quality` file), `checker`
(the check calls in every probe's window).
"""
