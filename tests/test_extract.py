"""Extraction: agent -> compiled DFST -> automaton read off its states -> the same behaviour."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli_helpers import assert_one_line_error, run, run_json
from dfst.compile import compile_agent
from dfst.errors import DfstError
from dfst.extract import extract_automaton, teacher_forced_points
from dfst.rollout import run_table
from dfst.tasks import TASKS
from dfst.tasks.base import BLANK
from dfst.train_data import cover_dataset


@pytest.mark.parametrize("name,samples", [("add2", 20), ("add10", 225), ("mult2", 40), ("mult10", 150)])
def test_round_trip_agent_compile_extract(name, samples):
    """Covering PTOs (every expert rule shown) give back the expert, state for state."""
    task = TASKS[name]
    data = cover_dataset(task, samples, 3, 0)
    found = extract_automaton(compile_agent(task.agent).numpy_weights(), data, task.alphabet, BLANK)
    assert (found.agent.d, found.pairs) == (task.agent.d, len(task.agent.rules))
    for n in range(1, 7):
        for inst in task.hard_instances(n) + task.random_instances(n, 3, seed=n):
            layout = task.layout(inst)
            got = run_table(found.agent, layout, task.max_steps(inst))
            want = run_table(task.agent, layout, task.max_steps(inst))
            assert (got.outcome, got.steps) == (want.outcome, want.steps)
            assert np.array_equal(got.cells, want.cells)


def test_states_of_a_growing_model_stay_finite_on_long_ptos():
    """A model whose |h| grows 1024x a step leaves float64's range (2^1024) after 103 steps; its
    scaled states are still exactly those of the model that does not grow."""
    task = TASKS["mult2"]
    data = cover_dataset(task, 3, 6, 0)
    assert max(len(data.trace(i)) for i in range(data.samples)) > 110
    A, B, C, h0 = compile_agent(task.agent).numpy_weights()
    plain, steps = teacher_forced_points((A, B, C, h0), data)
    grown, grown_steps = teacher_forced_points((A * 1024, B, C, h0), data)
    assert np.isfinite(grown).all() and np.array_equal(grown, plain) and grown_steps == steps


def test_a_model_with_one_state_has_no_conflict_free_automaton():
    task = TASKS["add2"]
    k, d = len(task.alphabet), 4
    A = np.broadcast_to(np.eye(d, dtype=np.float32), (k, d, d)).copy()  # h never changes
    weights = (A, np.zeros((k, k, d), np.float32), np.zeros((k, 5, d), np.float32), np.eye(d)[0])
    with pytest.raises(DfstError, match="conflict-free"):
        extract_automaton(weights, cover_dataset(task, 10, 2, 0), task.alphabet, BLANK)


def test_extract_command_writes_an_evaluable_checkpoint(capsys, tmp_path):
    run_dir = tmp_path / "run"
    run_json(capsys, "train", "add2", "--out", run_dir, "--iters", "5", "--eval-every", "0",
             "--eval-digits", "2", "--noise", "0.05")
    out = tmp_path / "extracted"
    code, stdout, err = run(capsys, "extract", run_dir, "--out", out, "--json")
    if code == 0:  # 5 iterations rarely give a conflict-free automaton; when they do, it is saved
        assert (out / "agent.json").exists() and (out / "model.safetensors").exists()
        code, stdout, _ = run(capsys, "eval", out, "--digits", "2", "--json")
        assert code in (0, 1) and json.loads(stdout)["task"] == "add2"  # 1: not exact, an honest answer
    else:
        assert_one_line_error(code, err, "conflict-free")
    code, _, err = run(capsys, "extract", tmp_path, "--out", tmp_path / "x")
    assert_one_line_error(code, err, "not a dfst train run")
