"""Neural Turing Machine (Graves, Wayne & Danihelka 2014; seed 004), on I/O pairs and on its copy task.

An LSTM controller reads the input x_t and the last read vector r_{t-1}. From its output h_t, each
head (one read, one write) emits a key k, a key strength β > 0, an interpolation gate g ∈ (0, 1), a
shift distribution s over {-1, 0, +1} and a sharpening γ >= 1; the write head also an erase vector e
and an add vector a. Addressing, per head, over the N x M memory:

    w_c = softmax(β cos(k, M_i))           content
    w_g = g w_c + (1 - g) w_{t-1}          interpolation
    w_s(i) = Σ_j w_g(j) s(i - j mod N)     circular shift convolution
    w = w_s^γ / Σ w_s^γ                    sharpening

Read first: r_t = Σ_i w_i M_i (the memory as the last step left it); then write:
M_i <- M_i (1 - w_i e) + w_i a. The output is a linear map of [h_t, r_t]. Reading before writing
matters: with the write first, the read could fetch what the controller wrote in the same step, a
one-step channel that trapped copy training in a memoryless minimum (the LSTM memorised, the write head
stood still). The memory starts at a small constant and the head weights on cell 0, both fixed (not
learned), so N can grow at test time: evaluation uses N >= the sequence length.

Arithmetic: the input is the Neural GPU paper's row (a, op, b, least significant digits first, see
io_pairs), one symbol per step, then an end marker; the machine then writes the answer's digits, least
significant first and zero-padded, one per step (cross-entropy on those steps only).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from dfst.baselines import io_pairs
from dfst.baselines.common import IO_EVAL_SECONDS, count_params, hardware, merge_config
from dfst.errors import DfstError
from dfst.results import Result
from dfst.tasks.base import Instance, Task
from dfst.train import deterministic

DEFAULTS: dict = {
    "controller": 100, "memory": 64, "word": 20, "steps": 2000, "batch": 32, "lr": 1e-3, "clip": 10.0,
    "start_digits": 2, "max_digits": 8, "curriculum": 0.6,
    "eval_digits": "4,8,16,20,40,100,200,500,1000,2000", "eval_random": 10, "eval_batch": 32, "threads": 1,
    "eval_seconds": IO_EVAL_SECONDS,
}
COST_POWER = 2  # an instance of n digits: ~3n steps, each addressing a memory of as many cells

LOSS_WINDOW = 100  # the reported training loss: the mean of this many last steps (arithmetic)

# Trained on lengths 1..10, tested at 2x, 3x and 4x (N = 64 cells covers them all); eval_every steps the
# curve records exact copies of eval_count held-out sequences of length max_length.
COPY_DEFAULTS: dict = {
    "bits": 8, "controller": 100, "memory": 64, "word": 20, "steps": 6000, "batch": 16, "lr": 1e-3,
    "clip": 10.0, "min_length": 1, "max_length": 10, "test_lengths": "10,20,30,40", "test_count": 100,
    "eval_every": 500, "eval_count": 100, "threads": 1,
}


@dataclass(frozen=True)
class NTMConfig:
    inputs: int
    outputs: int
    controller: int = 100
    memory: int = 64       # N, the default number of cells (grown at run time when a sequence needs more)
    word: int = 20         # M


class Head(nn.Module):
    """Emits one head's parameters from the controller output and addresses the memory with them."""

    def __init__(self, hidden: int, word: int, write: bool) -> None:
        super().__init__()
        self.word, self.write = word, write
        # k (M), β, g, s (3), γ; and for a write head e (M), a (M)
        self.params = nn.Linear(hidden, word + 6 + (2 * word if write else 0))

    def forward(self, h: torch.Tensor, memory: torch.Tensor, w_prev: torch.Tensor):
        out = self.params(h)                                                        # (B, P)
        m = self.word
        key, beta, gate = torch.tanh(out[:, :m]), F.softplus(out[:, m]), torch.sigmoid(out[:, m + 1])
        shift, gamma = torch.softmax(out[:, m + 2:m + 5], -1), 1 + F.softplus(out[:, m + 5])
        w = address(memory, w_prev, key, beta, gate, shift, gamma)                  # (B, N)
        if not self.write:
            return w, None
        return w, (torch.sigmoid(out[:, m + 6:2 * m + 6]), torch.tanh(out[:, 2 * m + 6:]))  # erase, add


