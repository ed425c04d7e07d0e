"""Certified exactness of a DFST for every input length, counterexamples, and extraction.

`certify(weights, task, ...)` -> `Result` (CERTIFIED / COUNTEREXAMPLE / INCONCLUSIVE);
`check_certificate(cert, A, B, C, h0, agent)` re-verifies a saved certificate independently;
`extract_from_weights(weights, agent)` reads the (minimised) automaton the DFST implements.
"""

from dfst.certify.automaton import graph_automaton
from dfst.certify.check import check_certificate
from dfst.certify.core import certify
from dfst.certify.lockstep import TooManyNodes, explore
from dfst.certify.result import Result


def extract_from_weights(weights, agent, *, rescale: bool = True, tol: float = 1e-3, max_nodes: int = 20000):
    """The automaton the DFST implements along the expert's lockstep graph, minimised."""
    from dfst.errors import DfstError

    try:
        graph = explore(weights, agent, rescale=rescale, tol=tol, max_nodes=max_nodes, stop=False)
    except TooManyNodes as exc:
        raise DfstError(f"extraction: {exc}") from None
    return graph_automaton(graph, agent.alphabet, agent.blank)


__all__ = ["Result", "certify", "check_certificate", "extract_from_weights", "graph_automaton"]
