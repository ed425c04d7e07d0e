"""certify: compiled experts are CERTIFIED (checker agrees), rewired and drifting models are not."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dfst.automata import make_transducer, transducer_from_dict
from dfst.certify import certify, check_certificate, search
from dfst.certify.search import confirm
from dfst.extract import extract
from dfst.grid.rollout import DfstWeights, _run_dfst, engine_step, run_table
from dfst.model.compile import compile_agent
from dfst.tasks import TASKS
from dfst.tasks.base import Instance

ADD2 = TASKS["add2"]


def weights_of(agent, T=None) -> DfstWeights:
    A, B, C, h0 = compile_agent(agent).numpy_weights()
    if T is None:
        return DfstWeights.of(A, B, C, h0)
    Ti = np.linalg.inv(T)
    return DfstWeights.of(T @ A @ Ti, B @ Ti, C @ Ti, T @ h0)


def rewired(agent, key, **change):
    rules = dict(agent.rules)
    rules[key] = dataclasses.replace(rules[key], **change)
    return make_transducer(agent.states, agent.alphabet, rules.values(), initial=agent.initial,
                           final=agent.final, blank=agent.blank, name=agent.name)


@pytest.mark.parametrize("name", list(TASKS))
@pytest.mark.parametrize("rescale", [False, True])
def test_compiled_experts_certify_and_the_checker_accepts(name, rescale):
    task = TASKS[name]
    w = weights_of(task.agent)
    result = certify(w, task, rescale=rescale)
    assert result.verdict == "CERTIFIED"
    assert check_certificate(result.certificate, w.A, w.B, w.C, w.h0, task.agent) == (True, "ok")
    extracted = transducer_from_dict(result.certificate["extracted"])
    # the automaton read off is the expert minimised, and every expert is minimal
    assert extracted.d == task.agent.d and len(extracted.rules) == len(task.agent.rules)
    for instance in (i for n in (1, 2, 5) for i in task.hard_instances(n)):
        layout, steps = task.layout(instance), task.max_steps(instance)
        assert np.array_equal(run_table(extracted, layout, steps, record=True).trace,
                              run_table(task.agent, layout, steps, record=True).trace)


@pytest.mark.parametrize("name", list(TASKS))
def test_scaled_permuted_basis_certifies_in_rescaled_mode(name):
    """h -> T h with T a positive diagonal times a permutation: inexact float32 weights."""
    task, rng = TASKS[name], np.random.default_rng(7)
    d = task.agent.d
    T = np.diag(rng.uniform(0.5, 2.0, d))[rng.permutation(d)]
    w = weights_of(task.agent, T)
    result = certify(w, task, rescale=True)
    assert result.verdict == "CERTIFIED"
    assert check_certificate(result.certificate, w.A, w.B, w.C, w.h0, task.agent)[0]


def test_checker_rejects_a_tampered_certificate():
    w = weights_of(ADD2.agent)
    cert = certify(w, ADD2).certificate
    cert["nodes"][1]["h"][0] += 0.5
    ok, why = check_certificate(cert, w.A, w.B, w.C, w.h0, ADD2.agent)
    assert not ok and "node" in why
    bad = rewired(ADD2.agent, ("carry", "1"), write="1")
    wb = weights_of(bad)
    ok, _ = check_certificate(certify(w, ADD2).certificate, wb.A, wb.B, wb.C, wb.h0, ADD2.agent)
    assert not ok


def test_rewired_add2_gives_a_counterexample_that_fails_closed_loop():
    w = weights_of(rewired(ADD2.agent, ("carry", "1"), write="1"))
    result = certify(w, ADD2)
    assert result.verdict == "COUNTEREXAMPLE"
    inst = result.counterexample["instance"]
    assert inst is not None and inst["closed_loop_exact"] is False
    assert inst["effect"] == "the answer comes out wrong" and inst["verdict"] == "wrong_answer"
    assert not confirm(ADD2, w, Instance(inst["a"], inst["b"]), False).exact


# add10 is slow: a rewiring's departure is really reachable, so the grid proof tries every abstraction
# before it gives up: 17 s for one add10 rewiring on the loaded machine (add2 takes the same path in
# about a second), and 15 random ones of both tasks took from 4 to 75 s. The default suite keeps
# add2's random rewirings and one fixed add10 rewiring (test_a_rewired_add10_rule_gives_a_counterexample).
@pytest.mark.parametrize("name", ["add2", pytest.param("add10", marks=pytest.mark.slow)])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_random_rewirings_are_always_caught(name, data):
    task = TASKS[name]
    key = data.draw(st.sampled_from(sorted(task.agent.rules)))
    rule = task.agent.rules[key]
    write = data.draw(st.sampled_from([s for s in task.alphabet if s != rule.write]))
    w = weights_of(rewired(task.agent, key, write=write))
    # most rewirings' symbol paths are read by no small instance: the search for one would scan all
    # 20,000 (most of this test's time) before the closed-loop search finds the departure. A smaller
    # budget can only make a COUNTEREXAMPLE harder to find, never a verdict of CERTIFIED easier.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search, "MAX_PAIRS", 500)
        assert certify(w, task).verdict == "COUNTEREXAMPLE"


def leaking_add2() -> DfstWeights:
    A, B, C, h0 = compile_agent(ADD2.agent).numpy_weights()
    q, x = ADD2.agent.states.index("carry"), ADD2.alphabet.index("1")
    A[x, ADD2.agent.states.index("add1"), q] = 1e-3  # mass leaks out of the carry loop every step
    return DfstWeights.of(A, B, C, h0)


@pytest.mark.parametrize("rescale", [False, True])
def test_leaking_carry_loop_is_never_certified(rescale, monkeypatch):
    """The lockstep finds the departure (after a carry chain of 1,001) and the grid proof refuses it:
    the verdict is settled before the search for an instance showing it, which is made to come back
    empty here (that search, 20,000 small instances and hard ones up to 2,000 digits, finds none for
    this model: the full run is the slow test below)."""
    import dfst.certify.result as result_module

    searched = []
    monkeypatch.setattr(result_module, "instance_reading", lambda *args: searched.append(args))  # None
    monkeypatch.setattr(result_module, "departing_instance", lambda *args: None)
    result = certify(leaking_add2(), ADD2, rescale=rescale)
    assert result.verdict != "CERTIFIED" and result.certificate is None
    assert searched  # it got as far as the departure, and the grid proof did not close it


@pytest.mark.slow
def test_leaking_carry_loop_is_never_certified_with_the_full_instance_search():
    w = leaking_add2()
    for rescale in (False, True):
        assert certify(w, ADD2, rescale=rescale).verdict != "CERTIFIED"


def test_growing_carry_loop_is_certified_only_below_its_overflow():
    """Carry self-loop 1.01: exact in rescaled mode for every length; in plain mode h overflows near
    the predicted length, and the plain certificate is bounded below it (and the checker agrees)."""
    A, B, C, h0 = compile_agent(ADD2.agent).numpy_weights()
    q, x = ADD2.agent.states.index("carry"), ADD2.alphabet.index("1")
    A[x, q, q] = 1.01
    w = DfstWeights.of(A, B, C, h0)
    assert certify(w, ADD2, rescale=True).verdict == "CERTIFIED"
    result = certify(w, ADD2, pump_max_digits=0)
    assert result.verdict == "CERTIFIED" and result.certificate["kind"] == "bounded"
    assert check_certificate(result.certificate, w.A, w.B, w.C, w.h0, ADD2.agent) == (True, "ok")
    steps, bound = result.diagnosis["cycle"]["predicted_steps"], result.max_digits
    chain = lambda n: Instance("1", "1" * n, "carry_chain_swapped")  # noqa: E731
    assert confirm(ADD2, w, chain(steps // 2), False).exact
    assert not confirm(ADD2, w, chain(2 * steps), False).exact
    assert steps / 2 < result.max_steps < steps  # below the overflow, and not vacuous
    assert confirm(ADD2, w, chain(bound), False).exact
    assert ADD2.step_bound(bound, bound, 2) <= result.max_steps < ADD2.step_bound(bound + 1, bound + 1, 2)


def test_engine_step_is_the_engine_bit_for_bit():
    rng = np.random.default_rng(3)
    T = np.eye(ADD2.agent.d) + 0.1 * rng.standard_normal((ADD2.agent.d,) * 2)
    w = weights_of(ADD2.agent, T)
    layout = ADD2.layout(Instance("1011", "111"))
    for rescale in (False, True):
        h, cells, (r, c) = w.h0.copy(), layout.cells.copy(), layout.head
        out = np.empty(w.Wt.shape[2], np.float32)
        mine = w.h0.copy()
        for t in range(6):
            x = int(cells[r, c])
            mine = engine_step(w, mine, x, rescale).h
            _, _, r, c = _run_dfst(w.Wt, cells, r, c, h, t, t + 1, rescale, out)
            assert np.array_equal(mine, h)


def test_a_rewired_add10_rule_gives_a_counterexample():
    """One of add10's rewirings in the default suite (the random ones are slow): 3 + 0 writes 4."""
    add10 = TASKS["add10"]
    result = certify(weights_of(rewired(add10.agent, ("sum3", "0"), write="4")), add10)
    assert result.verdict == "COUNTEREXAMPLE"
    assert result.counterexample["instance"]["closed_loop_exact"] is False


