"""The `lockstep` method: the automaton a DFST implements along an agent's lockstep graph.

No PTOs are needed: from (q0, h0) the DFST is run closed loop, with the engine's own float32
arithmetic, on every symbol the agent (the task's expert by default) has a rule for, and its hidden
states are merged by direction within `tol` (`dfst.certify.lockstep`). The graph's edges carry the
DFST's own outputs, so the minimised transducer (`dfst.certify.automaton`, the reading a certificate
embeds) is what the weights do on every input the agent can meet.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dfst.automata import Transducer
from dfst.errors import DfstError
from dfst.extract.result import Extraction


def extract_lockstep(weights: Sequence[np.ndarray], traces: Sequence[np.ndarray], reference: Transducer, *,
                     rescale: bool = True, tol: float = 1e-3, max_nodes: int = 20000) -> Extraction:
    """The minimised automaton of the lockstep graph with `reference` (the traces are not used)."""
    from dfst.certify.automaton import graph_automaton
    from dfst.certify.lockstep import TooManyNodes, explore
    from dfst.grid.rollout import DfstWeights

    try:
        graph = explore(DfstWeights.of(*weights), reference, rescale=rescale, tol=tol, max_nodes=max_nodes,
                        stop=False)
    except TooManyNodes as exc:
        raise DfstError(f"extraction: {exc}") from None
    agent = graph_automaton(graph, reference.alphabet, reference.blank)
    return Extraction(agent, None, len(graph.nodes), len(agent.rules), "lockstep")