def address(memory, w_prev, key, beta, gate, shift, gamma) -> torch.Tensor:
    """The paper's four addressing stages; memory (B, N, M), w_prev (B, N), key (B, M), scalars (B,)."""
    similarity = F.cosine_similarity(memory, key[:, None, :], dim=-1, eps=1e-8)  # (B, N)
    w_c = torch.softmax(beta[:, None] * similarity, dim=-1)
    w_g = gate[:, None] * w_c + (1 - gate[:, None]) * w_prev
    # s = (P(shift -1), P(0), P(+1)); w_s(i) = Σ_j w_g(i - j) s(j)
    w_s = shift[:, 0:1] * torch.roll(w_g, -1, 1) + shift[:, 1:2] * w_g + shift[:, 2:3] * torch.roll(w_g, 1, 1)
    w = (w_s + 1e-12) ** gamma[:, None]
    return w / w.sum(-1, keepdim=True)


class NTM(nn.Module):
    def __init__(self, cfg: NTMConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.lstm = nn.LSTMCell(cfg.inputs + cfg.word, cfg.controller)
        self.read_head = Head(cfg.controller, cfg.word, write=False)
        self.write_head = Head(cfg.controller, cfg.word, write=True)
        self.output = nn.Linear(cfg.controller + cfg.word, cfg.outputs)

    def initial_state(self, batch: int, cells: int) -> dict:
        zeros = torch.zeros(batch, self.cfg.controller)
        w0 = torch.zeros(batch, cells)
        w0[:, 0] = 1.0
        return {"h": zeros, "c": zeros.clone(), "memory": torch.full((batch, cells, self.cfg.word), 1e-6),
                "w_read": w0, "w_write": w0.clone(), "read": torch.zeros(batch, self.cfg.word)}

    def step(self, state: dict, x: torch.Tensor) -> tuple[dict, torch.Tensor]:
        """One time step: (state, x (B, inputs)) -> (state, output logits (B, outputs))."""
        h, c = self.lstm(torch.cat([x, state["read"]], -1), (state["h"], state["c"]))
        memory = state["memory"]                                                    # (B, N, M)
        w_read, _ = self.read_head(h, memory, state["w_read"])
        read = torch.einsum("bn,bnm->bm", w_read, memory)                           # (B, M)
        w_write, (erase, add) = self.write_head(h, memory, state["w_write"])
        memory = memory * (1 - w_write[:, :, None] * erase[:, None, :]) \
            + w_write[:, :, None] * add[:, None, :]                                 # (B, N, M)
        state = {"h": h, "c": c, "memory": memory, "w_read": w_read, "w_write": w_write, "read": read}
        return state, self.output(torch.cat([h, read], -1))

    def forward(self, xs: torch.Tensor, cells: int | None = None) -> torch.Tensor:
        """(B, T, inputs) -> (B, T, outputs) logits; `cells` memory cells (default: max(N, T))."""
        state = self.initial_state(xs.shape[0], cells or max(self.cfg.memory, xs.shape[1]))
        outputs = []
        for t in range(xs.shape[1]):
            state, y = self.step(state, xs[:, t])
            outputs.append(y)
        return torch.stack(outputs, 1)


_merged = merge_config  # the old name


def train_loop(model: NTM, config: dict, next_loss: Callable[[int], tuple[torch.Tensor, str]], *,
               label: str, progress: bool = True, evaluate: Callable[[], dict] | None = None,
               window: int = LOSS_WINDOW) -> dict:
    """The one training loop: `next_loss(step)` -> (batch loss, progress text); Adam, clipped gradient norm.

    Every `window` steps (when evaluate is given) the curve gets the mean loss of those steps and
    `evaluate()`'s figures. The loss returned is that mean over the last window, not the last batch:
    one batch of random length says little (a length-1 batch once reported 8e-5 for a model that
    copied 4/100 sequences). train_seconds is CPU time without the evaluations."""
    optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"], foreach=False)
    losses, curve, eval_seconds, cpu_start = [], [], 0.0, time.process_time()
    with io_pairs.progress_bar(progress) as bar:
        job = bar.add_task(label, total=config["steps"])
        for step in range(1, config["steps"] + 1):
            loss, text = next_loss(step - 1)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), config["clip"])
            optimizer.step()
            losses.append(loss.item())
            if evaluate is not None and step % window == 0:
                eval_start = time.process_time()
                curve.append({"step": step, "loss": mean_loss(losses, window), **evaluate()})
                eval_seconds += time.process_time() - eval_start
            bar.update(job, advance=1, description=f"{label} ({text}, loss {losses[-1]:.4f})")
    return {"loss": mean_loss(losses, window), "curve": curve,
            "train_seconds": round(time.process_time() - cpu_start - eval_seconds, 2)}


