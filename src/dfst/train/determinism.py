"""Torch's thread count and deterministic algorithms, fixed for a block of work: what makes a fixed
seed reproduce a run bit for bit on the CPU (training, fine-tuning, the baselines that train)."""

from __future__ import annotations

from contextlib import contextmanager

import torch


@contextmanager
def deterministic(threads: int):
    """Fixed torch threads and deterministic algorithms for the duration; restored afterwards."""
    old = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(old[0])
        torch.use_deterministic_algorithms(old[1])
