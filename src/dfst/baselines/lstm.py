"""LSTM sequence-to-sequence on input/output pairs: the floor of the comparison.

Encoder input: the digits of a, least significant first, an operator token, the digits of b, least
significant first. The decoder starts from the encoder's final state and emits the answer's digits,
least significant first, then an end token (teacher forcing in training, greedy decoding in
evaluation). Reversed digits give the answer the operands' order, so the carry runs forward in
time. Training operands are drawn like the DFST's training data (`dfst.data.sample_instance`: both
lengths uniform in 1..L), where L grows from 1 to max_train_digits over the first half of training (a
length curriculum, as the Neural GPU's). Evaluation is the DFST's protocol at the training length,
2x, 5x, 10x, ... up to `eval_top`, stopping after the first length with no exact answer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from dfst.baselines.common import (
    IO_EVAL_SECONDS,
    clipped_step,
    count_params,
    evaluate_predictor,
    hardware,
    length_ladder,
    power_growth,
    sample_pairs,
)
from dfst.results import Result
from dfst.tasks.arith import DIGIT_CHARS, canonical
from dfst.tasks.base import Instance, Task

DEFAULTS: dict = {
    "max_train_digits": 0,  # 0: 20 for base 2, 10 for base 10
    "hidden": 128,
    "layers": 1,
    "embed": 32,
    "steps": 3000,          # optimiser steps
    "batch": 64,
    "lr": 3e-3,
    "clip": 1.0,
    "curriculum": 0.5,      # the longest training length grows from 1 to max over this fraction of steps
    "eval_top": 2000,       # the evaluation ladder's last length
    "random": 10,           # random pairs per length, as dfst eval
    "eval_seconds": IO_EVAL_SECONDS,
    "threads": 1,           # torch threads: with one, a seed reproduces a run bit for bit
}


@dataclass(frozen=True)
class LstmConfig:
    base: int
    hidden: int = 128
    layers: int = 1
    embed: int = 32

    @property
    def operator(self) -> int:  # encoder token between the operands; base + 1 pads
        return self.base

    @property
    def end(self) -> int:  # decoder token after the last answer digit
        return self.base

    @property
    def start(self) -> int:  # decoder input before the first answer digit
        return self.base + 1


class Seq2Seq(nn.Module):
    def __init__(self, cfg: LstmConfig):
        super().__init__()
        self.cfg = cfg
        self.enc_embed = nn.Embedding(cfg.base + 2, cfg.embed)
        self.dec_embed = nn.Embedding(cfg.base + 2, cfg.embed)
        self.encoder = nn.LSTM(cfg.embed, cfg.hidden, cfg.layers, batch_first=True)
        self.decoder = nn.LSTM(cfg.embed, cfg.hidden, cfg.layers, batch_first=True)
        self.head = nn.Linear(cfg.hidden, cfg.base + 1)  # digits and the end token

    def encode(self, src: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        packed = nn.utils.rnn.pack_padded_sequence(self.enc_embed(src), lengths, batch_first=True,
                                                   enforce_sorted=False)
        _, state = self.encoder(packed)  # the state after each sequence's own last token
        return state  # (layers, B, hidden) twice

    def forward(self, src, lengths, dec_in) -> torch.Tensor:
        """Teacher-forced logits (B, T, base + 1) for decoder inputs dec_in (B, T)."""
        out, _ = self.decoder(self.dec_embed(dec_in), self.encode(src, lengths))  # (B, T, hidden)
        return self.head(out)

    @torch.no_grad()
    def greedy(self, src, lengths, max_len: int) -> torch.Tensor:
        """(B, max_len) decoded tokens, one step at a time from the start token."""
        state = self.encode(src, lengths)
        token = torch.full((src.shape[0], 1), self.cfg.start, dtype=torch.long)
        out = []
        for _ in range(max_len):
            h, state = self.decoder(self.dec_embed(token), state)  # (B, 1, hidden)
            token = self.head(h).argmax(-1)  # (B, 1)
            out.append(token)
            if bool((torch.cat(out, 1) == self.cfg.end).any(1).all()):
                break
        return torch.cat(out, 1)


def _lsb(text: str) -> list[int]:
    return [DIGIT_CHARS.index(ch) for ch in reversed(text)]


def encode_sources(cfg: LstmConfig, instances: list[Instance]) -> tuple[torch.Tensor, torch.Tensor]:
    seqs = [_lsb(i.a) + [cfg.operator] + _lsb(i.b) for i in instances]
    width = max(map(len, seqs))
    src = torch.tensor([s + [cfg.base + 1] * (width - len(s)) for s in seqs], dtype=torch.long)
    return src, torch.tensor([len(s) for s in seqs])  # (B, width), (B,)


def encode_targets(cfg: LstmConfig, task: Task, instances: list[Instance]) -> tuple[torch.Tensor, ...]:
    """Decoder inputs (start, y...) and targets (y..., end), padded with -100 (ignored by the loss)."""
    answers = [_lsb(task.expected(i)) + [cfg.end] for i in instances]
    width = max(map(len, answers))
    dec_in = [[cfg.start] + y[:-1] + [cfg.end] * (width - len(y)) for y in answers]
    target = [y + [-100] * (width - len(y)) for y in answers]
    return torch.tensor(dec_in), torch.tensor(target)  # (B, width) each


def loss_on(model: Seq2Seq, task: Task, instances: list[Instance]) -> torch.Tensor:
    src, lengths = encode_sources(model.cfg, instances)
    dec_in, target = encode_targets(model.cfg, task, instances)
    logits = model(src, lengths, dec_in)  # (B, T, base + 1)
    return F.cross_entropy(logits.flatten(0, 1), target.flatten(), ignore_index=-100)


def answer_length(task: Task, inst: Instance) -> int:
    """Longest possible answer plus the end token: the decoding budget."""
    la, lb = len(inst.a), len(inst.b)
    return (max(la, lb) + 1 if task.operation == "add" else la + lb) + 1


def predictor(model: Seq2Seq, task: Task, batch: int = 32):
    """The evaluator's Predictor: canonical answers, None where no digit comes before the end."""
    def predict(instances: list[Instance]) -> list[str | None]:
        answers = []
        for lo in range(0, len(instances), batch):
            chunk = instances[lo: lo + batch]
            src, lengths = encode_sources(model.cfg, chunk)
            tokens = model.greedy(src, lengths, max(answer_length(task, i) for i in chunk))
            answers += [_answer(row.tolist(), task.base) for row in tokens]
        return answers
    return predict


