"""Experiment (c): the sentences against Python's arithmetic, the calculator on the machine against
Python, one tiny training epoch, and a LLaMA read from a local directory (never a hub name)."""

from __future__ import annotations

import json

import pytest
import torch

from cli_helpers import assert_one_line_error, run
from dfst.baselines.library.llm_data import OPERATIONS, WordTokenizer, make_problems
from dfst.errors import DfstError

transformers = pytest.importorskip("transformers")

from dfst.baselines.library.llm import Calculator, LlmConfig, local_llama, run_llm  # noqa: E402


def _operands_from_text(text: str) -> tuple[int, int]:
    """The two numbers as the sentence orders them: `subtract B from A` and `take B away from A`
    name the second operand first."""
    x, y = (int(w) for w in text.split() if w.isdigit())
    return (y, x) if text.startswith(("subtract", "take")) else (x, y)


def test_sentences_ask_what_python_computes():
    base = 16
    python = {"add": lambda a, b: (a + b) % base, "sub": lambda a, b: (a - b) % base,
              "mul": lambda a, b: (a * b) % base}
    problems = make_problems(300, base, seed=1)
    assert len({p.text for p in problems}) == 300
    for p in problems:
        a, b = _operands_from_text(p.text)
        assert (a, b) == (p.a, p.b) and p.answer == python[OPERATIONS[p.op]](a, b), p.text
    ids, last = WordTokenizer(base).encode([p.text for p in problems[:5]])
    assert [len(p.text.split()) - 1 for p in problems[:5]] == last and len({len(r) for r in ids}) == 1


def test_calculator_on_the_machine_answers_like_python():
    base = 8
    calculator = Calculator(base)
    a, b = torch.cartesian_prod(torch.arange(base), torch.arange(base)).T
    one_hot = torch.nn.functional.one_hot
    for index, op in enumerate(OPERATIONS):
        select = one_hot(torch.full_like(a, index), len(OPERATIONS)).float()
        got = calculator(select, one_hot(a, base).float(), one_hot(b, base).float()).argmax(-1)
        want = [{"add": x + y, "sub": x - y, "mul": x * y}[op] % base for x, y in zip(a.tolist(), b.tolist())]
        assert got.tolist() == want, op


def test_one_epoch_of_the_tiny_llama_runs_and_records_its_history():
    result = run_llm(LlmConfig(base=8, sentences=40, epochs=1, hidden=32, intermediate=64))
    assert result["train_sentences"] == 28 and len(result["history"]) == 1
    assert 0 <= result["history"][0]["test_accuracy"] <= 100
    assert set(result["history"][0]["test_parse"]) == {"operation", "a", "b"}


def test_a_hub_name_is_refused_and_a_local_directory_is_read(tmp_path):
    with pytest.raises(DfstError, match="not a local directory"):
        local_llama("meta-llama/Llama-3.2-1B")
    from tokenizers import Tokenizer, models, pre_tokenizers

    words = WordTokenizer(8).vocab
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="<pad>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>").save_pretrained(tmp_path)
    config = transformers.LlamaConfig(vocab_size=len(words), hidden_size=32, num_attention_heads=4,
                                      num_key_value_heads=2, num_hidden_layers=1, intermediate_size=64)
    transformers.LlamaModel(config).save_pretrained(tmp_path)
    result = run_llm(LlmConfig(base=8, sentences=20, epochs=1, llama_dir=str(tmp_path)))
    assert len(result["history"]) == 1


def test_llm_command_writes_json_and_figure(tmp_path, capsys):
    code, out, _ = run(capsys, "library", "experiment", "llm", "--base", "8", "--sentences", "30", "--epochs",
                       "1", "--out", str(tmp_path), "--plot", str(tmp_path / "llm.png"))
    result = json.loads((tmp_path / "llm.json").read_text())
    assert code == 0 and result["config"]["base"] == 8 and "epoch 1" in out
    assert (tmp_path / "llm.png").stat().st_size > 0


def test_llm_command_refuses_a_hub_name(tmp_path, capsys):
    code, _, err = run(capsys, "library", "experiment", "llm", "--base", "8", "--sentences", "30",
                       "--llama-dir", "meta-llama/Llama-3.2-1B", "--out", str(tmp_path))
    assert_one_line_error(code, err, "not a local directory")


