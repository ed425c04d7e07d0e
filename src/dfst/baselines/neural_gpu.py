"""Neural GPU (Kaiser & Sutskever 2015, arXiv 1511.08228), trained on I/O pairs, scored like the DFST.

The state s is an n x w x m tensor (n = input length, width w, m channels). The input symbols are
embedded into its first column, the rest is zero. One step applies l convolutional GRUs (CGRU):

    u = σ'(U_u * s + B_u)    r = σ'(U_r * s + B_r)    c = tanh'(U_c * (r ⊙ s) + B_c)
    CGRU(s) = u ⊙ s + (1 - u) ⊙ c

(* is a kh x kw convolution, σ'(x) = clip(1.2 σ(x) - 0.1, 0, 1) and tanh'(x) = clip(1.1 tanh(x), -1, 1)
are the paper's saturating gates). The step is applied n times, and the output symbols are read from
the first column of the final state through a linear layer.

Published training tricks, as kept here: curriculum on length (a linear schedule of the longest
operand, plus short operands in every batch), dropout on the candidate c (6%) and gradient-norm
clipping (1.0) are on; annealed gradient noise is implemented but off by default (grad_noise=0.0).
Not kept: the parameter-sharing relaxation (r sets of weights pulled together over training; it
matters for rare successes over many restarts on a GPU), the saturation-cost penalty and the
restarts/hyper-parameter search over many runs.
The input encoding ("layout") is an option: "concat" is the paper's (a, op, b in one row), "aligned"
puts a_i and b_i in the same cell, as the DFST's grid does (easier; the CPU default).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from dfst.baselines.common import IO_EVAL_SECONDS, hardware, merge_config
from dfst.baselines.io_pairs import (
    PairSampler,
    add_gradient_noise,
    batched_predictor,
    check_layout,
    curriculum_batch,
    encode_batch,
    input_symbols,
    io_result,
    output_symbols,
    parse_digits,
    progress_bar,
    score_ladder,
)
from dfst.results import Result
from dfst.tasks.base import Task
from dfst.train import deterministic

# CPU-sized defaults (the benchmark script overrides some); plain values so `--config KEY=VALUE` parses.
DEFAULTS: dict = {
    "layout": "aligned", "width": 4, "channels": 16, "layers": 2, "kernel": 3,
    "steps": 1000, "batch": 32, "lr": 3e-3, "clip": 1.0, "dropout": 0.06, "grad_noise": 0.0,
    "start_digits": 4, "max_digits": 20, "curriculum": 0.6,
    "eval_digits": "20,40,100,200,500,1000,2000", "eval_random": 10, "eval_batch": 32, "threads": 1,
    "eval_seconds": IO_EVAL_SECONDS,
}
COST_POWER = 2  # an instance of n digits: n steps over n cells


@dataclass(frozen=True)
class NeuralGPUConfig:
    symbols_in: int
    symbols_out: int
    width: int = 4
    channels: int = 24
    layers: int = 2
    kernel: int = 3
    dropout: float = 0.0


def hard_sigmoid(x: torch.Tensor) -> torch.Tensor:
    return torch.clamp(1.2 * torch.sigmoid(x) - 0.1, 0.0, 1.0)


def hard_tanh(x: torch.Tensor) -> torch.Tensor:
    return torch.clamp(1.1 * torch.tanh(x), -1.0, 1.0)


class CGRU(nn.Module):
    """One convolutional GRU over a (B, m, n, w) state; update and reset gates share one conv."""

    def __init__(self, channels: int, kernel: int, dropout: float) -> None:
        super().__init__()
        self.gates = nn.Conv2d(channels, 2 * channels, kernel, padding=kernel // 2)
        self.candidate = nn.Conv2d(channels, channels, kernel, padding=kernel // 2)
        self.dropout = dropout

    def forward(self, s: torch.Tensor) -> torch.Tensor:
        u, r = hard_sigmoid(self.gates(s)).chunk(2, dim=1)              # (B, m, n, w) each
        c = hard_tanh(self.candidate(r * s))                            # (B, m, n, w)
        c = F.dropout(c, self.dropout, self.training)
        return u * s + (1 - u) * c


class NeuralGPU(nn.Module):
    def __init__(self, cfg: NeuralGPUConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.symbols_in, cfg.channels)
        self.layers = nn.ModuleList(CGRU(cfg.channels, cfg.kernel, cfg.dropout) for _ in range(cfg.layers))
        self.readout = nn.Linear(cfg.channels, cfg.symbols_out)

    def initial_state(self, x: torch.Tensor) -> torch.Tensor:
        """(B, n) symbols -> (B, m, n, w) state with the embedding in column 0."""
        e = self.embed(x).transpose(1, 2)                               # (B, m, n)
        s = e.new_zeros(*e.shape, self.cfg.width)                       # (B, m, n, w)
        s[..., 0] = e
        return s.contiguous(memory_format=torch.channels_last)  # about 2x faster convs on CPU

    def step(self, s: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            s = layer(s)
        return s

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, n) input symbols -> (B, n, symbols_out) logits, after n steps."""
        s = self.initial_state(x)
        for _ in range(x.shape[1]):
            s = self.step(s)
        return self.readout(s[..., 0].transpose(1, 2))                  # (B, n, out)


