"""Turing-Program transformer baseline: scratchpads against Python integers, Hard-ALiBi masking,
the sliding-window cache against the full forward pass, training, determinism and the run record."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
import torch

from cli_helpers import run_json
from dfst.baselines import tp_mult_scratchpad as tpm
from dfst.baselines import tp_scratchpad as tp
from dfst.baselines import tp_transformer as tpt
from dfst.errors import DfstError
from dfst.protocol.instances import hard_at
from dfst.results import Result
from dfst.tasks import get_task

ADD, MULT = tpt.PROGRAMS["add10"], tpt.PROGRAMS["mult10x1"]
TINY = {"n_layer": 2, "d_model": 32, "n_head": 4, "masked_heads": 2, "d_ff": 64, "context": 48,
        "batch": 4, "steps": 6, "min_train_digits": 1, "max_train_digits": 2, "warmup": 2,
        "eval_factors": "1,2", "eval_random": 2}


def tiny_model(**over) -> tpt.TPTransformer:
    torch.manual_seed(0)
    cfg = {"n_layer": 2, "d_model": 32, "n_head": 4, "masked_heads": 2, "d_ff": 64} | over
    return tpt.TPTransformer(tpt.TPConfig(**cfg)).eval()


def random_pairs(count: int, seed: int = 1):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield tuple(tp.random_operand(rng, int(rng.integers(1, 30))) for _ in range(2))


def test_program_answer_is_the_integer_sum():
    for a, b in [*random_pairs(300), ("9" * 12, "1"), ("0", "0"), ("5", "5"), ("0002", "0002")]:
        program = tp.addition_program(a, b)
        assert tp.decode(tp.encode(program)) == program
        continuation = program[len(tp.prompt_text(a, b)):]
        assert tp.parse_answer(continuation) == str(int(a) + int(b))
        assert len(continuation) <= tp.token_cap(len(a), len(b))


def test_each_line_is_one_machine_step():
    """Line k holds the operands without their last k digits and the k low result digits."""
    for a, b in random_pairs(100, seed=2):
        lines = tp.addition_program(a, b)[1:].split(tp.LINE)
        total = int(a) + int(b)
        for k, line in enumerate(lines[:-1]):
            operands, result = line.split(tp.EQUALS)
            assert operands == f"{a[:max(0, len(a) - k)]}{tp.PLUS}{b[:max(0, len(b) - k)]}"
            assert len(result) == k and all(ch in tp.DIGITS for ch in result[1:])
            if k:  # the newest digit carries the carry out of column k-1
                low = int(a[-k:] or 0) + int(b[-k:] or 0)
                assert (result[0] in tp.CARRY_DIGITS) == (low >= 10 ** k)
                assert int(tp._plain(result[0]) + result[1:]) == total % 10 ** k


def test_parse_answer_rejects_unreadable_output():
    assert tp.parse_answer("12+3=4|") is None          # no EOS
    assert tp.parse_answer("+=c|#") is None            # empty answer line
    assert tp.parse_answer("+=c|1c#") is None          # carry letter in the answer
    assert tp.parse_answer("+=2|0042#") == "42"


def test_loss_mask_skips_exactly_the_prompt():
    program = tp.addition_program("12", "345")
    mask = tp.loss_mask(program)
    assert mask == [i >= len(tp.prompt_text("12", "345")) for i in range(len(program))]


def test_forward_shapes():
    model = tiny_model()
    logits, (k_pos, valid, cache) = model(torch.randint(0, len(tp.VOCAB), (3, 11)))
    assert logits.shape == (3, 11, len(tp.VOCAB))
    assert len(cache) == 2 and cache[0][0].shape == (3, 4, 11, 8) and valid.shape == (3, 11)


def test_hard_alibi_mask_per_head():
    reach = tpt.TPConfig(n_head=4, masked_heads=3).reach()
    assert reach.tolist() == [1.0, 2.0, 3.0, math.inf]
    pos = torch.arange(8)
    allowed = tpt.attention_mask(pos, pos, reach, torch.ones(1, 8, dtype=torch.bool))[0]
    for h, m in enumerate(reach.tolist()):
        for i in range(8):
            assert allowed[h, i].nonzero().flatten().tolist() == [j for j in range(8) if 0 <= i - j < m]


def test_windowed_heads_get_no_gradient_from_far_tokens():
    """One layer, every head windowed (m = 1, 2): logits at i depend on tokens i-1 and i only."""
    model = tiny_model(n_layer=1, n_head=2, masked_heads=2)
    x = model.embed(torch.randint(0, 20, (1, 10))).detach().requires_grad_(True)
    pos = torch.arange(10)
    mask = tpt.attention_mask(pos, pos, model.reach, torch.ones(1, 10, dtype=torch.bool))
    out, _ = model.blocks[0](x, mask)
    out[0, 7].sum().backward()
    moved = (x.grad[0].abs().sum(-1) > 0).nonzero().flatten().tolist()
    assert moved == [6, 7]


def test_sliding_window_cache_equals_windowed_forward():
    """Decoding with a cache trimmed to the window is the full forward pass under the window mask."""
    model, window = tiny_model(), 7
    seq = torch.tensor([tp.encode(tp.addition_program("4096", "587"))])
    full, _ = model(seq, window=window)
    logits, cache = model(seq[:, :5], window=window)
    steps = [logits[:, -1]]
    for i in range(5, seq.shape[1]):
        cache = tpt.trim_cache(cache, window - 1)
        logits, cache = model(seq[:, i:i + 1], window=window, past=cache, positions=torch.tensor([i]))
        steps.append(logits[:, -1])
    assert torch.allclose(torch.stack(steps, 1), full[:, 4:], atol=1e-5)
    assert not torch.allclose(full, model(seq)[0], atol=1e-3)  # the window did cut something


def test_left_padding_does_not_change_a_prompt():
    model = tiny_model()
    short, long = tp.encode(tp.prompt_text("12", "7")), tp.encode(tp.prompt_text("123456", "7"))
    batched = tpt.generate(model, [short, long], caps=[12, 12], window=64)
    alone = tpt.generate(model, [short], caps=[12], window=64)
    assert batched[0] == alone[0]


def test_generation_stops_at_its_cap():
    model = tiny_model()
    prompts = [tp.encode(tp.prompt_text("1", "2")), tp.encode(tp.prompt_text("33", "44"))]
    out = tpt.generate(model, prompts, caps=[3, 5], window=32)
    assert all(len(o) <= cap for o, cap in zip(out, [3, 5]))
    assert all(len(o) == cap or o[-1] == tp.EOS_ID for o, cap in zip(out, [3, 5]))


def test_loss_and_training_steps_lower_the_loss():
    cfg = tpt.resolve_config(TINY)
    model = tiny_model().train()
    batch = tpt.sample_batch(np.random.default_rng(0), cfg, 2, set(), ADD)
    assert batch[0].shape == batch[1].shape == batch[2].shape == (4, 48)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    first = tpt.loss_on(model, *batch)
    assert math.isclose(first.item(), math.log(len(tp.VOCAB)), rel_tol=0.3)
    for _ in range(10):
        loss = tpt.loss_on(model, *batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert tpt.loss_on(model, *batch).item() < 0.8 * first.item()


def test_schedules():
    cfg = tpt.resolve_config({"steps": 100, "warmup": 10, "lr": 1.0, "min_train_digits": 2,
                              "max_train_digits": 12, "curriculum": 0.5})
    assert tpt.lr_at(0, cfg) == pytest.approx(0.1) and tpt.lr_at(9, cfg) == pytest.approx(1.0)
    assert tpt.lr_at(99, cfg) < 0.02
    assert [tpt.curriculum_digits(s, cfg) for s in (0, 25, 50, 99)] == [2, 7, 12, 12]


def train_tiny(seed: int) -> dict:
    cfg = tpt.resolve_config(TINY)
    torch.manual_seed(seed)
    model = tpt.TPTransformer(tpt.model_config(cfg))
    tpt.train(model, cfg, ADD, seed, progress=False)
    return model.state_dict()


def test_training_is_deterministic():
    a, b, c = train_tiny(3), train_tiny(3), train_tiny(4)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_run_returns_a_well_formed_record():
    result = tpt.run(get_task("add10"), seed=0, config=TINY, progress=False)
    assert isinstance(result, Result) and result.system == "tp-transformer"
    assert result.task == "add10" and result.max_train_digits == 2
    assert [lv["digits"] for lv in result.levels] == [2, 4]
    hard = {n: len(hard_at(get_task("add10"), n, whole=n == 2)) for n in (2, 4)}  # 4: its own length only
    assert all(hard[n := lv["digits"]] - lv["excluded"] <= lv["hard"] <= hard[n] for lv in result.levels)
    assert all(lv["instances"] == lv["hard"] + 2 for lv in result.levels)  # less the training pairs
    assert result.params == sum(p.numel() for p in tiny_model().parameters())
    assert result.samples > 0 and result.train_seconds > 0
    assert result.robust_lg in (0, 2, 4) and result.probabilistic_lg in (0, 2, 4)
    json.dumps(result.to_dict())


def test_bad_input_is_a_one_line_error():
    with pytest.raises(DfstError, match="Turing Programs for add10, mult10x1 only, not mult10"):
        tpt.run(get_task("mult10"), seed=0, config=TINY, progress=False)
    with pytest.raises(DfstError, match="unknown tp-transformer config"):
        tpt.resolve_config({"layers": 3})
    with pytest.raises(DfstError, match="masked_heads"):
        tpt.resolve_config({"masked_heads": 9})
    with pytest.raises(DfstError, match="eval_factors"):
        tpt.eval_digits(tpt.resolve_config({"eval_factors": "1,x"}))


class ProgramOracle:
    """Stands in for the model: its logits always pick the true next token of each row's program."""

    def __init__(self, spec: tpt.ProgramTask, wrong_last_digit: bool = False):
        self.rows, self.spec, self.wrong_last_digit = [], spec, wrong_last_digit

    def __call__(self, tokens, key_valid=None, window=None, past=None, positions=None):
        if past is None:  # prefill: remember each row's prompt
            self.rows = [[t for t in row.tolist() if t != tp.PAD_ID] for row in tokens]
        else:
            for row, t in zip(self.rows, tokens[:, 0].tolist()):
                row.append(t)
        logits = torch.zeros(len(self.rows), 1, len(tp.VOCAB))
        for i, row in enumerate(self.rows):
            logits[i, 0, self.next_token(tp.decode(row))] = 1.0
        cache = (torch.arange(1), torch.ones(len(self.rows), 1, dtype=torch.bool), [])
        return logits, cache

    def next_token(self, text: str) -> int:
        a, b = re.split(r"[+*]", text[1:].split(tp.EQUALS)[0])
        program = self.spec.program(a, b)
        if len(text) >= len(program):
            return tp.EOS_ID
        if self.wrong_last_digit and len(text) == len(program) - 2:  # the answer's last digit
            return tp.TOKEN_ID[str((int(program[len(text)]) + 1) % 10)]
        return tp.TOKEN_ID[program[len(text)]]