def test_the_parse_is_scored_against_what_each_sentence_asks():
    """A hand-set parse (operation and operands from the asked triple) scores 100% on every head
    and on the answer; a parse that swaps a and b loses a and b but keeps add's answers."""
    from dfst.baselines.library.llm import _scores

    problems = make_problems(60, 16, seed=1)
    asked = torch.tensor([(p.op, p.a, p.b) for p in problems])

    class Oracle(torch.nn.Module):
        calculator = Calculator(16)

        def __init__(self, swap: bool):
            super().__init__()
            self.swap = swap

        def parse(self, ids, mask, last):
            rows = asked[ids[:, 0]]
            one_hot = torch.nn.functional.one_hot
            a, b = one_hot(rows[:, 1], 16).float(), one_hot(rows[:, 2], 16).float()
            return one_hot(rows[:, 0], 3).float(), *((b, a) if self.swap else (a, b))

    ids = torch.arange(60)[:, None]
    data = (ids, ids, ids[:, 0], torch.tensor([p.answer for p in problems]), asked)
    assert _scores(Oracle(False), data) == {"answer": 100.0, "operation": 100.0, "a": 100.0, "b": 100.0}
    swapped = _scores(Oracle(True), data)
    equal = sum(p.a == p.b for p in problems)
    assert swapped["a"] == swapped["b"] == round(100 * equal / 60, 2) and swapped["operation"] == 100.0
    assert swapped["answer"] >= round(100 * sum(p.op == 0 for p in problems) / 60, 2)


@pytest.mark.parametrize("signal", ["labels", "given-b", "given-op"])
def test_each_training_signal_trains_and_scores_the_networks_own_parse(signal):
    """The probes of what the answer alone cannot teach train one epoch and record the same scores."""
    result = run_llm(LlmConfig(base=8, sentences=40, epochs=1, hidden=32, intermediate=64, signal=signal))
    assert result["config"]["signal"] == signal and len(result["history"]) == 1
    assert set(result["history"][0]["test_parse"]) == {"operation", "a", "b"}


def test_the_labels_signal_teaches_the_parse():
    """Base 4, every sentence: trained on the parse itself, the heads read the operation and the
    operands of held-out sentences far above chance (33%, 25%) within a few epochs."""
    torch.manual_seed(0)
    result = run_llm(LlmConfig(base=4, sentences=144, epochs=8, hidden=32, intermediate=64, signal="labels"))
    parse = result["history"][-1]["test_parse"]
    assert parse["operation"] >= 90 and min(parse["a"], parse["b"]) >= 60, parse


def test_given_b_changes_only_what_training_sees():
    """The same batch: the answer loss with b handed over differs from the answer alone, and the
    labels loss is the three heads' cross-entropies."""
    from dfst.baselines.library.llm import AugmentedLlama, _batch_loss, _tensors, tiny_llama

    torch.manual_seed(0)
    config = LlmConfig(base=8, sentences=40, hidden=32, intermediate=64)
    tokenizer = WordTokenizer(8)
    model = AugmentedLlama(tiny_llama(config, len(tokenizer.vocab)), 32, 8)
    batch = list(_tensors(tokenizer, make_problems(16, 8, seed=0)))
    answer, given = (_batch_loss(model, batch, s).item() for s in ("answer", "given-b"))
    assert answer != given
    select, a, b = model.parse(*batch[:3])
    nll = torch.nn.functional.nll_loss
    want = sum(nll(p.log(), batch[4][:, i]) for i, p in enumerate((select, a, b)))
    assert _batch_loss(model, batch, "labels").item() == pytest.approx(want.item(), rel=1e-5)


def test_an_unknown_signal_is_one_line_error(tmp_path, capsys):
    code, _, err = run(capsys, "library", "experiment", "llm", "--base", "8", "--sentences", "30",
                       "--signal", "oracle", "--out", str(tmp_path))
    assert_one_line_error(code, err, "--signal must be one of")
    assert not list(tmp_path.iterdir())
    with pytest.raises(DfstError, match="must be one of"):  # the API's config refuses it too
        LlmConfig(signal="oracle")


def test_a_signal_writes_its_own_file(tmp_path, capsys):
    code, _, _ = run(capsys, "library", "experiment", "llm", "--base", "8", "--sentences", "30", "--epochs",
                     "1", "--signal", "given-b", "--out", str(tmp_path), "--plot", str(tmp_path / "g.png"))
    written = json.loads((tmp_path / "llm_given_b.json").read_text())
    assert code == 0 and written["config"]["signal"] == "given-b"