# derandomized: the suite picks the same examples on every run. At +-1e-4 some seeds' mult2 weights
# drift (seed 62: the lockstep graph passes 20,000 nodes at tol 1e-3, a refusal, after 64 s), so the
# perturbation is 3e-5, where seeds 62, 1, 2 and 3 all close at the expert's 19 states.
@settings(max_examples=10, deadline=None, derandomize=True)
@given(st.integers(0, 10**6), st.sampled_from(["add2", "mult2"]))
def test_perturbed_compiled_model_extracts_to_an_equivalent_automaton(seed, name):
    task, rng = TASKS[name], np.random.default_rng(seed)
    A, B, C, h0 = compile_agent(task.agent).numpy_weights()
    A = A + rng.uniform(-3e-5, 3e-5, A.shape).astype(np.float32)
    found = extract(DfstWeights.of(A, B, C, h0), method="lockstep", agent=task.agent).agent
    for n in range(1, 5):
        for inst in task.hard_instances(n) + task.random_instances(n, 3, seed=n):
            from dfst.grid.rollout import run_table
            got = run_table(found, task.layout(inst), task.max_steps(inst))
            want = run_table(task.agent, task.layout(inst), task.max_steps(inst))
            assert (got.outcome, got.steps) == (want.outcome, want.steps)
            assert np.array_equal(got.cells, want.cells)


