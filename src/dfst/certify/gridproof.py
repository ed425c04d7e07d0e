"""Are a DFST's departures from the expert unreachable on the grid? Each abstraction of
`gridreach` (and `gridjoin`'s joined one) is tried in turn, cheap ones first, until one proves every
departure unreachable for every instance of every length, or all pass their budgets (docs/certify.md).
"""

from __future__ import annotations

from dfst.automata import Transducer
from dfst.certify.gridjoin import MODE, TooManySkeletons, reach_joined
from dfst.certify.gridreach import MAX_LEN, Reach, TooManyConfigs, initial_configs, reach
from dfst.certify.lockstep import Graph, TooManyNodes, explore

# (stack cap, mode) tried in turn until one proves every departure unreachable: cheap ones first
# (`gridjoin.py`'s joined abstraction keeps the rows of a column together: after the coarse ones, which
# keep their certificates)
ABSTRACTIONS = (*((cap, "coarse") for cap in (2, 4, 6)), (8, "joined"),
                *((cap, "shape") for cap in (4, 6, 8)), *((cap, "exact") for cap in (2, 4, 6)))


def prove_unreachable(weights, agent: Transducer, task, rescale: bool,
                      max_nodes: int = 20000) -> tuple[Graph, Reach] | str:
    """(the exact lockstep graph with its departures, a Reach proving none reachable on a grid), or
    why not, in words."""
    try:
        graph = explore(weights, agent, rescale=rescale, stop=False, max_nodes=max_nodes)
    except TooManyNodes:
        return f"the lockstep graph past its departures has more than {max_nodes:,} nodes"
    if not graph.exact:
        return "the lockstep graph past its departures is not exact (float32 vectors do not recur)"
    initial, stable = initial_configs(task, MAX_LEN)
    if not stable:
        return f"the layouts' abstraction still changes at {MAX_LEN - 1}-{MAX_LEN} digits"
    found, budget = None, []
    for cap, mode in ABSTRACTIONS:
        try:
            attempt = _attempt(graph, agent, initial, cap, mode)
        except (TooManyConfigs, TooManySkeletons) as exc:
            budget.append(f"{mode}, cap {cap}: {exc}")
            continue
        if attempt.departure is None:
            return graph, attempt
        found = attempt
    if found is None:
        return "every grid abstraction passed its budget (" + "; ".join(budget) + ")"
    names = agent.alphabet
    over = f"; past their budgets: {'; '.join(budget)}" if budget else ""
    return (f"an abstract grid run ({found.mode}, stack cap {found.cap}) reaches a departure, node "
            f"{found.departure[0]} reading {names[found.departure[1]]}; the abstraction may be too "
            f"coarse (the run need not be a grid's){over}")


def _attempt(graph: Graph, agent: Transducer, initial, cap: int, mode: str) -> Reach:
    if mode == MODE:
        return reach_joined(graph, agent, initial, cap)
    return reach(graph, agent, initial, cap, mode)
