"""Neural GPU baseline and its I/O-pair helpers: shapes, loss, training steps, determinism, run()."""

import pytest
import torch

from dfst.baselines import io_pairs
from dfst.baselines import neural_gpu as ng
from dfst.errors import DfstError
from dfst.results import Result
from dfst.tasks import get_task
from dfst.tasks.base import Instance

TINY = {"channels": 8, "steps": 3, "batch": 4, "max_digits": 3, "start_digits": 2, "eval_digits": "2,3",
        "eval_random": 2}
ADD2, MULT2 = get_task("add2"), get_task("mult2")


pytestmark = pytest.mark.usefixtures("one_torch_thread")  # tests/conftest.py

def test_encodings_round_trip_the_answer_against_python_integers():
    for task in (ADD2, MULT2):
        for layout in io_pairs.LAYOUTS:
            pairs = io_pairs.PairSampler(task, seed=3).draw(20, 6)
            x, y = io_pairs.encode_batch(task, pairs, layout)
            assert x.shape == y.shape and int(x.max()) < io_pairs.input_symbols(task.base, layout)
            op = (lambda a, b: a + b) if task.operation == "add" else (lambda a, b: a * b)
            expected = [format(op(int(p.a, 2), int(p.b, 2)), "b") for p in pairs]
            assert io_pairs.decode_batch(y, task.base) == expected


def test_aligned_layout_puts_both_digits_in_one_cell():
    x, _ = io_pairs.encode_batch(ADD2, [Instance("110", "1")], "aligned")
    # least significant first: (0,1), (1,none), (1,none), then padding; symbol = a + 3 * b
    assert x.tolist() == [[0 + 3 * 1, 1 + 3 * 2, 1 + 3 * 2, 9]]


def test_decode_answer_strips_leading_zeros_and_rejects_empty():
    assert io_pairs.decode_answer([1, 0, 0, 2, 2], 2) == "1"
    assert io_pairs.decode_answer([0, 0, 2], 2) == "0"
    assert io_pairs.decode_answer([2, 1], 2) is None


def test_sampler_is_seeded_and_counts_distinct_pairs():
    a, b = io_pairs.PairSampler(ADD2, 5), io_pairs.PairSampler(ADD2, 5)
    assert a.draw(30, 4) == b.draw(30, 4)
    c = io_pairs.PairSampler(ADD2, 6)
    pairs = c.draw(200, 1) + c.draw(100, 7)
    assert c.distinct == len({(p.a, p.b) for p in pairs}) < 300
    assert max(len(p.a) for p in pairs) == 7


def test_curriculum_grows_then_holds():
    assert [io_pairs.curriculum_digits(s, 10, 2, 12, 0.5) for s in (0, 5, 9)] == [2, 12, 12]


def test_bad_inputs_are_one_line_errors():
    for bad in ("", "4,x", "0"):
        try:
            io_pairs.parse_digits(bad)
        except DfstError as exc:
            assert "\n" not in str(exc)
        else:
            raise AssertionError(f"{bad!r} accepted")
    try:
        ng.merged_config({"chanels": 3})
    except DfstError as exc:
        assert "chanels" in str(exc)
    else:
        raise AssertionError("typo accepted")


def _model(seed=0):
    torch.manual_seed(seed)
    return ng.build_model(ADD2, ng.merged_config({"channels": 8}))


def test_forward_shapes_and_state_width():
    model = _model()
    x = torch.randint(0, model.cfg.symbols_in, (3, 7))
    assert model(x).shape == (3, 7, model.cfg.symbols_out)
    s = model.initial_state(x)
    assert s.shape == (3, 8, 7, 4) and s[..., 1:].abs().sum() == 0


def test_loss_is_cross_entropy_and_zero_for_confident_right_answers():
    target = torch.tensor([[0, 2, 1]])
    logits = torch.full((1, 3, 3), -30.0).scatter(2, target[..., None], 30.0)
    assert ng.sequence_loss(logits, target) < 1e-6
    uniform = torch.zeros(1, 3, 3)
    assert torch.isclose(ng.sequence_loss(uniform, target), torch.log(torch.tensor(3.0)))


def _train_steps(model, x, y, steps, lr=1e-2):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        loss = ng.sequence_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_training_steps_change_weights_and_reduce_loss_on_a_tiny_batch():
    model = _model()
    before = [p.detach().clone() for p in model.parameters()]
    x, y = io_pairs.encode_batch(ADD2, io_pairs.PairSampler(ADD2, 1).draw(8, 3), "aligned")
    losses = _train_steps(model, x, y, 30)
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert losses[-1] < 0.5 * losses[0]


def test_run_is_deterministic_and_well_formed():
    first = ng.run(ADD2, seed=7, config=TINY, progress=False)
    second = ng.run(ADD2, seed=7, config=TINY, progress=False)
    assert isinstance(first, Result)
    assert first.levels == second.levels and first.notes == second.notes
    assert first.system == "neural-gpu" and first.task == "add2" and first.max_train_digits == 3
    assert first.params == sum(p.numel() for p in ng.build_model(ADD2, ng.merged_config(TINY)).parameters())
    assert 0 < first.samples <= TINY["steps"] * TINY["batch"]
    assert [lv["digits"] for lv in first.levels] == [2, 3]
    level = first.levels[0]
    assert level["instances"] == level["hard"] + 2
    assert len(level["failures"]) == level["hard"] - level["hard_exact"]
    assert len(ADD2.hard_instances(2)) - level["excluded"] <= level["hard"] <= len(ADD2.hard_instances(2))
    assert set(first.to_dict()) >= {"system", "task", "samples", "params", "robust_lg", "probabilistic_lg"}


def test_score_ladder_reports_each_level_and_ends_with_the_whole_ladders_scores():
    from dfst.baselines.common import evaluate_predictor

    def predict(instances):  # right except where the longer operand has 5 bits and a leading 1 (every
        return [None if len(longer := max(inst.a, inst.b, key=len)) == 5 and longer.startswith("1")
                else ADD2.expected(inst) for inst in instances]  # random pair, some hard instances)
    seen = []
    config = {"eval_digits": "5,2,3", "eval_random": 3, "eval_seconds": 600.0}
    scores = io_pairs.score_ladder(ADD2, predict, config, set(), 2, on_level=lambda s: seen.append(s))
    assert scores == evaluate_predictor(ADD2, predict, (2, 3, 5), random=3)
    assert [len(s["levels"]) for s in seen] == [1, 2, 3] and seen[-1]["levels"] == scores["levels"]
    assert scores["robust_lg"] == 3 and scores["probabilistic_lg"] == 3
    last = scores["levels"][2]
    assert last["random_exact"] == 0 and last["hard_exact"] > 0
    assert "carry_chain" in [f["name"] for f in last["failures"]]


def test_a_baseline_waiting_for_a_core_is_not_cut_short():
    """A baseline's ladder counts the time its evaluation would take alone: waiting (other jobs on
    the cores) costs wall time, not budget, so the lengths it reaches are the model's own."""
    import time

    from dfst.baselines.common import evaluate_predictor

    def slow_but_right(instances):
        time.sleep(0.3)
        return [ADD2.expected(inst) for inst in instances]

    start = time.perf_counter()
    scores = evaluate_predictor(ADD2, slow_but_right, (2, 3, 5, 8), random=3, time_budget=0.5)
    assert time.perf_counter() - start > 1.0 and scores["stopped_by"] == "completed"
    assert [level["digits"] for level in scores["levels"]] == [2, 3, 5, 8]
