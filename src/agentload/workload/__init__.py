"""What agents send: sessions of turns, from synthetic or recorded sources."""

from agentload.workload.model import Segment, Session, Turn, Workload

__all__ = ["Segment", "Session", "Turn", "Workload"]
