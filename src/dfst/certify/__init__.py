"""Certified exactness of a DFST for every input length, counterexamples, and extraction.

`certify(weights, task, ...)` -> `Result` (CERTIFIED / COUNTEREXAMPLE / INCONCLUSIVE);
`check_certificate(cert, A, B, C, h0, agent)` re-verifies a saved certificate independently;
the automaton the DFST implements along the lockstep graph is `dfst.extract.extract(weights,
method="lockstep", agent=agent)`, built on `explore` and `graph_automaton` here.
"""

from dfst.certify.automaton import graph_automaton
from dfst.certify.check import check_certificate
from dfst.certify.core import certify
from dfst.certify.lockstep import TooManyNodes, explore
from dfst.certify.result import Result

__all__ = ["Result", "TooManyNodes", "certify", "check_certificate", "explore", "graph_automaton"]
