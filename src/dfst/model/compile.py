"""Exact compilation: a grid agent (Transducer) to DFST weights that implement it.

One-hot construction: state q_i is the basis vector e_i and symbol α_j the index j (the orders of
`agent.states` and `agent.alphabet`). For each rule δ(q_i, α_j) = (q_i', α_j', m_l):

    A[j, i', i] = 1        B[j, j', i] = 1        C[j, l, i] = 1        (everything else 0)

and h0 = e_{initial}. By induction h_t = e_{q_t} exactly at every step (products of 0/1 entries are
exact in float32), the symbol scores are e_{written} and the move scores e_{move}, so argmax recovers
the expert's action with margin 1. Where the agent has no rule, including every symbol in the final
state, the column is zero: the scores are all zero (argmax ties give symbol 0, move U) and h becomes
0, so a closed-loop run must stop on S, as the expert does.

The weights are dense: k·d·d + k·k·d + 5·k·d + d float32, 112 GiB for an agent of 10^5 states on 3
symbols. The size is checked against the memory bound before anything is allocated.
"""

from __future__ import annotations

import numpy as np
import torch

from dfst.automata import Transducer, param_count
from dfst.errors import DfstError
from dfst.io.limits import default_max_memory, human_bytes
from dfst.model import DFST, weight_shapes

# Peak memory of `dfst compile` over the dense size: the numpy arrays, the model's tensors and the
# checkpoint's serialisation (measured: +865 MiB RSS for 287 MiB of weights, k=3, d=5000).
COMPILE_COPIES = 3


def check_dense_size(agent: Transducer, max_memory: int | None = None) -> int:
    """The dense weights' size in bytes, or a one-line DfstError when building them would take more
    than `max_memory` (default: DFST_MAX_MEMORY, else half the machine's RAM)."""
    dense = 4 * param_count(agent.k, agent.d)  # float32
    bound = default_max_memory() if max_memory is None else max_memory
    if COMPILE_COPIES * dense > bound:
        raise DfstError(f"compiling {agent.name} (k={agent.k}, d={agent.d:,}) needs {human_bytes(dense)} of "
                        f"dense weights (k·d·d + k·k·d + 5·k·d + d float32), about "
                        f"{human_bytes(COMPILE_COPIES * dense)} to build and save, over the memory bound "
                        f"{human_bytes(bound)} (raise it with DFST_MAX_MEMORY)")
    return dense


def compile_agent(agent: Transducer, task: str | None = None, *, max_memory: int | None = None) -> DFST:
    """The DFST with k = agent.k, d = agent.d that reproduces `agent` exactly; its config names
    `task` (default: the agent's name, which is the task's for the experts). Refused with a DfstError
    when the dense weights would not fit in `max_memory` (`check_dense_size`)."""
    if not isinstance(agent, Transducer):
        raise TypeError(f"compile_agent needs a Transducer, got {type(agent).__name__}")
    check_dense_size(agent, max_memory)
    A, B, C, h0 = (np.zeros(shape, dtype=np.float32) for shape in weight_shapes(agent.k, agent.d).values())
    nxt, wrt, mov = agent.tables()  # (d, k) each, -1 where there is no rule
    state, symbol = np.nonzero(mov >= 0)  # one entry per rule
    A[symbol, nxt[state, symbol], state] = 1.0  # (k, d, d): column `state` of A[symbol] is e_next
    B[symbol, wrt[state, symbol], state] = 1.0  # (k, k, d): column `state` of B[symbol] is e_write
    C[symbol, mov[state, symbol], state] = 1.0  # (k, 5, d): column `state` of C[symbol] is e_move
    h0[agent.states.index(agent.initial)] = 1.0  # (d,)
    return DFST.from_weights(*(torch.from_numpy(w) for w in (A, B, C, h0)), task=task or agent.name)
