"""The DFST closed-loop engine: compiled experts equal the reference simulator on every task, a dense
model equals a plain per-step float32 loop, and every outcome (halt, step limit, off layout,
overflow, no answer) is reached where it should be."""

from __future__ import annotations

import math
from dataclasses import replace
from functools import cache

import numpy as np
import pytest

import dfst.grid.rollout
from dfst.automata import MOVE_DELTA, MOVE_INDEX, MOVES, make_transducer
from dfst.grid.grid import Layout
from dfst.grid.rollout import DfstWeights, judge, rollout, run_dfst
from dfst.grid.world import Outcome, run_agent
from dfst.model.compile import compile_agent
from dfst.studies.bench import dense_expert
from dfst.tasks import TASKS, Instance
from task_samples import hard_cases

STOP = MOVE_INDEX["S"]


@cache
def expert_weights(name: str) -> DfstWeights:
    return DfstWeights.of(*compile_agent(TASKS[name].agent).numpy_weights())


def task_cases(name: str) -> list[Instance]:
    """The hard set at 1..5 digits (sampled where it is large: div10x1, mult10x1), seeded random
    pairs, and a few of unequal lengths."""
    task = TASKS[name]
    cases = hard_cases(task, range(1, 6))
    return cases + task.random_instances(6, 3, seed=21) + task.random_instances(2, 2, seed=22, m=5)


def one_dim_model(k: int, write: list[int], move: list[str], scale: float = 1.0) -> DfstWeights:
    """d = 1, h0 = [1]: reading symbol x writes write[x] and moves move[x]; A multiplies h by scale."""
    A = np.full((k, 1, 1), scale)
    B, C = np.zeros((k, k, 1)), np.zeros((k, len(MOVES), 1))
    for x in range(k):
        B[x, write[x], 0] = 1.0
        C[x, MOVE_INDEX[move[x]], 0] = 1.0
    return DfstWeights.of(A, B, C, np.ones(1))


@pytest.mark.parametrize("name", TASKS)
def test_compiled_expert_equals_reference(name):
    task, weights = TASKS[name], expert_weights(name)
    for instance in task_cases(name):
        layout, limit = task.layout(instance), task.max_steps(instance)
        before = layout.cells.copy()
        ref = run_agent(task.agent, layout, limit)
        assert ref.outcome == Outcome.HALTED
        for rescale in (False, True):
            run = run_dfst(weights, layout, limit, rescale=rescale)
            assert (run.outcome, run.steps, run.head) == (ref.outcome, ref.steps, ref.head), instance
            np.testing.assert_array_equal(run.cells, ref.grid.to_array(layout.cells.shape))
            result = judge(task, instance, run, layout.answer)
            assert result.exact and result.answer_digits == len(task.expected(instance)), instance
        np.testing.assert_array_equal(layout.cells, before)  # the engine works on a copy


