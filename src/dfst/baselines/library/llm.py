"""Experiment (c): a minimal LLaMA, trained from scratch, learns from answers alone to use the
library's mod-n lookup-table calculator (seed 002, section 4.2).

The LLaMA (transformers' `LlamaModel`, randomly initialised, never downloaded) reads a sentence;
its last layer's hidden state at the sentence's last token gives three classifications: the
program to run (a softmax over the library's add, sub and mul: the seed's categorical selection)
and the values of the two argument registers (softmaxes over 0..n-1, the machine's initial state).
Every selected program runs on the differentiable machine (compiled `op r0 r1 r2; halt`, frozen),
and the answer is the selection-weighted mixture of their r2 distributions, trained by
cross-entropy on the answer only. `--llama-dir` swaps the tiny LLaMA for a pretrained one read
from a local directory (LLaMA 3.2 1B/3B in the seed); nothing is ever fetched from a hub.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from dfst.baselines.library.assembler import assemble
from dfst.baselines.library.execute import initial_soft_state, run_soft
from dfst.baselines.library.isa import MachineConfig
from dfst.baselines.library.llm_data import OPERATIONS, Problem, WordTokenizer, make_problems
from dfst.baselines.library.machine import compile_program
from dfst.errors import DfstError

SEED_RESULT = {"sentences": 45151, "accuracy_at_62": 99.2, "accuracy_at_132": 100.0}

# What training sees. "answer" is the experiment (the seed's: the answer alone); the others take it
# apart: "labels" trains the three heads on what each sentence asks (can the network parse at all?),
# "given-b" and "given-op" train on the answer with b's value or the program handed to the calculator
# (is one operand, or the program, what the answer alone cannot teach?). Scores always come from the
# network's own three heads: nothing given at training is given at test.
SIGNALS = ("answer", "labels", "given-b", "given-op")


@dataclass(frozen=True)
class LlmConfig:
    """The seed's minimal LLaMA (dimension 128, 4 heads, 2 key-value heads, 4 layers, AdamW, batch 32)
    at a size that fits a CPU: `sentences` of the 9 * base² possible, 70% to train."""

    base: int = 128
    sentences: int = 6000
    epochs: int = 50
    batch: int = 32
    lr: float = 1e-3          # the seed's 1e-2 stays at chance here (docs/research/library.md, (c))
    hidden: int = 128
    heads: int = 4
    kv_heads: int = 2
    layers: int = 4
    intermediate: int = 512
    seed: int = 0
    llama_dir: str = ""       # a local pretrained LLaMA (and its tokenizer) instead of the tiny one
    signal: str = "answer"    # what training sees (SIGNALS; `--signal`); the seed's is the answer alone

    def __post_init__(self) -> None:
        if self.signal not in SIGNALS:  # here, so that the command refuses it before any output
            raise DfstError(f"--signal must be one of {', '.join(SIGNALS)}, got {self.signal!r}")


def _require_transformers():
    try:
        import transformers
    except ModuleNotFoundError:
        raise DfstError("experiment llm needs transformers: pip install 'dfst[library-llm]'") from None
    return transformers


def tiny_llama(config: LlmConfig, vocab: int):
    """A LLaMA of the seed's minimal size, randomly initialised (seeded by the caller)."""
    transformers = _require_transformers()
    llama = transformers.LlamaConfig(
        vocab_size=vocab, hidden_size=config.hidden, num_attention_heads=config.heads,
        num_key_value_heads=config.kv_heads, num_hidden_layers=config.layers,
        intermediate_size=config.intermediate, max_position_embeddings=32, pad_token_id=0,
        bos_token_id=None, eos_token_id=None)
    return transformers.LlamaModel(llama)


def check_llama_dir(directory: str) -> Path:
    """`directory` as a path, if it is a local directory with a config.json; else a one-line DfstError
    (a hub name such as meta-llama/Llama-3.2-1B is refused: nothing is ever downloaded)."""
    path = Path(directory)
    if not (path.is_dir() and (path / "config.json").is_file()):
        raise DfstError(f"--llama-dir {directory!r} is not a local directory with a config.json "
                        "(hub names are refused: nothing is downloaded)")
    return path


def local_llama(directory: str):
    """A pretrained LLaMA and its tokenizer from a local directory (config.json and weights in it);
    a hub name or a missing path is refused: nothing is downloaded. Not testable here (no weights)."""
    path = check_llama_dir(directory)
    transformers = _require_transformers()
    model = transformers.LlamaModel.from_pretrained(str(path), local_files_only=True)
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    return model, PretrainedTokenizer(tokenizer)


