"""Exact compilation: agent -> DFST weights -> the agent's actions and states, step for step."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dfst.automata import MOVE_INDEX, MOVES, Rule, Transducer, make_transducer
from dfst.grid.grid import Layout
from dfst.grid.rollout import run_table
from dfst.grid.world import Outcome
from dfst.model import DFST
from dfst.model.compile import compile_agent
from dfst.tasks import TASKS, Task


def task_instances(task: Task) -> list:
    """The hard set at 1..4 digits and seeded random pairs, some of unequal lengths; 1..3 digits for a
    task whose 4-digit runs are thousands of steps (div10x1: the teacher-forced loop of a d = 54
    model over them was two minutes of the suite, and 3 digits already read every rule)."""
    top = 4 if task.step_bound(4, 4, task.base) <= 3000 else 3
    instances = [inst for n in range(1, top + 1) for inst in task.hard_instances(n)]
    instances += [inst for n in range(1, top + 1) for inst in task.random_instances(n, 3, seed=n)]
    instances += task.random_instances(top, 2, seed=7, m=2) + task.random_instances(2, 2, seed=8, m=top)
    return instances


def expert_traces(task: Task, instances: list) -> list[np.ndarray]:
    """(read, write, move) rows of the expert's PTO on each instance."""
    runs = [run_table(task.agent, task.layout(inst), task.max_steps(inst), record=True)
            for inst in instances]
    assert all(run.outcome == Outcome.HALTED for run in runs)
    return [run.trace.astype(np.int64) for run in runs]


def replay_states(agent: Transducer, reads: np.ndarray) -> np.ndarray:
    """The expert's state before each step and after the last: (T+1,) indices."""
    nxt, _, _ = agent.tables()
    states = [agent.states.index(agent.initial)]
    for x in reads:
        states.append(int(nxt[states[-1], x]))
    return np.array(states)


def teacher_forced(model: DFST, traces: list[np.ndarray]) -> list[tuple[torch.Tensor, ...]]:
    """Per trace: hidden states (T+1, d), argmax symbols (T,), argmax moves (T,); one padded batch."""
    x = torch.zeros(len(traces), max(len(t) for t in traces), dtype=torch.long)  # (batch, T)
    for i, trace in enumerate(traces):
        x[i, : len(trace)] = torch.from_numpy(trace[:, 0])
    with torch.no_grad():
        hidden, symbols, moves = model.unroll(x)
    return [(hidden[i, : len(t) + 1], symbols[i, : len(t)].argmax(-1), moves[i, : len(t)].argmax(-1))
            for i, t in enumerate(traces)]


def assert_reproduces(model: DFST, agent: Transducer, traces: list[np.ndarray]) -> None:
    """Actions equal the PTO at every step, and h_t is exactly e_{q_t}."""
    eye = torch.eye(agent.d)
    for trace, (hidden, symbols, moves) in zip(traces, teacher_forced(model, traces)):
        assert np.array_equal(symbols.numpy(), trace[:, 1])
        assert np.array_equal(moves.numpy(), trace[:, 2])
        assert torch.equal(hidden, eye[replay_states(agent, trace[:, 0])])


def disagrees(model: DFST, traces: list[np.ndarray]) -> bool:
    return any(not (np.array_equal(s.numpy(), t[:, 1]) and np.array_equal(m.numpy(), t[:, 2]))
               for t, (_, s, m) in zip(traces, teacher_forced(model, traces)))


def rules_read(agent: Transducer, trace: np.ndarray) -> set[tuple[int, int]]:
    """The (state, read) index pairs of the expert's rules that `trace` uses."""
    return set(zip(replay_states(agent, trace[:, 0])[:-1].tolist(), trace[:, 0].tolist()))


