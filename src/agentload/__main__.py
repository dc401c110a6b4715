"""`python -m agentload`."""

from agentload.cli import main

raise SystemExit(main())