class PretrainedTokenizer:
    """A local pretrained tokenizer behind WordTokenizer's `encode` (right padding, last positions)."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.vocab = range(len(tokenizer))

    def encode(self, texts: list[str]) -> tuple[list[list[int]], list[int]]:
        rows = [self.tokenizer(text, add_special_tokens=True)["input_ids"] for text in texts]
        width = max(len(r) for r in rows)
        return [r + [0] * (width - len(r)) for r in rows], [len(r) - 1 for r in rows]


class Calculator(torch.nn.Module):
    """The library's table programs on the machine: (selection, r0, r1) distributions -> answer."""

    def __init__(self, base: int):
        super().__init__()
        self.config = MachineConfig(base, 3, 1, 4)
        self.programs = [compile_program(assemble(f"{op} r0 r1 r2\nhalt\n", 3), self.config)
                         for op in OPERATIONS]

    def forward(self, select: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        registers = torch.stack([a, b, torch.zeros_like(a)], dim=1)
        memory = torch.zeros(a.shape[0], 1, self.config.base, dtype=a.dtype)
        answers = []
        for program in self.programs:
            state = initial_soft_state(self.config, 2, registers, memory)
            answers.append(run_soft(program, state, self.config, prune=True).registers[:, 2])
        return torch.einsum("bk,kbn->bn", select, torch.stack(answers))


class AugmentedLlama(torch.nn.Module):
    """LLaMA -> (program, r0, r1) classifications -> the frozen calculator -> answer distribution."""

    def __init__(self, backbone, hidden: int, base: int):
        super().__init__()
        self.backbone = backbone
        self.select = torch.nn.Linear(hidden, len(OPERATIONS))
        self.operands = torch.nn.Linear(hidden, 2 * base)
        self.calculator = Calculator(base)
        self.base = base

    def parse(self, ids: torch.Tensor, mask: torch.Tensor, last: torch.Tensor):
        states = self.backbone(input_ids=ids, attention_mask=mask).last_hidden_state
        z = states[torch.arange(ids.shape[0]), last]          # the sentence's last token (causal)
        a, b = self.operands(z).view(-1, 2, self.base).softmax(-1).unbind(1)
        return self.select(z).softmax(-1), a, b

    def forward(self, ids, mask, last) -> torch.Tensor:
        return self.calculator(*self.parse(ids, mask, last))


def _tensors(tokenizer, problems: list[Problem]):
    """ids, mask, last position, answers, and what each sentence asks (operation, a, b): the last
    three are never trained on, only measured (`_scores`)."""
    ids, last = tokenizer.encode([p.text for p in problems])
    ids, last = torch.tensor(ids), torch.tensor(last)
    mask = (torch.arange(ids.shape[1]) <= last[:, None]).long()  # right padding, whatever the pad id
    asked = torch.tensor([(p.op, p.a, p.b) for p in problems]).view(-1, 3)
    return ids, mask, last, torch.tensor([p.answer for p in problems]), asked


def _accuracy(model: AugmentedLlama, data) -> float:
    return _scores(model, data)["answer"]


def _scores(model: AugmentedLlama, data, batch: int = 512) -> dict[str, float]:
    """% of sentences with the exact answer, and % whose parse (the argmax of each head) names the
    asked operation, a and b: which part of the parse a wrong answer comes from."""
    ids, mask, last, answers, asked = data
    right = torch.zeros(4)
    with torch.no_grad():
        for start in range(0, len(answers), batch):
            part = slice(start, start + batch)
            select, a, b = model.parse(ids[part], mask[part], last[part])
            parsed = torch.stack([select.argmax(-1), a.argmax(-1), b.argmax(-1)], 1)
            right[0] += (model.calculator(select, a, b).argmax(-1) == answers[part]).sum()
            right[1:] += (parsed == asked[part]).sum(0)
    share = (100.0 * right / max(len(answers), 1)).tolist()
    return {name: round(x, 2) for name, x in zip(("answer", "operation", "a", "b"), share)}


def _batch_loss(model: AugmentedLlama, batch: list[torch.Tensor], signal: str) -> torch.Tensor:
    """The training loss of one batch under `signal` (SIGNALS)."""
    ids, mask, last, answers, asked = batch
    select, a, b = model.parse(ids, mask, last)
    log = lambda p: p.clamp_min(1e-12).log()  # noqa: E731
    nll = torch.nn.functional.nll_loss
    if signal == "labels":
        return sum(nll(log(p), asked[:, i]) for i, p in enumerate((select, a, b)))
    one_hot = torch.nn.functional.one_hot
    if signal == "given-b":
        b = one_hot(asked[:, 2], model.base).to(a.dtype)
    elif signal == "given-op":
        select = one_hot(asked[:, 0], len(OPERATIONS)).to(a.dtype)
    return nll(log(model.calculator(select, a, b)), answers)


def run_llm(config: LlmConfig, progress=None) -> dict:
    """Train from scratch; test accuracy (exact answer) after every epoch, and the CPU time."""
    torch.manual_seed(config.seed)
    problems = make_problems(config.sentences, config.base, config.seed)
    cut = int(0.7 * len(problems))
    if config.llama_dir:
        backbone, tokenizer = local_llama(config.llama_dir)
        hidden = backbone.config.hidden_size
    else:
        tokenizer = WordTokenizer(config.base)
        backbone, hidden = tiny_llama(config, len(tokenizer.vocab)), config.hidden
    train, test = _tensors(tokenizer, problems[:cut]), _tensors(tokenizer, problems[cut:])
    model = AugmentedLlama(backbone, hidden, config.base)
    optimiser = torch.optim.AdamW(model.parameters(), lr=config.lr)
    generator = torch.Generator().manual_seed(config.seed)
    history, started = [], time.process_time()
    for epoch in range(1, config.epochs + 1):
        order = torch.randperm(cut, generator=generator)
        for start in range(0, cut, config.batch):
            rows = order[start:start + config.batch]
            loss = _batch_loss(model, [t[rows] for t in train], config.signal)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        scores = _scores(model, test)
        history.append({"epoch": epoch, "train_accuracy": _accuracy(model, train),
                        "test_accuracy": scores.pop("answer"), "test_parse": scores,
                        "loss": round(loss.item(), 4),
                        "cpu_seconds": round(time.process_time() - started, 1)})
        if progress:
            progress(history[-1])
    params = sum(p.numel() for p in model.backbone.parameters())
    # the format marks the file as dfst's, so that --force may replace it
    return {"format": "dfst-library-llm", "version": 1, "config": asdict(config), "train_sentences": cut,
            "test_sentences": len(problems) - cut,
            "vocabulary": len(tokenizer.vocab), "backbone_params": params, "history": history,
            "seed": SEED_RESULT}
