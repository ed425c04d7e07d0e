"""The automaton a DFST implements, read off its lockstep graph, and Moore minimisation.

Nodes are the DFST's (clustered) hidden states met in step with the expert; each edge carries the
DFST's own argmax readouts (write, move). A halting move goes to the final state `halt`; where the
expert halts and the DFST moves on, the edge goes to a rule-less state `lost` (a run stops there).
Minimisation refines the partition of nodes by (symbol, write, move, class of successor) until
stable: the classic Moore algorithm on a partial Mealy machine.
"""

from __future__ import annotations

from dfst.automata import FINAL_STATE, HALT_MOVE, MOVES, Rule, Transducer, make_transducer
from dfst.certify.lockstep import HALT, Graph

FINAL, LOST = FINAL_STATE, "lost"


def minimal_classes(graph: Graph) -> list[int]:
    """A class per node: equal classes have equal outputs and equivalent successors on every symbol."""
    by_node: dict[int, list[int]] = {}
    for (n, x) in sorted(graph.edges):
        by_node.setdefault(n, []).append(x)

    def signature(n: int, cls: list[int]) -> tuple:
        return tuple((x, *graph.outputs[(n, x)], _target_class(graph, n, x, cls)) for x in by_node.get(n, ()))

    classes = [0] * len(graph.nodes)
    while True:
        ids: dict[tuple, int] = {}
        new = [ids.setdefault((classes[n], signature(n, classes)), len(ids)) for n in range(len(graph.nodes))]
        if len(ids) == len(set(classes)):
            return new
        classes = new


def _target_class(graph: Graph, n: int, x: int, cls: list[int]) -> int | str:
    m = graph.edges[(n, x)]
    if m != HALT:
        return cls[m]
    return FINAL if MOVES[graph.outputs[(n, x)][1]] == HALT_MOVE else LOST


def graph_automaton(graph: Graph, alphabet: tuple[str, ...], blank: str,
                    name: str = "extracted") -> Transducer:
    """The minimised transducer of the graph; states s0 (initial), s1, ... in order of discovery."""
    classes = minimal_classes(graph)
    order: dict[int, str] = {}
    for c in classes:
        order.setdefault(c, f"s{len(order)}")
    rules: dict[tuple[str, str], Rule] = {}
    for (n, x) in sorted(graph.edges):
        write, move = graph.outputs[(n, x)]
        target = _target_class(graph, n, x, classes)
        nxt = target if isinstance(target, str) else order[target]
        if nxt == FINAL and MOVES[move] != HALT_MOVE:
            nxt = LOST
        state = order[classes[n]]
        rules[(state, alphabet[x])] = Rule(state, alphabet[x], nxt, alphabet[write],
                                                       MOVES[move])
    states = list(order.values()) + ([LOST] if any(r.next == LOST for r in rules.values()) else [])
    return make_transducer([*states, FINAL], alphabet, rules.values(), initial=order[classes[0]],
                           final=FINAL, blank=blank, name=name)
