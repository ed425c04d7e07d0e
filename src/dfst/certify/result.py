"""The verdict of `certify` and its JSON form."""

from __future__ import annotations

from dataclasses import dataclass

from dfst.automata import MOVES, Transducer
from dfst.certify.lockstep import Disagreement, Graph
from dfst.certify.search import confirm, departing_instance, instance_reading
from dfst.grid.rollout import DfstWeights
from dfst.tasks.base import Task


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
                          rescale: bool) -> dict:
    """The shortest disagreeing symbol path, and a small instance reaching it, run closed loop."""
    names = agent.alphabet
    report = {"path": run_length([names[x] for x in found.path]), "steps": len(found.path),
              "expert_state": agent.states[found.states[-1]],
              "expected": {"write": names[found.expected[0]], "move": MOVES[found.expected[1]]},
              "got": None if found.got is None else {"write": names[found.got[0]],
                                                      "move": MOVES[found.got[1]]},
              "instance": None}
    instance = instance_reading(task, agent, found.path)
    report["instance_reaches_path"] = instance is not None
    instance = instance or departing_instance(task, agent, weights, rescale)
    if instance is not None:
        run = confirm(task, weights, instance, rescale)
        report["instance"] = {"a": instance.a, "b": instance.b, "name": instance.name,
                              "closed_loop_exact": run.exact, "verdict": run.verdict, "steps": run.steps,
                              "effect": effect(run.verdict)}
    return report


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
