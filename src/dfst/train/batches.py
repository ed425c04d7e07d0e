"""Training data: the sampled PTO set, a given set's checks, padded tensors, per-iteration randomness.

The samplers that choose the set live in `dfst.data.samplers`.

Minibatches and noise are functions of (seed, iteration) only, each from its own seeded generator,
never from a running stream: a run resumed at any iteration draws exactly what an uninterrupted run
draws, and there is no RNG state to save.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import torch

from dfst.data import PtoDataset


def dataset_sha256(ds: PtoDataset) -> str:
    """A fingerprint of the training steps, to refuse resuming a run on other data."""
    digest = hashlib.sha256(ds.task.encode())
    for array in (ds.reads, ds.writes, ds.moves, ds.offsets):
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class Sequences:
    """A dataset as padded (N, T) int64 tensors; `lengths` (N,) says how many steps are real."""

    reads: torch.Tensor
    writes: torch.Tensor
    moves: torch.Tensor
    lengths: torch.Tensor

    @classmethod
    def of(cls, ds: PtoDataset) -> Sequences:
        lengths = np.diff(ds.offsets)
        cols = np.arange(lengths.max())
        index = np.minimum(ds.offsets[:-1, None] + cols, ds.steps - 1)  # (N, T), clipped in padding
        pad = cols[None, :] >= lengths[:, None]
        channels = (np.where(pad, 0, a[index]).astype(np.int64) for a in (ds.reads, ds.writes, ds.moves))
        return cls(*(torch.from_numpy(c) for c in channels), torch.from_numpy(lengths))

    def __len__(self) -> int:
        return len(self.lengths)

    def to(self, device: torch.device) -> Sequences:
        """The same sequences on `device` (the training loop's)."""
        return Sequences(*(t.to(device) for t in (self.reads, self.writes, self.moves, self.lengths)))

    def batch(self, rows: torch.Tensor | None) -> tuple[torch.Tensor, ...]:
        """(reads, writes, moves, mask) of the given rows (None = all), cut to their longest length."""
        tensors = (self.reads, self.writes, self.moves, self.lengths)
        reads, writes, moves, lengths = tensors if rows is None else (t[rows] for t in tensors)
        T = int(lengths.max())
        mask = torch.arange(T, device=lengths.device) < lengths[:, None]  # (b, T), True on real steps
        return reads[:, :T], writes[:, :T], moves[:, :T], mask


def batch_rows(seed: int, iteration: int, batch: int, count: int) -> torch.Tensor | None:
    """The rows of an iteration's minibatch of `batch` out of `count` samples; None = full batch."""
    if batch == 0 or batch >= count:
        return None
    rng = np.random.default_rng([seed, iteration, 0])
    return torch.from_numpy(rng.choice(count, size=batch, replace=False))


def step_noise(seed: int, iteration: int, sigma: float, shape: tuple[int, ...]) -> torch.Tensor | None:
    """σ·N(0, 1) noise for the teacher-forced states of an iteration, drawn on the CPU (the same bits
    on every device); None when σ = 0."""
    if sigma == 0:
        return None
    torch_seed = int(np.random.SeedSequence([seed, iteration, 1]).generate_state(1, np.uint64)[0] >> 1)
    # scaled in place: the same bits as sigma * randn, without a second tensor of the batch's size
    return torch.randn(shape, generator=torch.Generator().manual_seed(torch_seed)).mul_(sigma)


def bucket_rows(seed: int, iteration: int, batch: int, lengths: torch.Tensor) -> torch.Tensor | None:
    """A minibatch of `batch` samples of similar length: a seeded window of the samples sorted by
    length. Padding to the longest sample then wastes little: multiplication PTOs range from tens to
    hundreds of steps. None = full batch."""
    count = len(lengths)
    if batch == 0 or batch >= count:
        return None
    order = torch.from_numpy(np.argsort(lengths.cpu().numpy(), kind="stable"))
    start = int(np.random.default_rng([seed, iteration, 2]).integers(0, count - batch + 1))
    return order[start:start + batch]
