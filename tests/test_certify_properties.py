"""Properties of certify and extract on random automata, checked against a product-automaton equivalence
written here (independent of dfst.certify); and a slowly drifting add2 whose predicted failure length
the closed-loop engine confirms within a factor of two."""

from __future__ import annotations

import dataclasses
from collections import deque
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from dfst.automata import Rule, make_transducer
from dfst.certify import certify, check_certificate, core
from dfst.certify.search import confirm
from dfst.extract import extract
from dfst.grid.rollout import DfstWeights
from dfst.model.compile import compile_agent
from dfst.tasks import TASKS, Instance

ADD2 = TASKS["add2"]
FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def automata(draw):
    """A complete random transducer: 2-5 working states, 2-3 symbols, one halting rule."""
    n, k = draw(st.integers(2, 5)), draw(st.integers(2, 3))
    states, alphabet = [f"q{i}" for i in range(n)], ("a", "b", "c")[:k]
    rules = [Rule(q, s, draw(st.sampled_from(states)), draw(st.sampled_from(alphabet)),
                  draw(st.sampled_from("UDLR"))) for q in states for s in alphabet]
    stop = draw(st.integers(0, len(rules) - 1))
    rules[stop] = dataclasses.replace(rules[stop], next="halt", move="S")
    return make_transducer([*states, "halt"], alphabet, rules, initial="q0", final="halt",
                           blank=alphabet[-1], name="random")


def equivalent(expert, other) -> bool:
    """Product automaton from both initial states, following every symbol the expert has a rule for:
    same written symbol and move on every reachable pair (the lockstep semantics)."""
    seen, queue = {(expert.initial, other.initial)}, deque([(expert.initial, other.initial)])
    while queue:
        p, q = queue.popleft()
        for (state, symbol), rule in expert.rules.items():
            if state != p:
                continue
            mine = other.rule(q, symbol)
            if mine is None or (mine.write, mine.move) != (rule.write, rule.move):
                return False
            if rule.move != "S" and (rule.next, mine.next) not in seen:
                seen.add((rule.next, mine.next))
                queue.append((rule.next, mine.next))
    return True


def reachable_rules(agent) -> list[tuple[str, str]]:
    seen, queue = {agent.initial}, deque([agent.initial])
    while queue:
        q = queue.popleft()
        for s in agent.alphabet:
            rule = agent.rule(q, s)
            if rule and rule.next not in seen and rule.move != "S":
                seen.add(rule.next)
                queue.append(rule.next)
    return sorted(key for key in agent.rules if key[0] in seen)


def weights_of(agent, rng=None, noise: float = 0.0) -> DfstWeights:
    """Compiled weights; with rng, a random positive diagonal basis and dense noise of size `noise`."""
    A, B, C, h0 = compile_agent(agent).numpy_weights()
    if rng is None:
        return DfstWeights.of(A, B, C, h0)
    scale = rng.uniform(0.5, 2.0, agent.d)
    A, B, C, h0 = scale[:, None] * A / scale, B / scale, C / scale, scale * h0
    A = A + rng.uniform(-noise, noise, A.shape)
    B, C = B + rng.uniform(-noise, noise, B.shape), C + rng.uniform(-noise, noise, C.shape)
    return DfstWeights.of(A, B, C, h0)


def verdict(weights: DfstWeights, agent, rescale: bool):
    """certify's verdict on a task-free automaton: the instance search, the grid proof and the pumping,
    which need a grid task, are stubbed (the search as one that finds an instance for every departure,
    the grid proof as one that proves nothing)."""
    with mock.patch.object(core, "counterexample_report", lambda *a: {"instance": "stub"}), \
            mock.patch.object(core, "prove_unreachable", lambda *a: "stub"), \
            mock.patch.object(core, "diagnose_regions", lambda *a: {}), \
            mock.patch.object(core, "diagnose_norm", lambda *a: {}):
        return certify(weights, ADD2, agent=agent, rescale=rescale)


@FAST
@given(automata(), st.integers(0, 2**32 - 1))
def test_perturbed_random_automaton_extracts_to_an_equivalent_one(agent, seed):
    weights = weights_of(agent, np.random.default_rng(seed), noise=1e-6)
    extracted = extract(weights, method="lockstep", agent=agent).agent
    assert equivalent(agent, extracted) and equivalent(extracted, agent)
    assert len(extracted.states) <= agent.d + 1  # minimised: no more states than the original (+ lost)


@FAST
@given(automata(), st.integers(0, 2**32 - 1), st.booleans())
def test_compiled_random_automata_certify_and_the_checker_accepts(agent, seed, rescale):
    weights = weights_of(agent, np.random.default_rng(seed)) if rescale else weights_of(agent)
    result = verdict(weights, agent, rescale)
    assert result.verdict == "CERTIFIED"
    checked = check_certificate(result.certificate, weights.A, weights.B, weights.C, weights.h0, agent)
    assert checked == (True, "ok")