def test_the_frame_takes_the_centres_then_the_space_orthogonal_to_them():
    """Trained centres are dense and not orthogonal: each must be a basis column as it is, and the rest
    of the basis must lie outside their span (the directions fine-tuning can map to 0)."""
    from dfst.certify.frame import choose_basis

    rng = np.random.default_rng(3)
    points = rng.normal(size=(3, 6))
    T = choose_basis(points)
    for p in points:
        assert any(np.allclose(col / np.abs(col).max(), p / np.abs(p).max()) or
                   np.allclose(col / np.abs(col).max(), -p / np.abs(p).max()) for col in T.T)
    rest = [col for col in T.T if not any(abs(abs(col @ p) - np.linalg.norm(col) * np.linalg.norm(p)) < 1e-9
                                          for p in points)]
    assert len(rest) == 3 and np.allclose(np.array(rest) @ points.T, 0)
    assert np.linalg.matrix_rank(T) == 6


def test_a_counterexample_says_when_only_the_policy_differs():
    """(next1, _) writing 0 instead of the blank: the DFST leaves the expert's policy (it writes
    another symbol) on 1 + 1, yet the answer read off the grid is exact; the report says which."""
    w = weights_of(rewired(ADD2.agent, ("next1", "_"), write="0"))
    inst = certify(w, ADD2).counterexample["instance"]
    assert inst["closed_loop_exact"] is True and inst["verdict"] == "exact"
    assert inst["effect"] == "only the policy differs: the answer comes out exact"


