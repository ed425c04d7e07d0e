"""Seed 002's experiments at small scale: the minimal networks' frozen parts against Python, a
hand-set network that must be exact (at the training width and beyond), tiny training runs, the
library-model baseline on add2, and the experiment command's files."""

from __future__ import annotations

import json
import random

import pytest
import torch

from cli_helpers import assert_one_line_error, run
from dfst.baselines.library.circuits import ripple_sub
from dfst.baselines.library.experiment import DepthConfig, RoutedFib, run_depth
from dfst.baselines.library.ops_experiment import MinimalNet, answer_bits, operand_bits, table_sub
from dfst.baselines.library_model import CANDIDATES, discrete_answer, soft_answer_bits
from dfst.tasks.base import Instance


def test_table_and_circuit_subtract_like_python():
    width = 3
    a, b = torch.cartesian_prod(torch.arange(8), torch.arange(8)).T
    bits = operand_bits(a, b, width)
    want = torch.tensor([[((x - y) % 8) >> i & 1 for i in range(width)]
                         for x, y in zip(a.tolist(), b.tolist())])
    for answer in (table_sub(bits[..., 0], bits[..., 1]), ripple_sub(bits[..., 0], bits[..., 1])):
        assert torch.equal(answer.round().long(), want)


def _routing_net(arm: str) -> MinimalNet:
    """Operand x = a, y = b (sharp sigmoids), answer bit read as is: the exact network."""
    net = MinimalNet(arm)
    with torch.no_grad():
        net.route.weight.copy_(torch.tensor([[20.0, 0.0], [0.0, 20.0]]))
        net.route.bias.fill_(-10.0)
        net.read.weight.fill_(20.0)
        net.read.bias.fill_(-10.0)
    return net


def test_hand_set_network_is_exact_and_the_circuit_runs_at_any_width():
    rng = random.Random(1)
    for arm, width in (("table", 5), ("circuit", 5), ("circuit", 40)):
        a = torch.tensor([rng.randrange(1 << min(width, 62)) for _ in range(64)])
        b = torch.tensor([rng.randrange(1 << min(width, 62)) for _ in range(64)])
        guess = (_routing_net(arm)(operand_bits(a, b, width)) > 0).long()
        assert torch.equal(guess, answer_bits(a, b, width)), (arm, width)


def test_routed_fib_with_the_right_route_answers_like_python():
    base, depth = 16, 1
    model = RoutedFib(DepthConfig(base=base, depth=depth))
    with torch.no_grad():
        model.route.copy_(torch.tensor([[30.0, 0.0], [0.0, 30.0]]))  # r0 = a, r1 = b
        model.read.weight.copy_(torch.eye(base))
        model.read.bias.zero_()
    pairs = [(a, b) for a in range(base) for b in range(base)]
    want = []
    for a, b in pairs:
        for _ in range(depth):
            a, b = b, (a + b) % base
        want.append(b)
    a, b = torch.tensor(pairs).T
    assert model(a, b).argmax(-1).tolist() == want


def test_a_depth_run_records_its_history_and_restores_the_dtype():
    before = torch.get_default_dtype()
    result = run_depth(DepthConfig(base=16, depth=1, epochs=1), train_samples=32)
    assert torch.get_default_dtype() == before
    assert len(result["test_accuracy"]) == len(result["train_accuracy"]) == 1
    assert result["train_samples"] == 32 and result["test_samples"] == 256 - int(0.7 * 256)


def test_library_candidates_on_the_machine_and_interpreter_match_python():
    rng = random.Random(2)
    pairs = [Instance(format(rng.randrange(8), "b"), format(rng.randrange(8), "b")) for _ in range(12)]
    soft = soft_answer_bits(CANDIDATES["add2"], pairs, 3)
    assert bool((soft.max(-1).values == 1).all())  # one-hot: the compiled program is exact
    for row, pair in enumerate(pairs):
        total = int(pair.a, 2) + int(pair.b, 2)
        assert sum(int(bit) << i for i, bit in enumerate(soft[row].argmax(-1))) == total
    wide = Instance(format(rng.getrandbits(300), "b"), format(rng.getrandbits(300), "b"))
    assert discrete_answer(CANDIDATES["add2"], wide) == format(int(wide.a, 2) + int(wide.b, 2), "b")
    assert discrete_answer(CANDIDATES["drop-carry"], Instance("11", "1")) == "10"  # 3 + 1, carries lost


