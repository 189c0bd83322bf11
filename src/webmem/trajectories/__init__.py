"""Trajectories: successful runs' steps kept as references to follow, and as templates to replay.

``TrajectoryStore`` (``store``) saves, matches and prunes them; ``slots`` turns the values of a
goal that recur in its steps into slots, so that a goal worded like it can be replayed.
"""

from .plans import ReplayPlan
from .store import TrajectoryStore

__all__ = ["ReplayPlan", "TrajectoryStore"]
