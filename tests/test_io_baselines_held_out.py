"""The input/output baselines (LSTM, Neural GPU, NTM, TP-transformer, the program library) are never
scored on a pair they trained on: each run's training pairs are held out of its protocol, as a
DFST's PTOs are. And their record says what they ran on."""

import pytest
import torch

from dfst.baselines import io_pairs, library_model, lstm, ntm, tp_transformer
from dfst.baselines import neural_gpu as ng
from dfst.tasks import get_task

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py

# Training on 1- and 2-digit operands draws most pairs of that length, which the first length's
# hard set (0 + 0, 1 + 1, one-digit operands, ...) and random pairs also hold.
SHORT = {
    "lstm": {"hidden": 8, "embed": 4, "steps": 6, "batch": 16, "max_train_digits": 2, "eval_top": 4},
    "neural-gpu": {"channels": 4, "steps": 6, "batch": 16, "start_digits": 1, "max_digits": 2,
                   "eval_digits": "2", "eval_random": 10},
    "ntm": {"controller": 8, "memory": 8, "word": 4, "steps": 6, "batch": 16, "start_digits": 1,
            "max_digits": 2, "eval_digits": "2", "eval_random": 10},
    "tp-transformer": {"n_layer": 1, "d_model": 16, "n_head": 2, "masked_heads": 1, "d_ff": 16,
                       "context": 48, "batch": 8, "steps": 4, "warmup": 1, "min_train_digits": 1,
                       "max_train_digits": 1, "eval_factors": "1", "eval_random": 10},
    "library-model": {"max_train_digits": 2, "batch": 16, "max_steps": 3, "eval_digits": "2"},
}


def _record_training_pairs(monkeypatch, trained: set) -> None:
    """Every pair a baseline draws for training lands in `trained`."""
    sample_pairs, draw = lstm.sample_pairs, io_pairs.PairSampler.draw  # the library's is the LSTM's
    operands = tp_transformer.ProgramTask.sample_operands

    def lstm_pairs(*args, **kwargs):
        pairs = sample_pairs(*args, **kwargs)
        trained.update((p.a, p.b) for p in pairs)
        return pairs

    def sampler_draw(self, *args):
        pairs = draw(self, *args)
        trained.update((p.a, p.b) for p in pairs)
        return pairs

    def program_operands(self, *args):
        pair = operands(self, *args)
        trained.add(pair)
        return pair
    monkeypatch.setattr(lstm, "sample_pairs", lstm_pairs)
    monkeypatch.setattr(library_model, "sample_pairs", lstm_pairs)
    monkeypatch.setattr(io_pairs.PairSampler, "draw", sampler_draw)
    monkeypatch.setattr(tp_transformer.ProgramTask, "sample_operands", program_operands)


def _record_scored_pairs(monkeypatch, module, factory: str, scored: set) -> None:
    """Every pair `module`'s predictor is asked to answer lands in `scored`."""
    make = getattr(module, factory)

    def recording(*args, **kwargs):
        predict = make(*args, **kwargs)

        def asked(instances):
            scored.update((inst.a, inst.b) for inst in instances)
            return predict(instances)
        return asked
    monkeypatch.setattr(module, factory, recording)


@pytest.mark.parametrize("name, module, factory, task", [
    ("lstm", lstm, "predictor", "add2"),
    ("neural-gpu", ng, "make_predictor", "add2"),
    ("ntm", ntm, "make_predictor", "mult2"),
    ("tp-transformer", tp_transformer, "make_predictor", "add10"),
])
def test_an_io_baseline_is_never_scored_on_a_pair_it_trained_on(monkeypatch, name, module, factory, task):
    trained, scored = set(), set()
    _record_training_pairs(monkeypatch, trained)
    _record_scored_pairs(monkeypatch, module, factory, scored)
    result = module.run(get_task(task), seed=3, config=SHORT[name], progress=False)
    first = result.levels[0]
    assert scored and trained and not scored & trained
    assert first["excluded"] > 0  # the training pairs were in the protocol's draw, and left out
    assert result.details["stopped_by"]


@pytest.mark.parametrize("name, module, task", [
    ("lstm", lstm, "add2"), ("neural-gpu", ng, "add2"), ("ntm", ntm, "mult2"),
    ("tp-transformer", tp_transformer, "add10"), ("library-model", library_model, "add2")])
def test_the_hardware_recorded_is_the_thread_count_training_ran_with(name, module, task):
    before = torch.get_num_threads()
    torch.set_num_threads(2)  # the process's own count; the run's config asks for one thread
    try:
        result = module.run(get_task(task), seed=0, config={**SHORT[name], "threads": 1}, progress=False)
    finally:
        torch.set_num_threads(before)
    assert result.hardware.endswith(" x1 threads")


@pytest.mark.parametrize("name", ["lstm", "neural-gpu", "ntm", "tp-transformer"])
def test_a_budget_that_cannot_run_is_refused_before_training(name):
    from dfst.baselines.job import plan_baseline
    from dfst.errors import DfstError

    task = "add10" if name == "tp-transformer" else "add2"
    with pytest.raises(DfstError, match="eval_seconds must be a positive"):
        plan_baseline(name, task, config=["eval_seconds=0"])


def test_the_program_library_is_never_scored_on_a_pair_it_trained_on(monkeypatch):
    trained, scored = set(), set()
    _record_training_pairs(monkeypatch, trained)
    interpret = library_model.run_on_interpreter

    def asked(layout, source, instance):
        scored.add((instance.a, instance.b))
        return interpret(layout, source, instance)
    monkeypatch.setattr(library_model, "run_on_interpreter", asked)
    result = library_model.run(get_task("add2"), seed=3, config=SHORT["library-model"], progress=False)
    assert scored and trained and not scored & trained
    assert result.levels[0]["excluded"] > 0 and result.samples == len(trained)


def test_rpni_and_edsm_automata_are_never_scored_on_the_operands_of_their_ptos():
    from dfst.baselines import rpni

    task = get_task("add2")
    short = {(i.a, i.b) for i in task.hard_instances(10) if i.length < 4}  # pairs a PTO may hold
    left_out = sum((i.a, i.b) in short for i in task.hard_instances(10))
    plain = rpni.evaluate_agent(task, task.agent, (10,), random=2)["levels"][0]
    held = rpni.evaluate_agent(task, task.agent, (10,), random=2, trained_on=short)["levels"][0]
    assert left_out > 0 and held["excluded"] == left_out and held["hard"] == plain["hard"] - left_out
    _, _, pairs = rpni.learn(task, 5, {**rpni.DEFAULTS, "max_digits": 3}, seed=0)
    assert pairs == {(a, b) for a, b in rpni.SAMPLERS[rpni.DEFAULTS["sampler"]](task, 5, 3, 0).operands}