@pytest.mark.parametrize("name", TASKS)
def test_step_limit_matches_reference(name):
    task, weights = TASKS[name], expert_weights(name)
    instance = task.hard_instances(3)[0]
    layout = task.layout(instance)
    needed = run_dfst(weights, layout, task.max_steps(instance)).steps
    assert run_dfst(weights, layout, needed).outcome == Outcome.HALTED
    for limit in (needed - 1, needed // 2, 1, 0):
        run, ref = run_dfst(weights, layout, limit), run_agent(task.agent, layout, limit)
        assert (run.outcome, run.steps, run.head) == (Outcome.STEP_LIMIT, limit, ref.head)
        np.testing.assert_array_equal(run.cells, ref.grid.to_array(layout.cells.shape))
        assert not judge(task, instance, run, layout.answer).exact


# --- a dense model against a plain per-step float32 loop -------------------------------------------

def plain_loop(weights: DfstWeights, layout: Layout, max_steps: int):
    """The DFST step written out: float32 mat-vecs, first-max argmax, write, stop on S, move."""
    A, B, C, h = weights.A, weights.B, weights.C, weights.h0.copy()
    cells, (r, c) = layout.cells.copy(), layout.head
    actions = []
    for _ in range(max_steps):
        x = cells[r, c]
        write, move = int(np.argmax(B[x] @ h)), int(np.argmax(C[x] @ h))
        cells[r, c] = write
        actions.append((write, move))
        if move == STOP:
            return Outcome.HALTED, actions, cells
        h = A[x] @ h  # (d,) float32
        assert h.dtype == np.float32 and np.isfinite(h).all()
        dr, dc = MOVE_DELTA[MOVES[move]]
        r, c = r + dr, c + dc
        assert 0 <= r < cells.shape[0] and 0 <= c < cells.shape[1]
    return Outcome.STEP_LIMIT, actions, cells


def engine_actions(weights: DfstWeights, layout: Layout, steps: int) -> list[tuple[int, int]]:
    """The engine's action at every step, read off runs stopped after 1, 2, ... steps."""
    actions, head = [], layout.head
    for t in range(1, steps + 1):
        run = run_dfst(weights, layout, t)
        write = int(run.cells[head])
        if run.outcome == Outcome.HALTED:
            move = STOP
        else:
            move = MOVES.index(next(m for m, d in MOVE_DELTA.items()
                                    if m != "S" and (head[0] + d[0], head[1] + d[1]) == run.head))
        actions.append((write, move))
        head = run.head
    return actions


@pytest.mark.parametrize("d", [12, 20])
def test_dense_model_equals_plain_float32_loop(d):
    task, weights = TASKS["add2"], dense_expert(d)
    assert weights.A.shape[1] == d and np.count_nonzero(weights.A) > 0.9 * weights.A.size  # really dense
    for instance in task.hard_instances(6)[::3] + task.random_instances(7, 2, seed=3):
        layout, limit = task.layout(instance), task.max_steps(instance)
        outcome, actions, cells = plain_loop(weights, layout, limit)
        run = run_dfst(weights, layout, limit)
        assert (run.outcome, run.steps) == (outcome, len(actions)) == (Outcome.HALTED, len(actions))
        np.testing.assert_array_equal(run.cells, cells)
        assert engine_actions(weights, layout, run.steps) == actions, instance
        assert judge(task, instance, run, layout.answer).exact, instance


def test_dense_model_answers_are_exact_through_rollout():
    task = TASKS["add2"]
    instances = task.hard_instances(40) + task.random_instances(60, 5, seed=9)
    for d in (12, 20):
        results = rollout(task, instances, weights=dense_expert(d))
        assert all(r.exact and r.outcome == Outcome.HALTED for r in results), d


# --- outcomes ---------------------------------------------------------------------------------------

def test_step_limit_when_max_steps_too_small():
    task = TASKS["add2"]
    instance = task.random_instances(8, 1, seed=1)[0]
    layout = task.layout(instance)
    for weights in (expert_weights("add2"), dense_expert(12)):
        run = run_dfst(weights, layout, 5)
        assert (run.outcome, run.steps) == (Outcome.STEP_LIMIT, 5)
        result = judge(task, instance, run, layout.answer)
        assert (result.outcome, result.exact, result.answer_digits) == (Outcome.STEP_LIMIT, False, 0)


def test_off_layout_when_always_moving_left():
    task = TASKS["add2"]
    weights = one_dim_model(3, write=[0, 1, 2], move=["L"] * 3)
    instance = Instance("1011", "110")
    layout = task.layout(instance)
    run = run_dfst(weights, layout, 1000)
    row, col = layout.head
    assert (run.outcome, run.steps, run.head) == (Outcome.OFF_LAYOUT, col + 1, (row, -1))
    np.testing.assert_array_equal(run.cells, layout.cells)  # it wrote back what it read
    [result] = rollout(task, [instance], weights=weights)
    assert (result.outcome, result.exact, result.answer_digits) == (Outcome.OFF_LAYOUT, False, 0)


def test_overflow_is_non_finite_and_rescaling_avoids_it():
    """h grows ×1e30 a step: float32 overflows at step 2; rescaled, the model keeps going."""
    layout = Layout(np.array([[0, 1]], dtype=np.uint8), head=(0, 0), answer=(0, 1))
    bouncing = dict(write=[0, 1, 2], move=["R", "L", "S"])  # 0 -> right, 1 -> left: back and forth
    run = run_dfst(one_dim_model(3, **bouncing, scale=1e30), layout, 50)
    assert (run.outcome, run.steps) == (Outcome.NON_FINITE, 2)
    run = run_dfst(one_dim_model(3, **bouncing, scale=1e30), layout, 50, rescale=True)
    assert (run.outcome, run.steps, run.head) == (Outcome.STEP_LIMIT, 50, (0, 0))
    run = run_dfst(one_dim_model(3, **bouncing, scale=1.0), layout, 50)  # no growth, no overflow
    assert (run.outcome, run.steps) == (Outcome.STEP_LIMIT, 50)


def test_ties_go_to_the_first_maximum():
    """Symbol scores tied between 1 and 2 write 1; move scores tied between D and R move D."""
    A, B, C = np.ones((3, 1, 1)), np.zeros((3, 3, 1)), np.zeros((3, 5, 1))
    B[:, 1:, 0] = 0.5
    C[:, [MOVE_INDEX["D"], MOVE_INDEX["R"]], 0] = 0.5
    layout = Layout(np.full((3, 3), 2, dtype=np.uint8), head=(0, 0), answer=(2, 2))
    run = run_dfst(DfstWeights.of(A, B, C, np.ones(1)), layout, 100)
    assert (run.outcome, run.steps, run.head) == (Outcome.OFF_LAYOUT, 3, (3, 0))
    assert run.cells[:, 0].tolist() == [1, 1, 1] and (run.cells[:, 1:] == 2).all()
    # All-zero scores (h = 0) read as symbol 0 and move U.
    run = run_dfst(DfstWeights.of(A, B, C, np.zeros(1)), layout, 100)
    assert (run.outcome, run.steps, run.head, run.cells[0, 0]) == (Outcome.OFF_LAYOUT, 1, (-1, 0), 0)


def test_halting_at_once_on_a_blank_gives_no_answer():
    task = TASKS["mult2"]
    blank = task.blank
    weights = one_dim_model(3, write=[blank] * 3, move=["S"] * 3)
    instances = [Instance("101", "11"), Instance("0", "0")]
    layout = task.layout(instances[0])
    run = run_dfst(weights, layout, 100)
    assert (run.outcome, run.steps, run.head) == (Outcome.HALTED, 1, layout.head)
    assert run.cells[layout.head] == blank
    for result in rollout(task, instances, weights=weights):
        assert (result.outcome, result.steps, result.exact, result.answer_digits, result.verdict) == \
            (Outcome.HALTED, 1, False, 0, "no_answer")


# --- progress, chunks, determinism, order -----------------------------------------------------------

@pytest.mark.parametrize("name,dense", [("mult2", False), ("add2", True)])
def test_chunked_run_equals_unchunked_and_reports_every_step(monkeypatch, name, dense):
    """h and the head carry over between kernel calls: 7-step chunks give the same run."""
    task = TASKS[name]
    weights = dense_expert(12) if dense else expert_weights(name)
    instance = task.hard_instances(12)[2]  # max_plus_max / power_times_power
    layout, limit = task.layout(instance), task.max_steps(instance)
    whole = run_dfst(weights, layout, limit)
    assert whole.outcome == Outcome.HALTED and whole.steps > 30
    for max_steps, outcome in ((limit, Outcome.HALTED), (whole.steps - 3, Outcome.STEP_LIMIT)):
        reference = run_dfst(weights, layout, max_steps)
        calls = []
        with monkeypatch.context() as patch:
            patch.setattr(dfst.grid.rollout, "CHUNK_STEPS", 7)
            run = run_dfst(weights, layout, max_steps, on_steps=calls.append)
        assert (run.outcome, run.steps, run.head) == (outcome, reference.steps, reference.head)
        np.testing.assert_array_equal(run.cells, reference.cells)
        assert sum(calls) == run.steps
        assert len(calls) == math.ceil(run.steps / 7) > 2 and all(n == 7 for n in calls[:-1])


def test_rollout_reports_progress_for_both_engines():
    task = TASKS["add10"]
    instances = task.hard_instances(5) + task.random_instances(9, 3, seed=2)
    for kwargs in ({"weights": expert_weights("add10")}, {"agent": task.agent}):
        calls = []
        results = rollout(task, instances, on_steps=calls.append, **kwargs)
        assert sum(calls) == sum(r.steps for r in results) > 0


def test_runs_are_deterministic():
    task = TASKS["add2"]
    instance = task.random_instances(30, 1, seed=4)[0]
    layout, limit = task.layout(instance), task.max_steps(instance)
    for weights in (dense_expert(20), dense_expert(20), expert_weights("add2")):
        first, second = run_dfst(weights, layout, limit), run_dfst(weights, layout, limit)
        assert (first.outcome, first.steps, first.head) == (second.outcome, second.steps, second.head)
        np.testing.assert_array_equal(first.cells, second.cells)


def test_rollout_keeps_input_order_and_runs_agents_too():
    task = TASKS["add2"]
    instances = [inst for n in (9, 1, 30, 4, 17) for inst in task.random_instances(n, 2, seed=n)]
    instances += task.hard_instances(5)
    by_weights = rollout(task, instances, weights=expert_weights("add2"), workers=4)
    by_agent = rollout(task, instances, agent=task.agent, workers=3)
    by_default = rollout(task, instances)
    assert [(r.name, r.a, r.b) for r in by_weights] == [(i.name, i.a, i.b) for i in instances]
    assert by_weights == by_agent == by_default
    assert all(r.exact for r in by_weights)
    # An agent given explicitly is the one that runs, and its compiled weights agree with it.
    rules = dict(task.agent.rules)
    rules[("carry", "1")] = replace(rules[("carry", "1")], write="1")  # breaks long carry ripples
    agent = make_transducer(task.agent.states, task.agent.alphabet, rules.values(),
                            initial=task.agent.initial, final=task.agent.final, blank=task.agent.blank)
    rewired = rollout(task, instances, agent=agent)
    assert [(r.name, r.a, r.b) for r in rewired] == [(i.name, i.a, i.b) for i in instances]
    assert 0 < sum(not r.exact for r in rewired) < len(instances)
    compiled = DfstWeights.of(*compile_agent(agent).numpy_weights())
    assert rewired == rollout(task, instances, weights=compiled)
