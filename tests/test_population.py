"""Restarts trained side by side: same states as one model at a time, independent trajectories, and
a choice made on the training PTOs alone."""

from __future__ import annotations

import pytest
import torch

from dfst.data import load_dataset, record_dataset
from dfst.model import DFST, FORWARDS, DFSTConfig, Population, jitter_init
from dfst.model.compile import compile_agent
from dfst.tasks import get_task
from dfst.train import TrainConfig, train
from dfst.train.batches import Sequences
from dfst.train.objectives import scores as teacher_forced
from dfst.train.restarts import restart_seed, select_restart


def _members(n: int, d: int = 9) -> list[DFST]:
    return [jitter_init(DFSTConfig(3, d, "add2"), seed) for seed in range(n)]


@pytest.mark.parametrize("forward", FORWARDS)
@pytest.mark.parametrize("normalize", [False, True])
def test_each_restart_gets_the_scores_it_would_get_alone(forward, normalize):
    seqs = Sequences.of(record_dataset(get_task("add2"), 5, 3, seed=1))
    reads, _, _, mask = seqs.batch(None)
    members = _members(3)
    cfg = TrainConfig(forward=forward, normalize_h=normalize)
    together = teacher_forced(Population(members), reads, mask, None, cfg)
    for r, member in enumerate(members):
        alone = teacher_forced(member, reads, mask, None, cfg)
        for got, want in zip(together, alone):
            torch.testing.assert_close(got[r][mask], want[mask], rtol=1e-5, atol=1e-6)


def test_noise_on_a_population_matches_one_model_with_the_same_noise():
    seqs = Sequences.of(record_dataset(get_task("add2"), 4, 2, seed=3))
    reads, _, _, mask = seqs.batch(None)
    members = _members(2)
    noise = 0.05 * torch.randn(2, *reads.shape, 9, generator=torch.Generator().manual_seed(0))
    cfg = TrainConfig(normalize_h=True)
    together = teacher_forced(Population(members), reads, mask, noise, cfg)[0]
    alone = teacher_forced(members[1], reads, mask, noise[1], cfg)[0]
    torch.testing.assert_close(together[1][mask], alone[mask], rtol=1e-5, atol=1e-6)


def test_a_restart_trains_as_it_would_alone(tmp_path):
    """Restart 1 of a two-model run ends where a one-model run from restart 1's seed ends."""
    base = dict(samples=6, max_digits=2, iters=25, noise=0.0, eval_every=0, eval_digits=(3,),
                eval_random=1, checkpoint_every=0)
    pair = train(TrainConfig(**base, restarts=2), tmp_path / "pair", command="test")
    data = load_dataset(tmp_path / "pair" / "data.pto.zip")  # a run's data depends on its seed
    alone = train(TrainConfig(**base, seed=restart_seed(0, 1)), tmp_path / "alone", command="test", data=data)
    losses = [row["loss"] for row in pair["restarts"]["table"]]
    assert losses[0] != losses[1]
    assert alone["restarts"]["table"][0]["loss"] == pytest.approx(losses[1], rel=1e-4)


def test_the_kept_restart_is_the_one_whose_automaton_is_smallest():
    task = get_task("add2")
    data = record_dataset(task, 12, 3, seed=0)
    expert = compile_agent(task.agent, task="add2")
    identity = DFST.init_identity(DFSTConfig(3, 9, "add2"))  # never fits: extraction conflicts
    cfg = TrainConfig(extract=True)
    chosen, table = select_restart(Population([identity, expert]), Sequences.of(data), data, task, cfg)
    assert chosen == 1 and table[1]["states"] == task.agent.d and table[0]["states"] is None
    assert restart_seed(7, 0) == 7 and restart_seed(7, 1) != restart_seed(7, 2)


def test_normalised_states_stay_finite_on_long_sequences():
    """Normalising only at the end of a scan would overflow float32 after a few hundred growing steps."""
    A = 2.0 * torch.eye(4).expand(2, 3, 4, 4).clone()  # |h| doubles every step
    member = DFST.from_weights(A[0], torch.ones(3, 3, 4), torch.ones(3, 5, 4), torch.ones(4))
    reads = torch.zeros(1, 300, dtype=torch.long)
    mask = torch.ones(1, 300, dtype=torch.bool)
    for forward in FORWARDS:
        cfg = TrainConfig(forward=forward, normalize_h=True)
        symbols, _, h = teacher_forced(Population([member, member]), reads, mask, None, cfg)
        assert torch.isfinite(h).all() and torch.isfinite(symbols).all()
        torch.testing.assert_close(h[0, 0, -1], torch.full((4,), 0.5))


def test_clean_losses_in_chunks_equal_the_whole_batch():
    from dfst.train.objectives import LOSSES
    from dfst.train.restarts import clean_losses

    seqs = Sequences.of(record_dataset(get_task("add2"), 7, 3, seed=2))
    population, cfg = Population(_members(2)), TrainConfig()
    reads, writes, moves, mask = seqs.batch(None)
    symbols, move_scores, _ = teacher_forced(population, reads, mask, None, cfg)
    whole = LOSSES[cfg.loss](symbols, move_scores, writes, moves, mask)
    torch.testing.assert_close(clean_losses(population, seqs, cfg, chunk=3), whole)
