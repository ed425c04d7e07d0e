"""The `rpni` and `edsm` methods: passive automaton learning (AALpy's RPNI, or its evidence-driven
state merging) from the PTOs alone.

The model is not used: these are the classical automaton learners that the RPNI and EDSM baselines
score. RPNI merges the first compatible pair of states in a fixed order; EDSM the pair whose
merge the most data agree with. A
PTO gives a Mealy machine's data (input: the symbol read; output: (written symbol, move)); RPNI
merges the states of the prefix-tree acceptor while the data allow it. The machine becomes a
`Transducer` whose every S rule enters the final state `halt`, as the automata schema requires.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dfst.automata import HALT_MOVE, MOVES, Rule, Transducer, make_transducer
from dfst.errors import DfstError
from dfst.extract.result import FINAL, Extraction


def extract_rpni(weights: Sequence[np.ndarray] | None, traces: Sequence[np.ndarray], reference: Transducer, *,
                 name: str = "rpni", learner: str = "rpni") -> Extraction:
    """The automaton RPNI (or EDSM) learns from the traces, over the reference agent's alphabet."""
    machine = learn_mealy(traces, learner)
    agent = mealy_to_transducer(machine, reference.alphabet, reference.blank, name)
    return Extraction(agent, None, len(machine.states), len(agent.rules), learner)


def extract_edsm(weights: Sequence[np.ndarray] | None, traces: Sequence[np.ndarray], reference: Transducer, *,
                 name: str = "edsm") -> Extraction:
    """The automaton EDSM learns from the traces (`extract_rpni` with the other learner)."""
    return extract_rpni(weights, traces, reference, name=name, learner="edsm")


LEARNERS = {"rpni": "run_RPNI", "edsm": "run_EDSM"}  # the passive learners: AALpy's functions


def learn_mealy(traces: Sequence[np.ndarray], learner: str = "rpni"):
    """AALpy's RPNI (GSM variant) or EDSM on the traces; Mealy data must be prefix-closed, so every
    prefix of every trace is one example labelled with the output of its last step."""
    import aalpy.learning_algs

    data = []
    for trace in traces:
        reads = tuple(int(x) for x in trace[:, 0])
        data += [(reads[: t + 1], (int(w), int(m))) for t, (w, m) in enumerate(trace[:, 1:])]
    run = getattr(aalpy.learning_algs, LEARNERS[learner])
    model = run(data, automaton_type="mealy", print_info=False)
    if model is None:  # only if the expert were not deterministic
        raise DfstError(f"{learner.upper()} found the PTOs non-deterministic")
    return model


def mealy_to_transducer(model, alphabet: tuple[str, ...], blank: str, name: str) -> Transducer:
    """The learned machine as a grid agent: states reachable from the initial one through non-halting
    rules, and every S rule into the final state."""
    names = {model.initial_state: "q0"}
    order, rules = [model.initial_state], []
    for state in order:  # breadth-first, so names follow discovery order
        for read, target in sorted(state.transitions.items()):
            out = state.output_fun.get(read)
            if out is None:
                continue
            write, move = alphabet[out[0]], MOVES[out[1]]
            if move == HALT_MOVE:
                nxt = FINAL
            else:
                if target not in names:
                    names[target] = f"q{len(names)}"
                    order.append(target)
                nxt = names[target]
            rules.append(Rule(names[state], alphabet[read], nxt, write, move))
    return make_transducer([*names.values(), FINAL], alphabet, rules, initial="q0", final=FINAL,
                           blank=blank, name=name)