# mult10x1's hard set is 3,000 instances a length from 3 digits on: two lengths of it, not three
@pytest.mark.parametrize(("spec", "lengths"), [(ADD, [1, 3, 7]), (MULT, [1, 3])], ids=["add10", "mult10x1"])
def test_predictor_scores_a_perfect_program_writer_as_exact(spec, lengths):
    """Prompting, batched decoding, parsing and the protocol agree with Python's integers end to end."""
    from dfst.baselines.common import evaluate_predictor
    task = spec.task
    scores = evaluate_predictor(task, tpt.make_predictor(ProgramOracle(spec), 64, spec), lengths, random=3)
    assert scores["robust_lg"] == lengths[-1] and all(not lv["failures"] for lv in scores["levels"])
    wrong_writer = ProgramOracle(spec, wrong_last_digit=True)
    wrong = evaluate_predictor(task, tpt.make_predictor(wrong_writer, 64, spec), [3])
    assert wrong["levels"][0]["exact"] == 0 and wrong["robust_lg"] == 0


def test_windows_cut_mid_program_skip_the_lines_they_cannot_predict():
    program = tp.addition_program("453", "789")   # $453+789=|45+78=c|4+7=e2|+=c42|1242#
    cut = program[3:]                               # starts inside the prompt line
    assert tpt.first_predictable(cut) == cut.index("4+7=e2|")
    assert tpt.first_predictable("2|" + program) == 2   # a new program is predictable from its BOS
    assert tpt.first_predictable("+=c42|1242#") == len("+=c42|1242#")


