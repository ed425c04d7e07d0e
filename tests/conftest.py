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


def _checkout_entries() -> set[str]:
    """What git sees in the checkout besides its tracked files (ignored paths excluded)."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    listed = subprocess.run(["git", "status", "--porcelain", "-z", "--untracked-files=all"], cwd=root,
                            capture_output=True, check=False)
    if listed.returncode != 0:  # not a git checkout (an sdist): nothing to compare
        return set()
    return {entry[3:].decode(errors="replace") for entry in listed.stdout.split(b"\0") if entry[:2] == b"??"}


def pytest_sessionstart(session):
    session.config._dfst_untracked = _checkout_entries()


def pytest_sessionfinish(session, exitstatus):
    """A test that writes into the checkout (a relative path from a fuzzed option, say) fails the run:
    such files once reached a commit."""
    if hasattr(session.config, "workerinput"):  # under pytest-xdist the controller checks once
        return
    new = _checkout_entries() - getattr(session.config, "_dfst_untracked", set())
    if new:
        session.exitstatus = 1
        print(f"\ntests wrote into the checkout: {sorted(new)[:10]}")