def mean_loss(losses: list[float], window: int) -> float:
    return float(np.mean(losses[-window:])) if losses else float("nan")


# ----------------------------------------------------------------------------- arithmetic I/O pairs


def arithmetic_sequences(task: Task, instances: list[Instance]) -> tuple[torch.Tensor, torch.Tensor, int]:
    """One-hot inputs (B, 2n+1, symbols+1) and targets (B, n); answers are read from steps n+1..2n."""
    x, y = io_pairs.encode_batch(task, instances, "concat")                        # (B, n) each
    batch, n = x.shape
    symbols = io_pairs.input_symbols(task.base, "concat")
    xs = torch.zeros(batch, 2 * n + 1, symbols + 1)
    xs[:, :n].scatter_(2, x[:, :, None], 1.0)
    xs[:, n, symbols] = 1.0                                                         # end marker
    return xs, y, n


def arithmetic_loss(model: NTM, xs: torch.Tensor, y: torch.Tensor, n: int) -> torch.Tensor:
    logits = model(xs)[:, n + 1:]                                                   # (B, n, out)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def build_arithmetic_model(task: Task, config: dict) -> NTM:
    return NTM(NTMConfig(io_pairs.input_symbols(task.base, "concat") + 1, io_pairs.output_symbols(task.base),
                         config["controller"], config["memory"], config["word"]))


def train_arithmetic(task: Task, config: dict, seed: int, progress: bool = True) -> tuple[NTM, dict]:
    torch.manual_seed(seed)
    model = build_arithmetic_model(task, config)
    sampler = io_pairs.PairSampler(task, seed)

    def next_loss(step: int) -> tuple[torch.Tensor, str]:
        pairs, digits = io_pairs.curriculum_batch(sampler, config, step)
        return arithmetic_loss(model, *arithmetic_sequences(task, pairs)), f"{digits} digits"
    info = train_loop(model, config, next_loss, label="ntm train", progress=progress)
    return model, {**info, "samples": sampler.distinct, "trained_on": sampler.seen, "hardware": hardware()}


def make_predictor(model: NTM, task: Task, batch: int):
    """A `Predictor`: the answer is read from the steps after the end marker."""
    def answer_logits(instances: list[Instance]) -> torch.Tensor:
        xs, _, n = arithmetic_sequences(task, instances)
        return model(xs)[:, n + 1:]                                                 # (B, n, out)
    return io_pairs.batched_predictor(model, task.base, batch, answer_logits)


def run(task: Task, *, seed: int, config: dict, progress: bool = True, on_level=None) -> Result:
    """Train an NTM on `task`'s I/O pairs and score it on the protocol's ladder of lengths.

    `on_level(result so far)` is called after each length of the ladder (the benchmark saves there)."""
    config = merge_config(config, DEFAULTS, "ntm")
    with deterministic(config["threads"]):
        model, info = train_arithmetic(task, config, seed, progress)

        def record(scores: dict) -> Result:
            return io_pairs.io_result(
                "ntm", task, seed, model, config, info, scores,
                f"mean training loss of the last {LOSS_WINDOW} steps {info['loss']:.4g}; input a, op, b, "
                "then the answer, one symbol per step")
        scores = io_pairs.score_ladder(task, make_predictor(model, task, config["eval_batch"]), config,
                                       info["trained_on"], COST_POWER,
                                       on_level=None if on_level is None else lambda s: on_level(record(s)))
    return record(scores)


