"""The grid world: an unbounded 2D grid of symbols, a head, and agents that step on it."""

from dfst.grid.grid import Grid, Layout
from dfst.grid.world import Outcome, RunResult, run_agent

__all__ = ["Grid", "Layout", "Outcome", "RunResult", "run_agent"]