def test_a_departure_no_instance_shows_is_inconclusive_not_a_counterexample(monkeypatch):
    """A COUNTEREXAMPLE always carries a concrete instance. When the search finds none (here: the
    search is made to come back empty), the departure may be unreachable on the grid: INCONCLUSIVE,
    with the path in the diagnosis."""
    import dfst.certify.result as result_module

    monkeypatch.setattr(result_module, "instance_reading", lambda *args: None)
    monkeypatch.setattr(result_module, "departing_instance", lambda *args: None)
    result = certify(weights_of(rewired(ADD2.agent, ("carry", "1"), write="1")), ADD2)
    assert result.verdict == "INCONCLUSIVE" and result.counterexample is None
    assert "a start no layout searched reaches" in result.diagnosis["reason"]
    assert result.diagnosis["departure"]["path"] == "1 1 0 _ 1"


def scaled_region_certificate():
    """A region certificate (kind "regions"), from add2 in a scaled permuted basis: 0.4 s."""
    rng, d = np.random.default_rng(7), ADD2.agent.d
    w = weights_of(ADD2.agent, np.diag(rng.uniform(0.5, 2.0, d))[rng.permutation(d)])
    cert = certify(w, ADD2, rescale=True).certificate
    assert cert["kind"] == "regions"
    assert check_certificate(cert, w.A, w.B, w.C, w.h0, ADD2.agent) == (True, "ok")
    return w, cert


@pytest.mark.parametrize("key, value", [("unit_roundoff", 0.0), ("underflow", 0.0), ("slack", -1.0),
                                        ("condition", 1e3), ("version", 1), ("limits", [1.0])])
def test_the_checker_uses_its_own_rounding_constants_not_the_certificates(key, value):
    """A certificate that understates float32's rounding would prove more than the arithmetic gives."""
    w, cert = scaled_region_certificate()
    cert[key] = value
    ok, why = check_certificate(cert, w.A, w.B, w.C, w.h0, ADD2.agent)
    assert not ok and (key in why or "version" in why)


@pytest.mark.parametrize("radius", [-1.0, float("nan"), float("inf")])
def test_radii_that_are_no_radii_are_refused(radius):
    """A negative or NaN radius would widen the margin at node 0, which no edge enters."""
    w, cert = scaled_region_certificate()
    cert["radii"] = [radius] * len(cert["nodes"])
    assert not check_certificate(cert, w.A, w.B, w.C, w.h0, ADD2.agent)[0]


@settings(max_examples=10, deadline=None, derandomize=True)
@given(st.floats(0.0, 1.0), st.lists(st.sampled_from(ADD2.agent.alphabet), min_size=1, max_size=40))
def test_shrunk_radii_are_accepted_only_where_every_reachable_state_still_lies_in_its_region(shrink, word):
    """Why smaller regions can still be a proof: h0 is node 0's centre, and the checker checks that
    each edge maps its source's region into its target's and keeps every readout's margin on it, so by
    induction over the input every reachable h lies in its node's region whatever radii pass. Here
    (an exact model in a scaled basis) every reachable h is its node's centre, so every radius down
    to 0 passes, and the run of the engine never leaves the centres."""
    w, cert = scaled_region_certificate()
    cert["radii"] = [r * shrink for r in cert["radii"]]
    assert check_certificate(cert, w.A, w.B, w.C, w.h0, ADD2.agent) == (True, "ok")
    sym = {s: i for i, s in enumerate(ADD2.agent.alphabet)}
    edges = {(n, sym[x]): m for n, x, m in cert["edges"]}
    node, h = 0, w.h0
    for x in (sym[s] for s in word):
        if (node, x) not in edges or edges[(node, x)] < 0:
            break
        h, node = engine_step(w, h, x, True).h, edges[(node, x)]
        centre = np.array(cert["nodes"][node]["h"], np.float32)
        assert np.array_equal(h / np.abs(h).max(), centre / np.abs(centre).max())  # deviation 0 <= radius
