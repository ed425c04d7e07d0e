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


@pytest.fixture
def task_registry():
    """The test leaves dfst's task registry as it found it (the CLI, run in-process, registers tasks)."""
    from dfst.tasks import TASKS

    before = dict(TASKS)
    yield
    TASKS.clear()
    TASKS.update(before)
