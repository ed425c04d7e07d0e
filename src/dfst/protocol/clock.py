"""The clock a DFST's evaluation charges to its time budget: the time it would take alone.

Wall time is what a user waits, but a budget read off the wall stops a model's climb early whenever
other jobs share the cores (beside five other jobs, a mult10 seed that is robust at 1,000 digits
stopped at 100), so a table would depend on the machine's load, not on the weights. dfst's engine
runs a length's instances on one thread per core (`dfst.grid.rollout.rollout`), so the process's CPU
time spread over the cores is the wall time the evaluation takes on this machine when nothing else
runs, and it does not grow with the load. Models that run outside this process (`dfst score`'s
commands) or on their own thread pools keep the wall clock.
"""

from __future__ import annotations

import os
import time


def alone_seconds() -> float:
    """The process's CPU seconds over the machine's cores (a clock: only differences mean anything)."""
    return time.process_time() / (os.cpu_count() or 1)
