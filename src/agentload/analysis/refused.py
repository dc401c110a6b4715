"""An input an analysis verb refuses, as a structured reason: which input (`field`, named as the
verb's typed inputs name it, which is its option's destination), why (`Reason`), and the words
a person reads. The command turns it into one line naming the option (`--pue: a PUE is >= 1`);
a test asserts on the field and the reason, not on the sentence.
"""

from __future__ import annotations

from enum import StrEnum

from agentload.errors import AgentloadError


class Reason(StrEnum):
    """Why an input is refused."""

    CHANGES_NOTHING = "changes nothing"
    """Nothing shown depends on it (with the other inputs given)."""
    NEEDS = "needs another input"
    """It means something only with another input, which was not given."""
    CONFLICTS = "conflicts"
    """It contradicts another input given, or the results already say it."""
    OUT_OF_RANGE = "out of range"
    """Its value is not one the figure can take."""
    NOTHING_TO_SHOW = "nothing to show"
    """No input given makes a table."""
    NOT_IN_RESULTS = "not in the results"
    """The results lack what it asks for (a tier, an answer)."""


class Refused(AgentloadError):
    """An input refused: `field` (None when no one input is at fault), `reason`, `words`."""

    def __init__(self, field: str | None, reason: Reason, words: str) -> None:
        self.field = field
        self.reason = reason
        self.words = words
        super().__init__(words)
