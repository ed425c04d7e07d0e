"""Sequence models that act on the grid from the symbols they read: an LSTM, a GRU, a causal transformer.

Each reads x_1..x_t (the symbols under the head) and scores the symbol to write (k) and the move
(U, D, L, R, S) of step t. Two views of one model:

    forward(reads)       teacher forcing over whole PTOs: (B, T) -> (B, T, k), (B, T, 5)
    step(state, reads)   one grid step, closed loop: (B,) -> next state, (B, k), (B, 5)

The recurrent models read one-hot symbols; `step` runs their nn.LSTM / nn.GRU on one symbol with the
state carried (what LSTMCell / GRUCell do). The transformer (pre-LN, GPT-style, sinusoidal positions
so that any step has one) steps with a KV cache: step t attends to the t + 1 keys so far, so a run of
T steps costs O(T² · hidden · layers) time and O(T · hidden · layers) memory per instance (large:
2 KB of keys and values a step; reading them is the cost, about 6 ms a step for 26 instances at
2,000 steps on one CPU thread); the evaluation caps T (`max_context`). `TorchPolicy` wraps a model
for `dfst.baselines.policy_runner`.

Sizes (`policy_config`): "small" takes the width whose parameter count is nearest the DFST's for
the task (`dfst.automata.param_count(k, d)`, one layer, one head); "large" has width 128 (the
transformer: 2 layers, 4 heads).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from dfst.automata import MOVES
from dfst.baselines.common import count_params
from dfst.errors import DfstError

MOVE_COUNT = len(MOVES)
LARGE_HIDDEN = 128


@dataclass(frozen=True)
class PolicyConfig:
    kind: str        # a key of MODELS
    k: int           # symbols read and written
    hidden: int
    layers: int = 1
    heads: int = 1   # attention heads (transformer)
    ff: int = 0      # MLP width (transformer); 0: 2 * hidden


def split_scores(out: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Write scores (..., k) and move scores (..., 5) of the heads' output (..., k + 5)."""
    return out[..., :k], out[..., k:]


