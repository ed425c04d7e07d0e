"""The sequence-model policies on PTOs (lstm-policy, gru-policy, transformer-policy): the batched
closed-loop runner is dfst's engine step for step, training runs and reproduces, configs are checked."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cli_helpers import run_json
from dfst.automata import Transducer, make_transducer, param_count
from dfst.baselines import run_baseline
from dfst.baselines.policy_models import MODELS, PolicyConfig, build_policy, parameters
from dfst.baselines.policy_runner import TablePolicy, rollout_policy, run_policy
from dfst.baselines.policy_train import train_policy
from dfst.errors import DfstError
from dfst.grid.rollout import run_table
from dfst.grid.world import Outcome
from dfst.results import Result
from dfst.studies.mutations import mutants
from dfst.tasks import get_task
from dfst.tasks.base import Instance
from dfst.tasks.solve import solve
from dfst.train import deterministic
from dfst.train.loop import training_data
from dfst.train.recipes import recipe

ADD2, MULT2 = get_task("add2"), get_task("mult2")
NAMES = ("lstm-policy", "gru-policy", "transformer-policy")
TINY = {"steps": 3, "eval_top": 6, "random": 2}  # three Adam steps, lengths 3 and 6


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py


def instances_of(task, n: int) -> list[Instance]:
    """The hard set at n digits and operands of unequal lengths: grids of several shapes in one batch."""
    unequal = task.random_instances(n, 2, seed=1, m=1) + task.random_instances(2, 2, seed=2, m=n)
    return task.hard_instances(n) + unequal


def runs_agree(task, agent, instances, bounds=None) -> list:
    """Run `agent` through the runner and through `run_table`; every run the same. Returns the runs."""
    bounds = bounds or [task.max_steps(inst) for inst in instances]
    ours = run_policy(TablePolicy(agent), [task.layout(inst) for inst in instances], bounds)
    for inst, run, bound in zip(instances, ours, bounds):
        ref = run_table(agent, task.layout(inst), bound)
        assert (run.outcome, run.steps, run.head) == (ref.outcome, ref.steps, ref.head), (inst, bound)
        assert np.array_equal(run.cells, ref.cells)
    return ours


@pytest.mark.parametrize("task", [ADD2, MULT2], ids=lambda t: t.name)
def test_runner_gives_the_experts_answers_and_step_counts(task):
    instances = instances_of(task, 7)
    results = rollout_policy(task, TablePolicy(task.agent), instances)
    for inst, res in zip(instances, results):
        solution = solve(task, inst)
        assert (res.answer, res.steps, res.exact) == (solution.result, solution.run.steps, True)
    runs_agree(task, task.agent, instances)


def test_runner_edge_cases_are_run_tables():
    """A halt on the very last allowed step is a halt, one step less is the step limit; mutants of the
    add2 expert walk off the layout or loop to the bound, and the expert less one rule reaches a missing
    rule (nothing written), each as _run_table has it, also with bounds that end on the step where each
    run stopped (off the layout on the last allowed step is off the layout)."""
    inst = Instance("1011", "111")
    steps = solve(ADD2, inst).run.steps
    runs = runs_agree(ADD2, ADD2.agent, [inst, inst], [steps, steps - 1])
    assert [r.outcome for r in runs] == [Outcome.HALTED, Outcome.STEP_LIMIT]
    outcomes = set()
    instances = instances_of(ADD2, 4)
    for agent in [mutant.apply(ADD2.agent) for mutant in mutants(ADD2.agent)] + partial_agents(ADD2.agent):
        runs = runs_agree(ADD2, agent, instances)
        runs_agree(ADD2, agent, instances, [run.steps for run in runs])
        outcomes |= {run.outcome for run in runs}
    assert outcomes == {Outcome.HALTED, Outcome.STEP_LIMIT, Outcome.OFF_LAYOUT, Outcome.NO_RULE}


def partial_agents(agent: Transducer) -> list[Transducer]:
    """The agent without one of its rules, for each rule."""
    return [make_transducer(agent.states, agent.alphabet, [r for r in agent.rules.values() if r is not rule],
                            initial=agent.initial, final=agent.final, blank=agent.blank)
            for rule in agent.rules.values()]


@pytest.mark.parametrize("kind", list(MODELS))
def test_one_step_at_a_time_is_teacher_forcing(kind):
    """The closed-loop step (recurrent state, KV cache) gives the teacher-forced scores."""
    torch.manual_seed(0)
    model = build_policy(PolicyConfig(kind, 3, 8, layers=2, heads=2)).eval()
    reads = torch.randint(0, 3, (4, 40))  # 40 steps: the KV cache grows twice
    with torch.no_grad():
        writes, moves = model(reads)
        state, stepped = model.initial_state(4), []
        for t in range(reads.shape[1]):
            state, w, m = model.step(state, reads[:, t])
            stepped.append(torch.cat([w, m], -1))
    torch.testing.assert_close(torch.stack(stepped, 1), torch.cat([writes, moves], -1))


@pytest.mark.parametrize("name", NAMES)
def test_a_tiny_run_is_a_result_on_the_dfsts_data(name):
    result = run_baseline(name, "add2", seed=0, config=TINY, progress=False)
    assert result.system.endswith("policy (small)") and result.task == "add2"
    dfst_recipe = recipe("add2", 0)
    assert (result.samples, result.max_train_digits) == (dfst_recipe.samples, dfst_recipe.max_digits)
    assert abs(result.params - param_count(3, 9)) < 0.2 * param_count(3, 9)
    assert result.params == parameters(PolicyConfig(**{k: result.config[k] for k in ("kind", "k", "hidden")}))
    assert result.levels and result.levels[0]["digits"] == 3
    assert Result.from_dict(result.to_dict(), "test").to_dict() == result.to_dict()


def test_the_ptos_sampler_is_the_recipes_by_default_and_stored_by_name():
    default = run_baseline("gru-policy", "add2", seed=0, config=TINY, progress=False)
    assert default.config["sampler"] == recipe("add2", 0).sampler == "contexts"
    cover = run_baseline("gru-policy", "add2", seed=0, config=TINY | {"sampler": "cover"}, progress=False)
    assert cover.config["sampler"] == "cover" and "(cover sampler)" in cover.notes
    assert cover.samples == default.samples and cover.details != default.details  # other PTOs, same count
    again = run_baseline("gru-policy", "add2", seed=0, config=TINY | {"sampler": "contexts"}, progress=False)
    assert again.details == default.details  # a stored config runs again as it ran


def test_training_is_reproducible_bit_for_bit():
    data = training_data(recipe("add2", 0), ADD2)
    config = {"size": "small", "steps": 5, "batch": 8, "lr": 3e-3, "clip": 1.0}
    for kind in MODELS:
        with deterministic(1):
            first, second = (train_policy(kind, ADD2, data, config, seed=3)[0] for _ in range(2))
        pairs = zip(first.state_dict().values(), second.state_dict().values())
        assert all(torch.equal(a, b) for a, b in pairs)
    again = [run_baseline("lstm-policy", "add2", seed=1, config=TINY, progress=False) for _ in range(2)]
    assert again[0].levels == again[1].levels and again[0].details == again[1].details


@pytest.mark.parametrize("name, config, fragment", [
    ("gru-policy", {"size": "huge"}, "size='huge': expected small or large"),
    ("gru-policy", {"sampler": "oracle"}, "sampler='oracle': expected recipe or one of contexts, cover"),
    ("lstm-policy", {"steps": 0}, "steps=0: > 0 expected"),
    ("lstm-policy", {"lr": "fast"}, "lr='fast': expected float"),
    ("lstm-policy", {"max_context": 10}, "unknown lstm-policy config keys: max_context"),
    ("transformer-policy", {"max_context": -1}, "max_context=-1"),
])
def test_a_bad_config_is_a_one_line_error(name, config, fragment):
    with pytest.raises(DfstError) as caught:
        run_baseline(name, "add2", config=config, progress=False)
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


def test_the_cli_stores_a_result_that_dfst_table_shows(capsys, tmp_path):
    out = tmp_path / "results" / "transformer-policy-add2-s0.json"
    shown = run_json(capsys, "baseline", "transformer-policy", "add2", "--out", out, "--no-progress",
                     *(arg for key, value in TINY.items() for arg in ("--config", f"{key}={value}")))
    assert shown["system"] == "Transformer policy (small)" and out.is_file()
    rows = run_json(capsys, "table", "--results", tmp_path / "results")
    assert [(row["system"], row["task"]) for row in rows] == [("Transformer policy (small)", "add2")]


def test_small_and_large_are_two_rows_of_dfst_table(capsys, tmp_path, monkeypatch):
    """The sizes are stored side by side by default (the large one under a name of its own) and shown
    as two rows, each with the DFST recipe's samples."""
    monkeypatch.chdir(tmp_path)
    for size in ("small", "large"):
        run_json(capsys, "baseline", "lstm-policy", "add2", "--no-progress", "--config", f"size={size}",
                 *(arg for key, value in TINY.items() for arg in ("--config", f"{key}={value}")))
    assert sorted(p.name for p in (tmp_path / "results" / "baselines").iterdir()) == [
        "lstm-policy-add2-s0.json", "lstm-policy-large-add2-s0.json"]
    rows = run_json(capsys, "table", "--results", tmp_path / "results")
    samples = recipe("add2", 0).samples
    assert [(row["system"], row["samples"]) for row in rows] == [
        ("LSTM policy (large)", samples), ("LSTM policy (small)", samples)]