@FAST
@given(automata(), st.data())
def test_random_rewirings_are_caught_exactly_when_behaviour_changes(agent, data):
    key = data.draw(st.sampled_from(reachable_rules(agent)))
    rule = agent.rules[key]
    field = "write" if rule.move == "S" else data.draw(st.sampled_from(["write", "move", "next"]))
    choices = {"write": agent.alphabet, "move": "UDLR", "next": agent.states[:-1]}[field]
    new = data.draw(st.sampled_from([c for c in choices if c != getattr(rule, field)]))
    rules = dict(agent.rules) | {key: dataclasses.replace(rule, **{field: new})}
    wired = make_transducer(agent.states, agent.alphabet, rules.values(), initial=agent.initial,
                            final=agent.final, blank=agent.blank)
    rescale = data.draw(st.booleans())
    weights = weights_of(wired, np.random.default_rng(data.draw(st.integers(0, 99)))) if rescale \
        else weights_of(wired)
    result = verdict(weights, agent, rescale)
    event(f"{field} {result.verdict}")
    if field != "next":
        assert result.verdict == "COUNTEREXAMPLE"  # a reachable rule writes or moves differently
    assert (result.verdict == "CERTIFIED") == equivalent(agent, wired)
    assert result.verdict in ("CERTIFIED", "COUNTEREXAMPLE")


@FAST
@given(automata(), st.data())
def test_rewiring_to_a_clone_state_changes_nothing_and_certifies(agent, data):
    """The other side of the iff: a rule sent to an exact copy of its target state is equivalent."""
    key = data.draw(st.sampled_from([k for k in reachable_rules(agent) if agent.rules[k].move != "S"]))
    rule = agent.rules[key]
    clones = [dataclasses.replace(r, state="clone") for (q, _), r in agent.rules.items() if q == rule.next]
    rules = dict(agent.rules) | {key: dataclasses.replace(rule, next="clone")}
    wired = make_transducer([*agent.states[:-1], "clone", agent.final], agent.alphabet,
                            [*rules.values(), *clones], initial=agent.initial, final=agent.final,
                            blank=agent.blank)
    assert equivalent(agent, wired)
    weights = weights_of(wired, np.random.default_rng(data.draw(st.integers(0, 99))))
    result = verdict(weights, agent, rescale=True)
    assert result.verdict == "CERTIFIED"
    assert check_certificate(result.certificate, weights.A, weights.B, weights.C, weights.h0, agent)[0]


def drifting_add2(eps: float) -> DfstWeights:
    """Compiled add2 whose carry self-loop scales h by 1 + eps: exact in direction, drifting in norm."""
    A, B, C, h0 = compile_agent(ADD2.agent).numpy_weights()
    q, x = ADD2.agent.states.index("carry"), ADD2.alphabet.index("1")
    A[x, q, q] = 1 + eps
    return DfstWeights.of(A, B, C, h0)


def first_failing_digits(weights: DfstWeights, hi: int) -> int:
    """Fewest digits n (<= hi) at which 1 + 11...1 (n ones) fails closed loop, by bisection."""
    fails = lambda n: not confirm(ADD2, weights, Instance("1", "1" * n, "chain"), False).exact  # noqa: E731
    assert fails(hi)
    lo = 1
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if fails(mid) else (mid + 1, hi)
    return lo


def check_overflow_predicted(eps: float) -> None:
    """Plain mode: never certified for every length, certified only below the first failure."""
    weights = drifting_add2(eps)
    result = certify(weights, ADD2, rescale=False, pump_max_digits=0)
    assert result.diagnosis["cycle"]["kind"] == "overflow"
    assert result.verdict == "INCONCLUSIVE" or result.max_digits is not None  # never all lengths
    predicted = result.diagnosis["cycle"]["predicted_steps"]  # one carry step per digit of the chain
    assert predicted >= 1000  # a slow drift: it fails only after thousands of steps
    failed = first_failing_digits(weights, 2 * predicted)
    assert predicted / 2 <= failed <= 2 * predicted, (predicted, failed)
    if result.verdict == "CERTIFIED":  # a bounded certificate must stop short of the failure
        assert result.max_digits < failed and result.max_steps < failed, (result.max_steps, failed)
        assert check_certificate(result.certificate, weights.A, weights.B, weights.C, weights.h0,
                                 ADD2.agent) == (True, "ok")
    assert certify(weights, ADD2, rescale=True).verdict == "CERTIFIED"  # the direction never drifts


@settings(max_examples=4, deadline=None)
@given(st.floats(0.01, 0.05))
def test_slow_growth_is_never_certified_and_its_overflow_length_is_predicted(eps):
    check_overflow_predicted(eps)


@settings(max_examples=3, deadline=None)
@given(st.floats(1e-3, 0.05))
def test_slow_decay_is_certified_in_plain_mode_only_while_the_proof_assumption_holds(eps):
    result = certify(drifting_add2(-eps), ADD2, rescale=False, pump_max_digits=0)
    assert result.verdict == "INCONCLUSIVE" or result.max_digits is not None
    if result.verdict == "CERTIFIED":
        assert result.max_steps <= result.diagnosis["cycle"]["assumption_lost_steps"]


def test_a_decay_predicts_no_failure_length_and_none_happens():
    """Round-to-nearest stalls a decaying one-hot h a few subnormal units above 0 (m (1 - eps) rounds
    back to m once m eps < 1/2): the diagnosis must not predict a failure, and there is none."""
    weights = drifting_add2(-1 / 32)
    cycle = certify(weights, ADD2, rescale=False, pump_max_digits=0).diagnosis["cycle"]
    assert cycle["kind"] == "decay" and cycle["predicted_steps"] is None
    assert cycle["assumption_lost_steps"] > 0
    chain = Instance("1", "1" * (2 * cycle["assumption_lost_steps"]), "chain")  # one carry step per digit
    assert confirm(ADD2, weights, chain, False).exact


@pytest.mark.parametrize("eps", [1e-3, 2e-4])  # predicted ~88,000 and ~440,000 steps
def test_very_slow_growth_is_predicted_within_a_factor_of_two(eps):
    check_overflow_predicted(eps)
