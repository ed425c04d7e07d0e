"""Extraction: agent -> compiled DFST -> automaton read off its states -> the same behaviour."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest

from cli_helpers import TRAIN_ADD2, assert_one_line_error, run, run_json
from dfst.data import cover_dataset
from dfst.errors import DfstError
from dfst.extract import METHODS, Extraction, extract, register_method
from dfst.grid.rollout import DfstWeights, run_table
from dfst.model import teacher_forced_points
from dfst.model.compile import compile_agent
from dfst.tasks import TASKS

SAMPLES = {"add2": 20, "add10": 225, "mult2": 40, "mult10": 150}


@functools.cache
def covering(name: str, samples: int, max_digits: int):
    """cover_dataset(task, samples, max_digits, seed 0), built once per module: its rule cover searches
    a pool of a thousand runs (2 s), and the datasets are only read."""
    return cover_dataset(TASKS[name], samples, max_digits, 0)


@pytest.mark.parametrize("method", ["merge", "cluster", "lockstep"])
@pytest.mark.parametrize("name", list(SAMPLES))
def test_round_trip_agent_compile_extract(name, method):
    """Covering PTOs (every expert rule shown) give back the expert, state for state, by every method
    that reads the model."""
    task = TASKS[name]
    data = covering(name, SAMPLES[name], 3)
    found = extract(compile_agent(task.agent, task=name), data, method)
    assert found.method == method
    assert (found.agent.d, found.pairs) == (task.agent.d, len(task.agent.rules))
    _assert_behaves_like(task, found.agent)


def test_rpni_learns_from_the_ptos_alone():
    task = TASKS["add2"]
    found = extract(None, covering("add2", 40, 3), "rpni", task="add2")
    assert found.method == "rpni" and found.radius is None
    _assert_behaves_like(task, found.agent)


def test_every_form_of_a_model_gives_the_same_automaton():
    task = TASKS["add2"]
    model, data = compile_agent(task.agent, task="add2"), covering("add2", 20, 3)
    traces = [data.trace(i) for i in range(data.samples)]
    forms = [model, model.numpy_weights(), DfstWeights.of(*model.numpy_weights())]
    agents = [extract(form, traces, task="add2").agent.to_dict() for form in forms]
    assert agents[0] == agents[1] == agents[2]


def test_bad_requests_are_one_line_errors():
    task = TASKS["add2"]
    model, data = compile_agent(task.agent, task="add2"), covering("add2", 5, 2)
    with pytest.raises(DfstError, match="unknown extraction method 'nope'"):
        extract(model, data, "nope")
    with pytest.raises(DfstError, match="reads PTOs"):
        extract(model, None, "merge")
    with pytest.raises(DfstError, match="reads a model"):
        extract(None, data, "lockstep", task="add2")
    with pytest.raises(DfstError, match="k=3 symbols, the agent 11"):
        extract(model, data, agent=TASKS["add10"].agent)


def test_a_registered_method_is_called_with_the_weights_traces_and_reference(monkeypatch):
    task = TASKS["add2"]
    seen = {}

    def first_rules(weights, traces, reference, *, note):
        seen.update(k=weights[0].shape[0], traces=len(traces), note=note)
        return Extraction(reference, None, reference.d, len(reference.rules), "expert")

    monkeypatch.setattr("dfst.extract.METHODS", dict(METHODS))
    register_method("expert", first_rules)
    found = extract(compile_agent(task.agent), covering("add2", 5, 2), "expert", task="add2", note=1)
    assert found.agent is task.agent and seen == {"k": 3, "traces": 5, "note": 1}
    with pytest.raises(DfstError, match="exists already"):
        register_method("expert", first_rules)


def _assert_behaves_like(task, agent) -> None:
    """The same run as the expert (outcome, steps, final grid) on hard and random instances."""
    for n in range(1, 7):
        for inst in task.hard_instances(n) + task.random_instances(n, 3, seed=n):
            layout = task.layout(inst)
            got = run_table(agent, layout, task.max_steps(inst))
            want = run_table(task.agent, layout, task.max_steps(inst))
            assert (got.outcome, got.steps) == (want.outcome, want.steps)
            assert np.array_equal(got.cells, want.cells)


def test_states_of_a_growing_model_stay_finite_on_long_ptos():
    """A model whose |h| grows 1024x a step leaves float64's range (2^1024) after 103 steps; its
    scaled states are still exactly those of the model that does not grow."""
    task = TASKS["mult2"]
    data = covering("mult2", 3, 6)
    assert max(len(data.trace(i)) for i in range(data.samples)) > 110
    A, B, C, h0 = compile_agent(task.agent).numpy_weights()
    traces = [data.trace(i) for i in range(data.samples)]
    plain, steps = teacher_forced_points((A, B, C, h0), traces)
    grown, grown_steps = teacher_forced_points((A * 1024, B, C, h0), traces)
    assert np.isfinite(grown).all() and np.array_equal(grown, plain) and grown_steps == steps


def test_a_model_with_one_state_has_no_conflict_free_automaton():
    task = TASKS["add2"]
    k, d = len(task.alphabet), 4
    A = np.broadcast_to(np.eye(d, dtype=np.float32), (k, d, d)).copy()  # h never changes
    weights = (A, np.zeros((k, k, d), np.float32), np.zeros((k, 5, d), np.float32), np.eye(d)[0])
    for method in ("merge", "cluster"):
        with pytest.raises(DfstError, match="conflict-free"):
            extract(weights, covering("add2", 5, 2), method, task="add2")


def test_extract_command_writes_an_evaluable_checkpoint(capsys, tmp_path):
    run_dir = tmp_path / "run"
    run_json(capsys, *TRAIN_ADD2, "--out", run_dir, "--iters", "5", "--eval-every", "0",
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
    assert_one_line_error(code, err, "config.json is missing")


@pytest.mark.parametrize("source", ["run", "checkpoint"])
def test_extract_refuses_an_output_it_may_not_write_before_reading_anything_off(capsys, tmp_path, monkeypatch,
                                                                              source):
    import dfst.extract.saved
    from dfst.model.checkpoint import save_checkpoint

    model = tmp_path / "model"
    save_checkpoint(compile_agent(TASKS["add2"].agent), model, {"source": "test"})
    target = model
    if source == "run":  # a run directory: its trained weights
        target = tmp_path / "run"
        run_json(capsys, *TRAIN_ADD2, "--out", target, "--iters", "2", "--eval-every", "0",
                 "--eval-digits", "2")
    users = tmp_path / "users"
    users.mkdir()
    (users / "notes.txt").write_text("mine")
    out = users if source == "run" else users / "notes.txt"

    def never(*args, **kwargs):
        raise AssertionError("extraction ran before the output was checked")

    monkeypatch.setattr(dfst.extract.saved, "extract_from", never)
    code, _, err = run(capsys, "extract", target, "--out", out, "--force")
    assert_one_line_error(code, err, "notes.txt")
    assert (users / "notes.txt").read_text() == "mine"