def rule_cover(agent: Transducer, traces: list[np.ndarray]) -> list[int]:
    """Indices of a few traces that, together, read every rule that all of them read: greedily the one
    adding the most rules not yet read, the shorter on a tie."""
    reads = [rules_read(agent, trace) for trace in traces]
    chosen, used = [], set()
    while True:
        best = max(range(len(traces)), key=lambda i: (len(reads[i] - used), -len(traces[i])))
        if not reads[best] - used:
            assert used == set().union(*reads)
            return chosen
        chosen.append(best)
        used |= reads[best]


# Teacher forcing costs every padded step k·d² (all k matrices), so mult10x1's and div10x1's ~680,000
# steps (8,446 and 1,438 PTOs) were 2 minutes of the suite; any other task is under 40,000.
STEP_BUDGET = 100_000


@pytest.fixture(scope="module", params=list(TASKS))
def compiled(request):
    """(task, model, instances, traces): the expert's PTOs, recorded once per task and shared.

    Past STEP_BUDGET, the instances are a rule cover of `task_instances`: every rule they read, read
    again. A compiled h_t is exactly e_{q_t} with 0/1 weights, so a step depends on its rule alone and a
    PTO whose every rule was reproduced exactly elsewhere is reproduced too."""
    task = TASKS[request.param]
    instances = task_instances(task)
    traces = expert_traces(task, instances)
    if sum(map(len, traces)) > STEP_BUDGET:
        keep = rule_cover(task.agent, traces)
        instances, traces = [instances[i] for i in keep], [traces[i] for i in keep]
    return task, compile_agent(task.agent), instances, traces


def test_compiled_expert_reproduces_every_pto(compiled):
    task, model, _, traces = compiled
    assert (model.config.k, model.config.d, model.config.task) == (task.agent.k, task.agent.d, task.name)
    assert_reproduces(model, task.agent, traces)


def test_compiled_weights_are_one_hot_per_rule(compiled):
    task, model, _, _ = compiled
    agent = task.agent
    for weight in (model.A, model.B, model.C):
        assert set(weight.unique().tolist()) <= {0.0, 1.0}
        assert weight.sum() == len(agent.rules)  # one 1 per rule
    final = agent.states.index(agent.final)
    assert not model.A[:, :, final].any()  # the final state has no rules
    assert torch.equal(model.h0, torch.eye(agent.d)[agent.states.index(agent.initial)])


def test_one_rewired_transition_is_detected(compiled):
    task, model, _, traces = compiled
    trace = next(t for t in traces if len(t) > 2)
    state, read = int(replay_states(task.agent, trace[:, 0])[1]), int(trace[1, 0])  # the rule at step 1
    A = model.A.detach().clone()
    old = int(A[read, :, state].argmax())
    new = (old + 1) % task.agent.d
    A[read, old, state], A[read, new, state] = 0.0, 1.0
    rewired = DFST.from_weights(A, model.B, model.C, model.h0)
    # A teacher-forced trace that never uses the rewired rule runs exactly as before, so only the
    # traces that use it can disagree: the same verdict as over every trace, shortest first.
    using = sorted((t for t in traces if (state, read) in rules_read(task.agent, t)), key=len)
    assert any(disagrees(rewired, [t]) for t in using)


def closed_loop(model: DFST, layout: Layout, max_steps: int) -> np.ndarray:
    """Run the DFST on the grid in plain Python: read, write argmax, move argmax, stop on S."""
    cells, (r, c) = layout.cells.copy(), layout.head
    h = model.h0
    with torch.no_grad():
        for _ in range(max_steps):
            h, s, m = model.step(h, torch.tensor(int(cells[r, c])))
            cells[r, c] = int(s.argmax())
            move = MOVES[int(m.argmax())]
            if move == "S":
                return cells
            r, c = r + {"U": -1, "D": 1}.get(move, 0), c + {"L": -1, "R": 1}.get(move, 0)
    raise AssertionError("the compiled model did not halt")