def test_training_windows_only_target_tokens_whose_line_above_is_whole():
    """Every kept target: its line's predecessor starts inside the window (or it is in a new program)."""
    for spec in (ADD, MULT):
        inputs, targets, mask = tpt.sample_batch(np.random.default_rng(5), tpt.resolve_config(TINY), 3,
                                                 set(), spec)
        for row_in, row_t, row_m in zip(inputs.tolist(), targets.tolist(), mask.tolist()):
            window = tp.decode(row_in[:1] + row_t)
            for j, kept in enumerate(row_m):
                before = window[:j + 1]   # what the model sees when predicting target j
                if kept:
                    assert tp.BOS in before or before.count(tp.LINE) >= 2
            assert any(row_m)


def test_mult_run_scores_n_by_one_instances():
    result = tpt.run(tpm.MULT10X1, seed=0, config=TINY, progress=False)
    assert result.task == "mult10x1" and [lv["digits"] for lv in result.levels] == [2, 4]
    hard = {n: len(hard_at(tpm.MULT10X1, n, whole=n == 2)) for n in (2, 4)}
    assert all(hard[n := lv["digits"]] - lv["excluded"] <= lv["hard"] <= hard[n] for lv in result.levels)
    assert all(lv["instances"] == lv["hard"] + 2 for lv in result.levels)
    assert tpt.EXTRA_TASKS["mult10x1"] is tpm.MULT10X1


def test_cli_trains_mult10x1_and_the_table_shows_it(capsys, tmp_path):
    out = tmp_path / "results" / "baselines" / "tp-transformer-mult10x1-s0.json"
    tiny = [x for k, v in TINY.items() for x in ("--config", f"{k}={v}")]
    shown = run_json(capsys, "baseline", "tp-transformer", "mult10x1", "--out", out, "--no-progress", *tiny)
    assert shown["task"] == "mult10x1" and json.loads(out.read_text())["task"] == "mult10x1"
    rows = run_json(capsys, "table", "--results", tmp_path / "results")
    assert [(r["system"], r["task"]) for r in rows] == [("tp-transformer", "mult10x1")]