# ----------------------------------------------------------------------------- the copy task


def copy_batch(rng: np.random.Generator, batch: int, length: int, bits: int):
    """Inputs (B, 2L+1, bits+1): L random bit vectors, a delimiter, then L blanks; targets (B, L, bits)."""
    data = torch.from_numpy(rng.integers(0, 2, size=(batch, length, bits)).astype(np.float32))
    xs = torch.zeros(batch, 2 * length + 1, bits + 1)
    xs[:, :length, :bits] = data
    xs[:, length, bits] = 1.0
    return xs, data


def copy_logits(model: NTM, xs: torch.Tensor, length: int) -> torch.Tensor:
    """The output steps' logits (B, L, bits), with N = max(memory, L) cells: the same N in training and at
    every test length up to N, so a longer test changes nothing but the length."""
    return model(xs, cells=max(model.cfg.memory, length))[:, length + 1:]


def copy_loss(model: NTM, xs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.binary_cross_entropy_with_logits(copy_logits(model, xs, target.shape[1]), target)


def copy_exact(model: NTM, rng: np.random.Generator, count: int, length: int, bits: int) -> int:
    """How many of `count` random sequences of `length` are copied with every bit right."""
    model.eval()
    with torch.no_grad():
        xs, target = copy_batch(rng, count, length, bits)
        guess = (copy_logits(model, xs, length) > 0).float()
    model.train()
    return int((guess == target).all(-1).all(-1).sum())


def build_copy_model(config: dict) -> NTM:
    return NTM(NTMConfig(config["bits"] + 1, config["bits"], config["controller"], config["memory"],
                         config["word"]))


def train_copy(config: dict, seed: int, progress: bool = True) -> tuple[NTM, dict]:
    """Copies of min_length..max_length vectors, lengths drawn per batch; the curve holds held-out exact
    copies at max_length (the same sequences at every evaluation, drawn apart from the training data)."""
    torch.manual_seed(seed)
    model = build_copy_model(config)
    rng = np.random.default_rng(seed)

    def next_loss(step: int) -> tuple[torch.Tensor, str]:
        length = int(rng.integers(config["min_length"], config["max_length"] + 1))
        return copy_loss(model, *copy_batch(rng, config["batch"], length, config["bits"])), f"length {length}"

    def evaluate() -> dict:
        held_out = np.random.default_rng(20_000 + seed)
        return {"exact": copy_exact(model, held_out, config["eval_count"], config["max_length"],
                                    config["bits"])}
    return model, train_loop(model, config, next_loss, label="ntm copy", progress=progress, evaluate=evaluate,
                             window=config["eval_every"])


def run_copy(seed: int, config: dict, progress: bool = True) -> dict:
    """Train on copies of 1..max_length vectors; exact-copy rates at `test_lengths` (2x and beyond)."""
    config = merge_config(config, COPY_DEFAULTS, "ntm copy")
    if config["eval_every"] < 1:
        raise DfstError(f"ntm copy eval_every={config['eval_every']} must be >= 1")
    with deterministic(config["threads"]):
        model, info = train_copy(config, seed, progress)
        test_rng = np.random.default_rng(10_000 + seed)
        exact = {n: copy_exact(model, test_rng, config["test_count"], n, config["bits"])
                 for n in io_pairs.parse_digits(config["test_lengths"])}
    # its own format and "model", not "system": the copy task is no dfst task, so `dfst table` skips it
    return {"format": "dfst-ntm-copy", "version": 1,
            "model": "ntm", "task": "copy", "seed": seed, "params": count_params(model),
            "samples": config["steps"] * config["batch"], "max_train_length": config["max_length"],
            "loss": info["loss"], "train_seconds": info["train_seconds"], "hardware": hardware(),
            "test_count": config["test_count"], "exact": {str(n): e for n, e in exact.items()},
            "curve": info["curve"], "config": config}


# Tasks of this baseline that are no dfst task: `dfst baseline ntm copy` runs them (name -> (run, defaults)).
SIDE_TASKS = {"copy": (run_copy, COPY_DEFAULTS)}
