"""Run independent cells of work (one task, seed and set of options each) one after another, or as
tasks on Ray: a local Ray that dfst starts on this machine, or an existing cluster.

`run_cells(fn, cells, executor=...)` calls the top-level function `fn` on each cell and returns one
`Outcome` per cell, in the cells' order. A cell that raises is tried once more; if it fails again its
outcome holds the error as one line and the other cells go on (nothing aborts the lot). `on_update`
hears (done, running, failed, total) after every change, for a progress bar.

A Ray that dfst starts itself is bound to the loopback interface: its node IP is 127.0.0.1, so the
GCS, the raylets, the object manager, the workers and the runtime-env agent listen on 127.0.0.1 and
on no other address of the machine (Ray otherwise advertises the machine's first address and binds
its gRPC servers to every interface). `ray` is the optional extra `dfst[ray]`.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dfst.errors import DfstError
from dfst.io.limits import check_work

EXECUTORS = ("serial", "ray")
RAY_EXTRA = "pip install 'dfst[ray]'"
LOCAL_OBJECT_STORE = 256 * 1024**2  # bytes: cells return small JSON, not tensors


@dataclass(frozen=True)
class Outcome:
    """What one cell gave: its value, or the error of its last attempt (one line)."""

    value: Any = None
    error: str | None = None
    attempts: int = 1


Update = Callable[[int, int, int, int], None]  # (done, running, failed, total)


def ray_available() -> bool:
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


def choose_executor(executor: str, say: Callable[[str], None]) -> str:
    """`executor` if it can run here; "ray" without Ray installed falls back to "serial", said."""
    if executor not in EXECUTORS:
        raise DfstError(f"unknown executor {executor!r} (known: {', '.join(EXECUTORS)})")
    if executor == "ray" and not ray_available():
        say(f"Ray is not installed ({RAY_EXTRA}): running the cells one after another here")
        return "serial"
    return executor


def check_workers(workers: int | None, *, local: bool = True) -> int | None:
    """`--workers` (None: the default), refused below 1, and above the workers cap when they are
    processes of this machine (`local`; dfst.io.limits.WORK_CAPS: 4 per CPU, DFST_MAX_WORKERS), before
    any process starts."""
    if workers is not None and workers < 1:
        raise DfstError(f"--workers must be >= 1, got {workers}")
    if workers is not None and local:
        check_work("workers", workers, f"--workers {workers}")
    return workers


def run_cells(fn: Callable[[Any], Any], cells: Sequence[Any], *, executor: str = "serial",
              address: str | None = None, workers: int | None = None, retries: int = 1,
              on_update: Update | None = None) -> list[Outcome]:
    """`fn(cell)` for every cell (see the module doc); `address` is an existing Ray cluster's
    ("auto", "ray://host:10001"), None to start a local Ray with `workers` CPUs (default: all)."""
    check_workers(workers, local=address is None)  # a cluster's CPUs are its own
    if not cells:
        return []
    run = _run_on_ray if executor == "ray" else _run_serially
    return run(fn, list(cells), address=address, workers=workers, retries=retries,
               on_update=on_update or (lambda *counts: None))


def _run_serially(fn, cells, *, address, workers, retries, on_update) -> list[Outcome]:
    outcomes, failed = [], 0
    for i, cell in enumerate(cells):
        on_update(i, 1, failed, len(cells))
        for attempt in range(1, retries + 2):
            try:
                outcome = Outcome(fn(cell), None, attempt)
                break
            except Exception as exc:  # a cell's failure is reported, never the sweep's end
                outcome = Outcome(None, error_line(exc), attempt)
        failed += outcome.error is not None
        outcomes.append(outcome)
    on_update(len(cells), 0, failed, len(cells))
    return outcomes


def _run_on_ray(fn, cells, *, address, workers, retries, on_update) -> list[Outcome]:
    ray = start_ray(address, workers)
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(fn)
        slots = max(1, int(ray.cluster_resources().get("CPU", 1)))
        queue = [(i, 1) for i in range(len(cells))]
        pending: dict[Any, tuple[int, int]] = {}
        outcomes: dict[int, Outcome] = {}
        while queue or pending:
            while queue and len(pending) < slots:  # no more in flight than CPUs: "running" is true
                i, attempt = queue.pop(0)
                pending[task.remote(cells[i])] = (i, attempt)
            failed = sum(o.error is not None for o in outcomes.values())
            on_update(len(outcomes), len(pending), failed, len(cells))
            [ref], _ = ray.wait(list(pending), num_returns=1)
            i, attempt = pending.pop(ref)
            try:
                outcomes[i] = Outcome(ray.get(ref), None, attempt)
            except Exception as exc:
                if attempt <= retries:
                    queue.insert(0, (i, attempt + 1))
                else:
                    outcomes[i] = Outcome(None, error_line(getattr(exc, "cause", None) or exc), attempt)
        on_update(len(cells), 0, sum(o.error is not None for o in outcomes.values()), len(cells))
        return [outcomes[i] for i in range(len(cells))]
    finally:
        ray.shutdown()


def start_ray(address: str | None, workers: int | None):
    """The `ray` module, connected: to `address`, or to a new local Ray bound to 127.0.0.1."""
    if address is None:
        # before Ray is imported (its constants read the environment) and for the processes it starts
        os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    import ray
    from ray._private import ray_constants

    if ray.is_initialized():
        raise DfstError("Ray is already running in this process; dfst starts and stops its own connection")
    try:
        if address is None:
            ray_constants.ENABLE_RAY_CLUSTER = False  # node IP = loopback, even if ray was imported before
            # workers at the driver's priority: Ray nices them to 15, and a cell then waits behind
            # every other job of the machine (importing torch took 12 s instead of 1.6 here)
            ray.init(num_cpus=workers or os.cpu_count(), include_dashboard=False, log_to_driver=False,
                     configure_logging=False, object_store_memory=LOCAL_OBJECT_STORE,
                     _system_config={"worker_niceness": 0})
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    except Exception as exc:
        raise DfstError(f"cannot start Ray{'' if address is None else f' at {address}'}: "
                        f"{error_line(exc)}") from None
    return ray


def error_line(exc: BaseException) -> str:
    """One line naming what went wrong: a DfstError's message, else the exception's type and message
    (its last frame too, for a bug's report)."""
    if isinstance(exc, DfstError):
        return str(exc).splitlines()[0] if str(exc) else "error"
    text = " ".join(str(exc).split()) or "(no message)"
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}: {text[:300]}{where}"