def test_compiled_expert_computes_the_answer_in_closed_loop(compiled):
    """The plain-Python loop, about 40 us a step, runs each rule once (a rule cover) rather than every
    PTO: the teacher-forced test already checks every step of every one."""
    task, model, instances, traces = compiled
    for inst in (instances[i] for i in rule_cover(task.agent, traces)):
        layout = task.layout(inst)
        cells = closed_loop(model, layout, task.max_steps(inst))
        assert np.array_equal(cells, run_table(task.agent, layout, task.max_steps(inst)).cells)
        assert task.read_answer(cells, layout.answer) == task.expected(inst)


def incrementer() -> Transducer:
    """Binary +1 at the head (least significant digit), written as a literal table.

    The final state is listed first, so the initial state is index 1 and h0 = e_1.
    """
    rules = [Rule("carry", "1", "carry", "0", "L"),
             Rule("carry", "0", "halt", "1", "S"),
             Rule("carry", "_", "halt", "1", "S")]
    return make_transducer(["halt", "carry"], ["0", "1", "_"], rules,
                           initial="carry", final="halt", blank="_", name="inc")


def test_literal_incrementer_compiles_and_runs():
    agent = incrementer()
    model = compile_agent(agent)
    assert torch.equal(model.h0, torch.tensor([0.0, 1.0]))
    assert torch.equal(model.A[1], torch.tensor([[0.0, 0.0], [0.0, 1.0]]))  # reading 1 keeps carrying
    layout = Layout(np.array([[2, 1, 0, 1, 1]], dtype=np.uint8), head=(0, 4), answer=(0, 4))  # _1011
    run = run_table(agent, layout, 10, record=True)
    assert run.outcome == Outcome.HALTED and run.cells.tolist() == [[2, 1, 1, 0, 0]]  # _1100
    assert_reproduces(model, agent, [run.trace.astype(np.int64)])
    assert np.array_equal(closed_loop(model, layout, 10), run.cells)


def random_transducer(seed: int, d: int, k: int, coverage: float = 0.85) -> Transducer:
    """A random, partial agent; the initial state is not necessarily index 0."""
    rng = np.random.default_rng(seed)
    states = [f"q{i}" for i in range(d - 1)] + ["halt"]
    alphabet = [chr(ord("a") + j) for j in range(k - 1)] + ["_"]
    rules = []
    for q in states[:-1]:
        for s in alphabet:
            if rng.random() < coverage:
                nxt = states[rng.integers(d)]
                move = "S" if nxt == "halt" else "UDLR"[rng.integers(4)]
                rules.append(Rule(q, s, nxt, alphabet[rng.integers(k)], move))
    return make_transducer(states, alphabet, rules, initial=states[rng.integers(d - 1)],
                           final="halt", blank="_", name=f"random{seed}")


def random_traces(agent: Transducer, seed: int, count: int = 20, length: int = 40) -> list[np.ndarray]:
    """PTOs on random read sequences, cut where the agent halts or has no rule."""
    rng = np.random.default_rng(seed)
    nxt, wrt, mov = agent.tables()
    traces = []
    for _ in range(count):
        q, rows = agent.states.index(agent.initial), []
        for x in rng.integers(agent.k, size=length):
            if mov[q, x] < 0:
                break
            rows.append((x, wrt[q, x], mov[q, x]))
            if mov[q, x] == MOVE_INDEX["S"]:
                break
            q = nxt[q, x]
        traces.append(np.array(rows, dtype=np.int64).reshape(-1, 3))
    return [t for t in traces if len(t)]


@pytest.mark.parametrize(("seed", "d", "k"), [(0, 2, 1), (1, 3, 2), (2, 5, 3), (3, 8, 4), (4, 12, 6)])
def test_random_transducer_compiles_exactly(seed, d, k):
    agent = random_transducer(seed, d, k)
    model = compile_agent(agent)
    traces = random_traces(agent, seed)
    assert traces
    assert_reproduces(model, agent, traces)


def test_compile_refuses_non_transducers():
    with pytest.raises(TypeError, match="needs a Transducer"):
        compile_agent({"states": ["q0"]})
