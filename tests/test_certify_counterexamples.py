"""A certify COUNTEREXAMPLE is an instance some layout draws, whose closed-loop run shows the departure
reported; a departure at a start no layout reaches is never one.

The lockstep exploration lets the expert read any symbol it has a rule for, so its shortest departure
may sit on a symbol path no grid draws. Each counterexample here is re-run from the task's own layout by
a closed-loop stepper written here (the engine's step, the grid's cells and head), independent of how
certify found it.
"""

from __future__ import annotations

import dataclasses
import functools
from contextlib import contextmanager
from unittest import mock

from hypothesis import event, given, settings
from hypothesis import strategies as st

import dfst.certify.core as core
import dfst.certify.result as result_module
import dfst.certify.search as search
from dfst.automata import MOVE_DELTAS, MOVES, STOP, make_transducer
from dfst.certify import certify
from dfst.certify.search import reads, small_instances
from dfst.grid.rollout import DfstWeights, engine_step, rollout, run_table
from dfst.model.compile import compile_agent
from dfst.tasks import TASKS
from dfst.tasks.base import Instance
from test_certify_grid import remembering_agent

ADD2 = TASKS["add2"]


def weights_of(agent) -> DfstWeights:
    return DfstWeights.of(*compile_agent(agent).numpy_weights())


def rewired(agent, keys, **change):
    rules = dict(agent.rules)
    for key in keys:
        rules[key] = dataclasses.replace(rules[key], **change)
    return make_transducer(agent.states, agent.alphabet, rules.values(), initial=agent.initial,
                           final=agent.final, blank=agent.blank, name=agent.name)


@contextmanager
def cheap_search(pairs: int = 2000):
    """certify's instance searches cut to `pairs` small instances and hard ones of 8 digits (the full
    search runs hard instances of up to 256 digits step by step: seconds), and its grid proof made to
    fail (its abstractions pass their budgets on add10 only after tens of seconds): every departure,
    reachable or not, then goes to the instance search, whose findings are checked all the same."""
    small = functools.partial(search.departing_instance, limit=pairs, hard_lengths=(8,))
    with mock.patch.object(search, "MAX_PAIRS", pairs), \
            mock.patch.object(result_module, "departing_instance", small), \
            mock.patch.object(core, "prove_unreachable", lambda *args: "made to fail"):
        yield


def closed_loop_departure(task, weights: DfstWeights, instance: Instance, rescale: bool):
    """(symbols read, expert's (write, move), the DFST's or None if h left the finite range) at the
    first step where the DFST, run closed loop on its own copy of the layout, acts otherwise than the
    expert on its own run; None if it never does."""
    layout = task.layout(instance)
    expert = run_table(task.agent, layout, task.max_steps(instance), record=True).trace
    cells, (r, c), h = layout.cells.copy(), layout.head, weights.h0.copy()
    read = []
    for x, write, move in expert:
        assert cells[r, c] == x  # the same grid until the first departure
        read.append(int(x))
        step = engine_step(weights, h, int(x), rescale)
        if (step.write, step.move) != (write, move):
            return read, (int(write), int(move)), (step.write, step.move)
        if step.h is None and move != STOP:
            return read, (int(write), int(move)), None
        cells[r, c], h = step.write, step.h
        if move == STOP:
            return None
        r, c = r + MOVE_DELTAS[move][0], c + MOVE_DELTAS[move][1]
        if not (0 <= r < cells.shape[0] and 0 <= c < cells.shape[1]):
            return None
    return None


