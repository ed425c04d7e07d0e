"""Fixtures shared by the test files."""

from __future__ import annotations

import pytest


@pytest.fixture
def one_torch_thread():
    """One torch thread: tiny models on a shared, loaded 2-core machine run far faster than with two."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)