def _answer(tokens: list[int], base: int) -> str | None:
    digits = []
    for t in tokens:
        if t >= base:
            break
        digits.append(DIGIT_CHARS[t])
    return canonical("".join(reversed(digits))) if digits else None


def train(model: Seq2Seq, task: Task, config: dict, seed: int,
          progress: bool) -> tuple[list[float], set[tuple[str, str]]]:
    """Adam on fresh batches; returns the loss of every step and the operand pairs trained on."""
    rng = np.random.default_rng(seed)
    opt = torch.optim.Adam(model.parameters(), lr=config["lr"])
    losses, seen = [], set()
    with _bar(progress, config["steps"], f"lstm {task.name}") as advance:
        for step in range(config["steps"]):
            top = curriculum_digits(step, config["steps"], config["max_train_digits"], config["curriculum"])
            pairs = sample_pairs(task, rng, config["batch"], top)
            seen.update((p.a, p.b) for p in pairs)
            losses.append(clipped_step(opt, model, loss_on(model, task, pairs), config["clip"]))
            advance(losses[-1])
    return losses, seen


def curriculum_digits(step: int, steps: int, top: int, fraction: float) -> int:
    """The longest operand length at `step`: 1 rising linearly to `top` over `fraction` of the steps."""
    if fraction <= 0:
        return top
    return max(1, min(top, round(top * (step + 1) / (fraction * steps))))


class _bar:
    """A rich progress bar over training steps (nothing when progress is off)."""

    def __init__(self, enabled: bool, total: int, label: str):
        self.enabled, self.total, self.label = enabled, total, label

    def __enter__(self):
        if not self.enabled:
            return lambda loss: None
        from rich.console import Console
        from rich.progress import Progress

        self.progress = Progress(console=Console(stderr=True), transient=True)
        self.progress.start()
        job = self.progress.add_task(self.label, total=self.total)
        return lambda loss: self.progress.update(job, advance=1, description=f"{self.label} loss {loss:.4f}")

    def __exit__(self, *exc):
        if self.enabled:
            self.progress.stop()


def run(task: Task, *, seed: int, config: dict, progress: bool = True) -> Result:
    from dfst.train import deterministic

    config = {**DEFAULTS, **config}
    config["max_train_digits"] = config["max_train_digits"] or (20 if task.base == 2 else 10)
    with deterministic(config["threads"]):
        torch.manual_seed(seed)
        model = Seq2Seq(LstmConfig(task.base, config["hidden"], config["layers"], config["embed"]))
        start = time.process_time()  # CPU, as the other baselines: other jobs on the cores do not count
        losses, trained_on = train(model, task, config, seed, progress)
        seconds, where = time.process_time() - start, hardware()
        model.eval()
        scores = evaluate_predictor(task, predictor(model, task),
                                    length_ladder(config["max_train_digits"], config["eval_top"]),
                                    random=config["random"], stop_when_none_exact=True,
                                    time_budget=config["eval_seconds"], growth=power_growth(1),
                                    trained_on=trained_on)
    return Result(
        system="LSTM", task=task.name, seed=seed, samples=len(trained_on),
        params=count_params(model), max_train_digits=config["max_train_digits"],
        robust_lg=scores["robust_lg"], probabilistic_lg=scores["probabilistic_lg"],
        train_seconds=round(seconds, 3), hardware=where, levels=scores["levels"], config=config,
        notes="seq2seq LSTM, digits least significant first; samples = distinct I/O pairs trained on",
        details={"final_loss": float(np.mean(losses[-50:])),
                 "exact_by_length": {lv["digits"]: lv["exact"] / lv["instances"] for lv in scores["levels"]},
                 "protocol": scores["protocol"], "stopped_by": scores["stopped_by"],
                 "pairs_drawn": config["steps"] * config["batch"]})