def sequence_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over every position (padding included: the model must say where it ends)."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))


def build_model(task: Task, config: dict) -> NeuralGPU:
    layout = check_layout(config["layout"])
    cfg = NeuralGPUConfig(input_symbols(task.base, layout), output_symbols(task.base), config["width"],
                          config["channels"], config["layers"], config["kernel"], config["dropout"])
    return NeuralGPU(cfg)


def merged_config(config: dict) -> dict:
    return merge_config(config, DEFAULTS, "neural-gpu")


def train_model(task: Task, config: dict, seed: int, progress: bool = True) -> tuple[NeuralGPU, dict]:
    """Train on sampled I/O pairs; returns the model and {"samples", "loss", "train_seconds"}."""
    torch.manual_seed(seed)
    model = build_model(task, config)
    optimizer = torch.optim.Adam(model.parameters(), lr=config["lr"], foreach=False)
    sampler = PairSampler(task, seed)
    cpu_start, loss_value = time.process_time(), float("nan")
    with progress_bar(progress) as bar:
        job = bar.add_task("neural-gpu train", total=config["steps"])
        for step in range(config["steps"]):
            # batch: pairs up to the curriculum's longest operand at this step
            pairs, digits = curriculum_batch(sampler, config, step)
            x, y = encode_batch(task, pairs, config["layout"])
            # forward, loss, backward, noisy clipped Adam step
            loss = sequence_loss(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            add_gradient_noise(model, config["grad_noise"], step)
            nn.utils.clip_grad_norm_(model.parameters(), config["clip"])
            optimizer.step()
            loss_value = loss.item()
            bar.update(job, advance=1, description=f"neural-gpu ({digits} digits, loss {loss_value:.4f})")
    info = {"samples": sampler.distinct, "loss": loss_value, "trained_on": sampler.seen,
            "train_seconds": round(time.process_time() - cpu_start, 2), "hardware": hardware()}
    return model, info


def make_predictor(model: NeuralGPU, task: Task, layout: str, batch: int):
    """A `Predictor`: batched, no_grad, in chunks of `batch` instances to bound memory."""
    return batched_predictor(model, task.base, batch,
                             lambda instances: model(encode_batch(task, instances, layout)[0]))


def run(task: Task, *, seed: int, config: dict, progress: bool = True, on_level=None) -> Result:
    """Train a Neural GPU on `task`'s I/O pairs and score it on the protocol's ladder of lengths.

    `on_level(result so far)` is called after each length of the ladder (the benchmark saves there)."""
    config = merged_config(config)
    ladder = parse_digits(config["eval_digits"])
    with deterministic(config["threads"]):
        model, info = train_model(task, config, seed, progress)
        predict = make_predictor(model, task, config["layout"], config["eval_batch"])

        def record(scores: dict) -> Result:
            return io_result("neural-gpu", task, seed, model, config, info, scores,
                             f"final training loss {info['loss']:.4g}; layout {config['layout']}")

        with progress_bar(progress) as bar:  # O(n^2) work per instance: long lengths take minutes
            job = bar.add_task("neural-gpu eval", total=len(set(ladder)))

            def level_done(scores: dict) -> None:
                bar.advance(job)
                if on_level is not None:
                    on_level(record(scores))
            scores = score_ladder(task, predict, config, info["trained_on"], COST_POWER, on_level=level_done)
    return record(scores)