# About a CPU minute: it records the recipe's 392 PTO instances and trains through the soft machine.
@pytest.mark.slow
def test_library_model_baseline_selects_add2(tmp_path, capsys):
    out = tmp_path / "lm.json"
    code, _, _ = run(capsys, "baseline", "library-model", "add2", "--config", "eval_digits=10",
                     "--config", "max_steps=4", "--config", "batch=4", "--out", str(out), "--no-progress")
    result = json.loads(out.read_text())
    assert code == 0 and result["details"]["selected"] == "add2" and result["robust_lg"] == 10


def test_ops_experiment_command_writes_both_arms(tmp_path, capsys):
    code, out, _ = run(capsys, "library", "experiment", "ops", "--width", "3", "--epochs", "1",
                       "--test-pairs", "8", "--out", str(tmp_path), "--plot", str(tmp_path / "ops.png"))
    result = json.loads((tmp_path / "ops_w3.json").read_text())
    assert code == 0 and [arm["arm"] for arm in result["arms"]] == ["table", "circuit"] * 5
    assert [s["seeds"] for s in result["summary"]] == [5, 5]
    assert (tmp_path / "ops.png").stat().st_size > 0 and "circuit" in out


def test_unknown_experiment_is_one_line_error(capsys):
    code, _, err = run(capsys, "library", "experiment", "nope")
    assert_one_line_error(code, err, "no library experiment 'nope'")


def test_sort2_candidates_on_the_machine_and_interpreter_match_python():
    from dfst.baselines.library_model import SORT2, SORT_CANDIDATES, run_on_interpreter, soft_answer

    rng = random.Random(3)
    strings = [format(rng.randrange(1 << k), f"0{k}b") for k in (1, 2, 3) for _ in range(4)]
    pairs = [Instance(s, "") for s in strings]
    for name, order in (("insertion-sort", False), ("sort-descending", True)):
        soft = soft_answer(SORT2, SORT_CANDIDATES[name], pairs, 3)
        assert bool((soft.max(-1).values == 1).all())  # one-hot: the compiled program is exact
        for row, s in enumerate(strings):
            want = "".join(sorted(s, reverse=order))
            assert "".join(str(int(v)) for v in soft[row, :len(s)].argmax(-1)) == want, (name, s)
    wide = format(rng.getrandbits(200), "0200b")
    got = run_on_interpreter(SORT2, SORT_CANDIDATES["insertion-sort"], Instance(wide, ""))
    assert got == "0" * wide.count("0") + "1" * wide.count("1")


def test_library_model_refuses_a_task_without_programs():
    from dfst.baselines.library_model import run as run_library_model
    from dfst.errors import DfstError
    from dfst.tasks import get_task

    with pytest.raises(DfstError, match="add2 and sort2 only"):
        run_library_model(get_task("parity2"))


def test_the_depth_experiment_estimates_the_pruned_run_it_makes():
    """fib uses one table op (add), so a pruned run pays n^2 per step once, not once per table op:
    base 256, which the unpruned estimate refused, fits under the cap."""
    from dfst.baselines.library.execute import check_work, estimate_work
    from dfst.baselines.library.isa import TABLE_OPS
    from dfst.errors import DfstError

    model = RoutedFib(DepthConfig(base=256, depth=1))
    config, lines, samples = model.setup.config, len(model.code), 3 * 2 * 4000 + 256 * 256
    full, pruned = (estimate_work(config, lines, samples, model.steps, ops) for ops in (len(TABLE_OPS), 1))
    assert full - pruned == pytest.approx((len(TABLE_OPS) - 1) * 256 ** 2 * samples * model.steps)
    check_work(config, lines, samples, model.steps, table_ops=1)
    with pytest.raises(DfstError, match="multiply-adds"):
        check_work(config, lines, samples, model.steps)


def test_a_depth_table_over_the_cap_is_refused_before_its_first_row_trains(tmp_path, capsys):
    """Base 256 with every pair at depths 1 and 6: depth 1 fits, depth 6 does not, so nothing trains."""
    import time

    start = time.process_time()
    code, _, err = run(capsys, "library", "experiment", "depth", "--base", "256", "--depths", "1,6",
                       "--epochs", "3", "--out", tmp_path, "--plot", tmp_path / "p.png")
    assert_one_line_error(code, err, "multiply-adds")
    assert time.process_time() - start < 10 and list(tmp_path.iterdir()) == []


def test_test_samples_limit_the_held_out_pairs_scored():
    row = run_depth(DepthConfig(base=16, depth=1, epochs=1), train_samples=10, test_samples=7)
    assert (row["train_samples"], row["test_samples"]) == (10, 7) and len(row["test_accuracy"]) == 1
