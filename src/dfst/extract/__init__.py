"""Reading a finite automaton off a model: one entry point, the methods as plug-ins.

    extract(model, ptos, method="merge") -> Extraction(agent, radius, clusters, pairs, method)

`model` is a `dfst.model.DFST`, a `dfst.grid.rollout.DfstWeights` or the arrays (A, B, C, h0); `ptos`
a `dfst.data.PtoDataset` or a list of (T, 3) arrays of (read, write, move). The methods:

  merge     (default) the teacher-forced states on the PTOs, clustered, folded and merged
            nearest-first; the fewest states over a ladder of radii. `dfst train` saves it as
            RUN/extracted, and `dfst extract RUN` gives the same automaton.
  cluster   the same states clustered at the largest conflict-free radius, never merged.
  lockstep  the DFST run closed loop in step with an agent (the task's expert), minimised; no PTOs.
  rpni      RPNI on the PTOs alone, the model unused: the classical learner of the RPNI baseline.
  edsm      the same with evidence-driven state merging (the EDSM baseline's learner).

A method is a function (weights or None, traces, reference agent, **options) -> Extraction, where
the reference agent gives the alphabet and blank (and, for lockstep, the rules to follow);
`register_method` adds one. A method that finds no automaton raises DfstError.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from dfst.automata import Transducer
from dfst.errors import DfstError
from dfst.extract.cluster import extract_clustered
from dfst.extract.lockstep import extract_lockstep
from dfst.extract.merge import extract_merged
from dfst.extract.result import Extraction
from dfst.extract.rpni import extract_edsm, extract_rpni

Method = Callable[..., Extraction]
METHODS: dict[str, Method] = {"merge": extract_merged, "cluster": extract_clustered,
                              "lockstep": extract_lockstep, "rpni": extract_rpni, "edsm": extract_edsm}
NEEDS_MODEL = {"merge", "cluster", "lockstep"}
NEEDS_PTOS = {"merge", "cluster", "rpni", "edsm"}
DEFAULT_METHOD = "merge"
__all__ = ["DEFAULT_METHOD", "METHODS", "Extraction", "extract", "register_method"]


def register_method(name: str, method: Method, *, needs_model: bool = True, needs_ptos: bool = True) -> None:
    """Add an extraction method under `name` (replacing none: names are unique)."""
    if name in METHODS:
        raise DfstError(f"extraction method {name!r} exists already")
    METHODS[name] = method
    if needs_model:
        NEEDS_MODEL.add(name)
    if needs_ptos:
        NEEDS_PTOS.add(name)


def extract(model, ptos=None, method: str = DEFAULT_METHOD, *, task: str | None = None,
            agent: Transducer | None = None, **options) -> Extraction:
    """The automaton `method` reads off `model` (and/or the PTOs); see the module docstring.

    The reference agent is `agent`, else the expert of `task`, of the model's task or of the
    dataset's task."""
    if method not in METHODS:
        raise DfstError(f"unknown extraction method {method!r} (known: {', '.join(METHODS)})")
    weights = None if model is None else _weights(model)
    traces = _traces(ptos)
    if method in NEEDS_MODEL and weights is None:
        raise DfstError(f"extraction method {method!r} reads a model: none was given")
    if method in NEEDS_PTOS and not traces:
        raise DfstError(f"extraction method {method!r} reads PTOs: none were given")
    reference = agent or _expert(task or getattr(getattr(model, "config", None), "task", None)
                                 or getattr(ptos, "task", None))
    if weights is not None and weights[0].shape[0] != reference.k:
        raise DfstError(f"the model reads k={weights[0].shape[0]} symbols, the agent {reference.k}")
    return METHODS[method](weights, traces, reference, **options)


def _weights(model) -> tuple[np.ndarray, ...]:
    """(A, B, C, h0) as float32 arrays, from a DFST, DfstWeights or the arrays themselves."""
    if hasattr(model, "numpy_weights"):
        return model.numpy_weights()
    if all(hasattr(model, name) for name in ("A", "B", "C", "h0")):
        return tuple(np.asarray(getattr(model, name)) for name in ("A", "B", "C", "h0"))
    return tuple(np.asarray(w) for w in model)


def _traces(ptos) -> Sequence[np.ndarray]:
    if ptos is None:
        return []
    if hasattr(ptos, "trace") and hasattr(ptos, "samples"):
        return [ptos.trace(i) for i in range(ptos.samples)]
    return list(ptos)


def _expert(task: str | None) -> Transducer:
    if task is None:
        raise DfstError("extraction needs a reference agent: pass agent= or task=")
    from dfst.tasks import get_task

    return get_task(task).agent