def assert_shown_by_its_instance(task, weights: DfstWeights, report: dict, rescale: bool = False):
    """The instance is one the task's layout draws (operands in its domain), and its closed-loop run
    departs exactly as reported, with the reported closed-loop verdict."""
    found = report["instance"]
    assert task.domain_problem(found["a"], found["b"]) is None
    instance = Instance(found["a"], found["b"])
    departure = closed_loop_departure(task, weights, instance, rescale)
    assert departure is not None, f"{found['a']}, {found['b']} shows no departure"
    read, expected, got = departure
    names = task.agent.alphabet
    assert report["path"] == result_module.run_length([names[x] for x in read])
    assert report["steps"] == len(read)
    assert report["expected"] == {"write": names[expected[0]], "move": MOVES[expected[1]]}
    assert report["got"] == (None if got is None else {"write": names[got[0]], "move": MOVES[got[1]]})
    [run] = rollout(task, [instance], weights=weights, rescale=rescale, workers=1)
    assert (found["verdict"], found["closed_loop_exact"]) == (run.verdict, run.exact)


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_every_counterexample_of_a_rewired_expert_is_a_departure_its_instance_shows(data):
    task = TASKS[data.draw(st.sampled_from(["add2", "add10"]))]
    key = data.draw(st.sampled_from(sorted(task.agent.rules)))
    rule = task.agent.rules[key]
    field = "write" if rule.move == "S" else data.draw(st.sampled_from(["write", "move", "next"]))
    choices = {"write": task.alphabet, "move": "UDLR", "next": task.agent.states[:-1]}[field]
    new = data.draw(st.sampled_from([c for c in choices if c != getattr(rule, field)]))
    weights = weights_of(rewired(task.agent, [key], **{field: new}))
    with cheap_search():
        result = certify(weights, task)
    if field == "write":  # the lockstep meets the rule, which now writes otherwise
        assert result.verdict != "CERTIFIED"
    event(result.verdict)
    if result.verdict == "COUNTEREXAMPLE":
        assert_shown_by_its_instance(task, weights, result.counterexample)


def test_the_departure_reported_is_the_instances_not_an_unreachable_shortest_one():
    """add2's remembering expert (departures only on symbol paths no grid draws, the shortest reading
    0 0 0 0 1) with a reachable slip further on (sum2 reading the blank moves right): the counterexample
    is the slip, on an instance that shows it, not the unreachable departure beside that instance."""
    agent = remembering_agent()
    slip = rewired(agent, [k for k in agent.rules if k[0].startswith("sum2") and k[1] == "_"], move="R")
    weights = weights_of(slip)
    with cheap_search():
        result = certify(weights, ADD2)
    assert result.verdict == "COUNTEREXAMPLE"
    report = result.counterexample
    assert report["expert_state"] == "sum2" and report["got"]["move"] == "R"
    assert_shown_by_its_instance(ADD2, weights, report)


def test_departures_only_at_starts_no_layout_reaches_are_never_a_counterexample(monkeypatch):
    """The remembering expert with its grid proof made to fail: no instance shows a departure, so
    INCONCLUSIVE with the reason; also when the instance search hands over an instance that shows none
    (as a clustered exploration's representative hidden state can lead it to)."""
    weights = weights_of(remembering_agent())
    for handed in (Instance("1", "1"), Instance("11", "101"), None):
        monkeypatch.setattr(result_module, "instance_reading", lambda *args, handed=handed: handed)
        with cheap_search(pairs=300):
            result = certify(weights, ADD2)
        assert result.verdict == "INCONCLUSIVE" and result.counterexample is None
        assert "a start no layout searched reaches" in result.diagnosis["reason"]
    assert result.diagnosis["departure"]["path"] == "0x4 1"  # no expert run on a grid starts so:
    path, names = ["0", "0", "0", "0", "1"], ADD2.agent.alphabet
    for instance in small_instances(ADD2, max_len=4):
        assert [names[x] for x in reads(ADD2, ADD2.agent, instance)[: len(path)]] != path
    assert closed_loop_departure(ADD2, weights, Instance("11", "101"), False) is None


def test_the_stepper_here_finds_the_departure_of_a_known_slip():
    """The check above can fail: (carry, 1) writing 1 departs on 1 + 11 at its fifth step."""
    weights = weights_of(rewired(ADD2.agent, [("carry", "1")], write="1"))
    read, expected, got = closed_loop_departure(ADD2, weights, Instance("1", "11"), False)
    names = ADD2.agent.alphabet
    assert len(read) == 5 and names[expected[0]] == "0" and names[got[0]] == "1"
    assert closed_loop_departure(ADD2, weights_of(ADD2.agent), Instance("1", "11"), False) is None
