"""The verdict of `certify` and its JSON form."""

from __future__ import annotations

from dataclasses import dataclass

from dfst.automata import MOVES, Transducer
from dfst.certify.lockstep import Disagreement, Graph
from dfst.certify.search import confirm, departing_instance, instance_reading
from dfst.grid.rollout import DfstWeights, first_disagreement, run_table
from dfst.tasks.base import Instance, Task


@dataclass
class Result:
    verdict: str  # CERTIFIED, COUNTEREXAMPLE or INCONCLUSIVE
    mode: str  # plain or rescaled: the engine's float mode the verdict is about
    seconds: float
    graph: Graph | None = None
    certificate: dict | None = None
    counterexample: dict | None = None
    diagnosis: dict | None = None
    max_digits: int | None = None  # bounded certificate: every instance of at most this many digits
    max_steps: int | None = None  # bounded certificate: every run of at most this many steps

    @property
    def certified(self) -> bool:
        return self.verdict == "CERTIFIED"

    def to_dict(self) -> dict:
        out = {"verdict": self.verdict, "mode": self.mode, "seconds": self.seconds}
        if self.graph is not None:
            out |= {"nodes": len(self.graph.nodes), "edges": len(self.graph.edges)}
        if self.certificate is not None:
            out["proof"] = self.certificate["kind"]
            out["all_lengths"] = self.max_digits is None
            if self.max_digits is not None:
                out |= {"max_digits": self.max_digits, "max_steps": self.max_steps}
            out["extracted_states"] = len(self.certificate["extracted"]["states"])
        for key in ("counterexample", "diagnosis"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


def counterexample_report(task: Task, agent: Transducer, weights: DfstWeights, found: Disagreement,
                          rescale: bool) -> dict | None:
    """A concrete instance on which the DFST's closed-loop run, from the task's own layout, parts from
    the expert's, with that departure as the run shows it (the symbols read up to it, the expert's
    state, both actions) and the closed-loop verdict; None when no instance searched shows one.

    The lockstep's shortest departure `found` is a symbol path: the expert may read it from no grid
    (a start no layout reaches), or, in a clustered exploration, reach it only from a representative
    hidden state. So it only suggests the first instance tried (one whose expert run reads it); the
    report is of a departure each instance is checked to show, never of the path itself."""
    for how, instance in _candidates(task, agent, weights, found, rescale):
        departure = instance_departure(task, agent, weights, instance, rescale)
        if departure is None:
            continue  # the path's departure does not show on a grid: not a counterexample
        run = confirm(task, weights, instance, rescale)
        return departure | {"instance": {"a": instance.a, "b": instance.b, "name": instance.name,
                                         "closed_loop_exact": run.exact, "verdict": run.verdict,
                                         "steps": run.steps, "effect": effect(run.verdict)},
                            "found_by": how}
    return None


def _candidates(task: Task, agent: Transducer, weights: DfstWeights, found: Disagreement, rescale: bool):
    """(how it was found, instance): the instance reading the shortest departing path, then the
    closed-loop search; each searched only when the one before did not show a departure."""
    instance = instance_reading(task, agent, found.path)
    if instance is not None:
        yield "its expert run reads the shortest departing symbol path", instance
    instance = departing_instance(task, agent, weights, rescale)
    if instance is not None:
        yield "the closed-loop search of small and hard instances", instance


def instance_departure(task: Task, agent: Transducer, weights: DfstWeights, instance: Instance,
                       rescale: bool) -> dict | None:
    """Where the DFST's closed-loop run on `instance` first parts from the expert's, or None. Fed the
    expert's reads, the engine runs as in closed loop up to the first differing action (the grids are
    the same until then), so this is the closed-loop run's own departure."""
    trace = run_table(agent, task.layout(instance), task.max_steps(instance), record=True).trace
    parted = first_disagreement(weights, trace, rescale)
    if parted is None:
        return None
    t, _, step = parted
    path = tuple(int(x) for x in trace[: t + 1, 0])
    expected = (int(trace[t, 1]), int(trace[t, 2]))
    got = (step.write, step.move)
    return departure_record(agent, Disagreement(path, _states_along(agent, path), expected,
                                                None if step.h is None and got == expected else got))


def departure_record(agent: Transducer, found: Disagreement) -> dict:
    """A departure in words: the symbols read from the start (run-length), the expert's state and
    both actions at the last of them (`got` None: h left float32's finite range)."""
    names = agent.alphabet
    return {"path": run_length([names[x] for x in found.path]), "steps": len(found.path),
            "expert_state": agent.states[found.states[-1]],
            "expected": {"write": names[found.expected[0]], "move": MOVES[found.expected[1]]},
            "got": None if found.got is None else {"write": names[found.got[0]], "move": MOVES[found.got[1]]}}


def _states_along(agent: Transducer, path: tuple[int, ...]) -> tuple[int, ...]:
    """The expert's state before each symbol of `path`, from its initial state."""
    nxt, _, _ = agent.tables()
    states, q = [], agent.states.index(agent.initial)
    for x in path:
        states.append(q)
        q = int(nxt[q, x])
    return tuple(states)


def effect(verdict: str) -> str:
    """What the departure from the expert does to the instance's answer, in words."""
    if verdict == "exact":
        return "only the policy differs: the answer comes out exact"
    if verdict == "wrong_answer":
        return "the answer comes out wrong"
    return f"no answer ({verdict})"


def run_length(symbols: list[str]) -> str:
    """'1 1 0 _ 1x1001 0': runs of three or more written once with a count."""
    out, i = [], 0
    while i < len(symbols):
        j = i
        while j < len(symbols) and symbols[j] == symbols[i]:
            j += 1
        out += [f"{symbols[i]}x{j - i}"] if j - i >= 3 else symbols[i:j]
        i = j
    return " ".join(out)