class RecurrentPolicy(nn.Module):
    """An LSTM or GRU over one-hot reads, one linear layer for both heads."""

    RNNS = {"lstm": nn.LSTM, "gru": nn.GRU}

    def __init__(self, cfg: PolicyConfig):
        super().__init__()
        self.cfg = cfg
        self.rnn = self.RNNS[cfg.kind](cfg.k, cfg.hidden, cfg.layers, batch_first=True)
        self.heads = nn.Linear(cfg.hidden, cfg.k + MOVE_COUNT)

    def forward(self, reads: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out, _ = self.rnn(F.one_hot(reads, self.cfg.k).float())  # (B, T, hidden)
        return split_scores(self.heads(out), self.cfg.k)

    def initial_state(self, batch: int) -> None:
        return None  # zeros, as nn.LSTM / nn.GRU start

    def step(self, state, reads: torch.Tensor):
        out, state = self.rnn(F.one_hot(reads, self.cfg.k).float()[:, None], state)  # (B, 1, hidden)
        return (state, *split_scores(self.heads(out[:, 0]), self.cfg.k))


class KvCache:
    """One layer's keys and values so far, (B, heads, n, head width), grown by doubling."""

    def __init__(self):
        self.keys = self.values = None
        self.n = 0

    def extend(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append one step's k and v (B, heads, 1, width); returns every key and value so far."""
        if self.keys is None or self.n == self.keys.shape[2]:
            self.keys, self.values = (_grown(old, new) for old, new in ((self.keys, k), (self.values, v)))
        self.keys[:, :, self.n], self.values[:, :, self.n] = k[:, :, 0], v[:, :, 0]
        self.n += 1
        return self.keys[:, :, : self.n], self.values[:, :, : self.n]


def _grown(old: torch.Tensor | None, new: torch.Tensor) -> torch.Tensor:
    size = 16 if old is None else 2 * old.shape[2]
    out = new.new_zeros(new.shape[0], new.shape[1], size, new.shape[3])
    if old is not None:
        out[:, :, : old.shape[2]] = old
    return out


class Block(nn.Module):
    """Pre-LN causal self-attention and MLP, each added to the residual stream."""

    def __init__(self, cfg: PolicyConfig):
        super().__init__()
        h, self.heads = cfg.hidden, cfg.heads
        self.ln1, self.ln2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.qkv, self.proj = nn.Linear(h, 3 * h), nn.Linear(h, h)
        self.mlp = nn.Sequential(nn.Linear(h, cfg.ff or 2 * h), nn.GELU(), nn.Linear(cfg.ff or 2 * h, h))

    def forward(self, x: torch.Tensor, cache: KvCache | None = None) -> torch.Tensor:
        B, T, h = x.shape
        q, k, v = (t.view(B, T, self.heads, h // self.heads).transpose(1, 2)
                   for t in self.qkv(self.ln1(x)).split(h, -1))  # (B, heads, T, width) each
        if cache is None:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # one query, the newest step: every cached key is its past
            y = F.scaled_dot_product_attention(q, *cache.extend(k, v))
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, h))
        return x + self.mlp(self.ln2(x))


def sinusoid(positions: torch.Tensor, width: int) -> torch.Tensor:
    """(T, width) sinusoidal position codes (Vaswani et al.), defined at every position."""
    freqs = torch.exp(torch.arange(0, width, 2) * (-math.log(10000.0) / width))  # (ceil(width / 2),)
    angles = positions.float()[:, None] * freqs  # (T, ceil(width / 2))
    return torch.stack([angles.sin(), angles.cos()], -1).flatten(1)[:, :width]


class TransformerPolicy(nn.Module):
    """A causal transformer over the reads so far; state = (steps done, one KvCache per layer)."""

    def __init__(self, cfg: PolicyConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.k, cfg.hidden)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.ln = nn.LayerNorm(cfg.hidden)
        self.heads = nn.Linear(cfg.hidden, cfg.k + MOVE_COUNT)

    def forward(self, reads: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = self.embed(reads) + sinusoid(torch.arange(reads.shape[1]), self.cfg.hidden)  # (B, T, hidden)
        for block in self.blocks:
            x = block(x)
        return split_scores(self.heads(self.ln(x)), self.cfg.k)

    def initial_state(self, batch: int) -> tuple[int, list[KvCache]]:
        return 0, [KvCache() for _ in self.blocks]

    def step(self, state, reads: torch.Tensor):
        t, caches = state
        x = (self.embed(reads) + sinusoid(torch.tensor([t]), self.cfg.hidden))[:, None]  # (B, 1, hidden)
        for block, cache in zip(self.blocks, caches):
            x = block(x, cache)
        return ((t + 1, caches), *split_scores(self.heads(self.ln(x[:, 0])), self.cfg.k))


MODELS: dict[str, type[nn.Module]] = {"lstm": RecurrentPolicy, "gru": RecurrentPolicy,
                                      "transformer": TransformerPolicy}


def build_policy(cfg: PolicyConfig) -> nn.Module:
    return MODELS[cfg.kind](cfg)


def policy_config(kind: str, k: int, size: str, dfst_params: int) -> PolicyConfig:
    """The model of `size` (small: nearest `dfst_params` parameters; large: width 128)."""
    if size == "large":
        deep = kind == "transformer"
        return PolicyConfig(kind, k, LARGE_HIDDEN, layers=2 if deep else 1, heads=4 if deep else 1)
    if size != "small":
        raise DfstError(f"unknown size {size!r} (known: small, large)")
    return min((PolicyConfig(kind, k, h) for h in range(1, LARGE_HIDDEN + 1)),
               key=lambda cfg: (abs(parameters(cfg) - dfst_params), cfg.hidden))


def parameters(cfg: PolicyConfig) -> int:
    """Trainable parameters of the model `cfg` describes (built on the meta device: no memory, no RNG)."""
    with torch.device("meta"):
        return count_params(build_policy(cfg))


class TorchPolicy:
    """A model as a runner Policy: the highest-scoring write and move (the first on a tie), no grad."""

    def __init__(self, model: nn.Module):
        self.model = model.eval()

    def start(self, batch: int):
        return self.model.initial_state(batch)

    @torch.no_grad()
    def step(self, state, reads: np.ndarray):
        state, write, move = self.model.step(state, torch.from_numpy(reads.astype(np.int64)))
        return state, write.argmax(-1).numpy(), move.argmax(-1).numpy()
