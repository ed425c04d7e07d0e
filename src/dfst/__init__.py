"""dfst: exact learning of algorithms by gradient descent.

Grid agents (Turing machines on a 2D grid), their policy-trajectory observations (PTOs), and
Differentiable Finite-State Transducers (DFSTs) that learn them.
"""

__version__ = "0.1.0"
