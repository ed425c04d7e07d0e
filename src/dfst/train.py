"""Training a DFST from PTOs: one visible loop, read top to bottom.

Per iteration: pick the batch (all samples, or a minibatch drawn from (seed, iteration)); run the
model teacher-forced, its hidden states from a log-depth scan (`dfst.scan`); compute the loss;
backward; Adam step at the learning rate `lr_at(iteration)`. Every `eval_every` iterations the model
runs closed-loop on the grid (`dfst.rollout`, h rescaled every step) on the task's hard instances
plus random pairs at each evaluation length, and training may stop once it is robust at
`target_digits`. Metrics go to metrics.jsonl; the run directory is described in `dfst.train_state`.

Determinism: every random draw after the initialisation comes from a generator seeded by
(seed, iteration), not from a running stream, so a resumed run draws exactly what an uninterrupted
one draws and no RNG state needs saving. Torch runs with `threads` threads and deterministic
algorithms inside `train`. On the CPU the same config gives the same weights bit for bit, and a run
killed at any point and resumed ends with the weights of an uninterrupted run.

The published loss (`loss="mse"`): L = 1/(2T) Σ_t (|ŝ_t − onehot(s_t)|² + |m̂_t − onehot(m_t)|²), with T
the number of real (unpadded) steps in the batch, so every step weighs the same.
"""

from __future__ import annotations

import json
import math
import shlex
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from dfst import __version__
from dfst.automata import MOVES
from dfst.checkpoint import save_checkpoint
from dfst.data import PtoDataset, summarize
from dfst.errors import DfstError
from dfst.evaluate import EvalConfig, run_protocol
from dfst.model import DFST, DFSTConfig
from dfst.population import Population, looped_states, population_readout, scanned_states
from dfst.rollout import DfstWeights
from dfst.run_guard import record_paths, run_lock
from dfst.scan import prefix_products_hillis_steele, prefix_products_torch
from dfst.tasks import Task, get_task
from dfst.train_data import SAMPLERS, Sequences, batch_rows, bucket_rows, dataset_sha256, step_noise
from dfst.train_state import (
    DATA_FILE,
    EXTRACTED_DIR,
    METRICS_FILE,
    MODEL_DIR,
    RUN_FORMAT,
    STATE_FILE,
    SUMMARY_FILE,
    append_metrics,
    load_train_state,
    prepare_run,
    read_json,
    remove_final_outputs,
    save_run_state,
    truncate_metrics,
    write_run_json,
)


@dataclass(frozen=True)
class TrainConfig:
    """One training run. The defaults are the recipe that works (docs/training.md): add2 on 20 covering
    samples of at most 3 digits, noise on the direction of h, 16 restarts, the automaton read off;
    `recipes.PUBLISHED` lists the fields that give the published baseline."""

    task: str = "add2"
    samples: int = 20
    max_digits: int = 3
    seed: int = 0
    sampler: str = "cover"        # "cover": every expert rule first (dfst.coverage); "pairs": every rule and
                                  # pair of consecutive rules first; "uniform": dfst.data
    d: int | None = None          # hidden size; None = the expert's number of states
    iters: int = 4000
    lr: float = 2e-2
    schedule: str = "cosine"      # see SCHEDULES
    batch: int = 0                # 0 = full batch, else a minibatch of this many samples
    bucket: bool = False          # minibatches of samples of similar length (`train_data.bucket_rows`)
    init: str = "jitter"          # "identity" (published: A[j] = I, B = C = 0, h0 = e0), "jitter", "random"
    loss: str = "mse"             # "mse" (published) or "ce"
    noise: float = 0.03           # σ of Gaussian noise added to h at every teacher-forced step
    noise_final: float | None = None  # anneal σ linearly from `noise` to this over the run
    l1: float = 0.0               # weight of Σ|A| in the objective
    normalize_h: bool = True      # divide h by its norm at every teacher-forced step (before the noise)
    discrete: float = 0.0         # weight of the vertex penalty |h_t - onehot(argmax h_t)|², ramped up
    extract: bool = True          # also evaluate the automaton read off the states (dfst.extract);
                                  # target_digits then applies to the better of the two
    forward: str = "scan"         # see FORWARDS: "scan", "hillis" or "loop", same values
    eval_every: int = 1000        # 0 = evaluate only at the end
    eval_digits: tuple[int, ...] = (10, 100)
    eval_random: int = 10         # random pairs per evaluation length, besides the hard instances
    target_digits: int = 0        # stop once robust at this length (0 = never)
    checkpoint_every: int = 1000  # 0 = only at the end
    log_every: int = 100
    threads: int = 1              # torch threads; bit-identical results need the same number
    restarts: int = 16            # independent models trained side by side (dfst.population); the one
                                  # kept is chosen on the training PTOs alone (`select_restart`)

    def to_dict(self) -> dict:
        """The config as flat JSON-ready fields: what config.json stores and reproduce's keys hash."""
        return json.loads(json.dumps(asdict(self)))

    def __post_init__(self) -> None:
        get_task(self.task)
        object.__setattr__(self, "eval_digits", tuple(self.eval_digits))
        for name, low in (("samples", 1), ("max_digits", 1), ("seed", 0), ("iters", 1), ("batch", 0),
                          ("eval_every", 0), ("eval_random", 0), ("target_digits", 0),
                          ("checkpoint_every", 0), ("log_every", 1), ("threads", 1), ("restarts", 1)):
            _check_int(name, getattr(self, name), low)
        if self.seed > MAX_SEED:
            raise DfstError(f"seed must be at most {MAX_SEED:,} (torch's seeds are 64-bit), got {self.seed}")
        if self.d is not None:
            _check_int("d", self.d, 1)
        for name, registry in (("sampler", SAMPLERS), ("schedule", SCHEDULES), ("init", INITS),
                               ("loss", LOSSES), ("forward", FORWARDS)):
            if getattr(self, name) not in registry:
                raise DfstError(f"unknown {name} {getattr(self, name)!r} (known: {', '.join(registry)})")
        if not (math.isfinite(self.lr) and self.lr > 0):
            raise DfstError(f"lr must be a positive number, got {self.lr}")
        for name in ("noise", "noise_final", "l1", "discrete"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value >= 0):
                raise DfstError(f"{name} must be a number >= 0, got {value}")
        if not self.eval_digits or min(self.eval_digits) < 1:
            raise DfstError(f"eval_digits must be lengths >= 1, got {list(self.eval_digits)}")


MAX_SEED = 2**63 - 1


def _check_int(name: str, value: object, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise DfstError(f"{name} must be an integer >= {low}, got {value!r}")


# Learning-rate schedules: pure functions of (step, cfg), step = 0 … iters-1, no warmup.
SCHEDULES: dict[str, Callable[[int, TrainConfig], float]] = {
    "cosine": lambda step, cfg: cfg.lr * 0.5 * (1 + math.cos(math.pi * step / cfg.iters)),
    "constant": lambda step, cfg: cfg.lr,
    "linear": lambda step, cfg: cfg.lr * (1 - step / cfg.iters),
}


def lr_at(step: int, cfg: TrainConfig) -> float:
    """The learning rate of 0-based iteration `step`."""
    return SCHEDULES[cfg.schedule](step, cfg)


def noise_at(step: int, cfg: TrainConfig) -> float:
    """σ of the noise on h at 0-based iteration `step`: constant, or annealed linearly to noise_final."""
    if cfg.noise_final is None:
        return cfg.noise
    return cfg.noise + (cfg.noise_final - cfg.noise) * step / max(cfg.iters - 1, 1)


# ----------------------------------------------------------------------------- model and loss


def random_init(config: DFSTConfig, seed: int) -> DFST:
    """Seeded Gaussian weights: A[j] ~ N(0, 1/d) (spectral radius about 1), B, C ~ N(0, 0.01), h0 = e0."""
    g = torch.Generator().manual_seed(seed)
    k, d = config.k, config.d
    A = torch.randn(k, d, d, generator=g) / d**0.5
    B, C = 0.1 * torch.randn(k, k, d, generator=g), 0.1 * torch.randn(k, len(MOVES), d, generator=g)
    return DFST.from_weights(A, B, C, torch.eye(d)[0], task=config.task)


def jitter_init(config: DFSTConfig, seed: int) -> DFST:
    """The published init plus seeded N(0, 0.01²) on A, B and C: the same start, minus its saddle.

    With exactly A[j] = I, B = C = 0 and h0 = e0, every gradient keeps h = e0 (training stalls unless
    noise on h breaks the symmetry); a tiny perturbation breaks it without noise.
    """
    g = torch.Generator().manual_seed(seed)
    k, d = config.k, config.d
    A = torch.eye(d).expand(k, d, d) + 0.01 * torch.randn(k, d, d, generator=g)
    B, C = 0.01 * torch.randn(k, k, d, generator=g), 0.01 * torch.randn(k, len(MOVES), d, generator=g)
    return DFST.from_weights(A, B, C, torch.eye(d)[0], task=config.task)


INITS: dict[str, Callable[[DFSTConfig, int], DFST]] = {
    "identity": lambda config, seed: DFST.init_identity(config),
    "jitter": jitter_init,
    "random": random_init,
}


# Teacher-forced hidden states of a population (A, h0, reads, mask, noise, *, normalize) -> (R, b, T, d):
# the same values three ways.
FORWARDS: dict[str, Callable] = {
    "scan": scanned_states(prefix_products_torch),            # log-depth, torch's associative_scan
    "hillis": scanned_states(prefix_products_hillis_steele),  # log-depth, hand-rolled
    "loop": looped_states,                                    # T steps, no per-step matrices: big batches
}


def teacher_forced(model: DFST | Population, reads: torch.Tensor, mask: torch.Tensor,
                   noise: torch.Tensor | None, cfg: TrainConfig) -> tuple[torch.Tensor, ...]:
    """Symbol and move scores (…, b, T, k), (…, b, T, 5) of every step, fed the expert's reads (b, T),
    and the hidden states h (…, b, T, d) they were read from; … is the restart axis of a Population
    (noise (R, b, T, d)), absent for a single DFST (noise (b, T, d))."""
    single = isinstance(model, DFST)
    A, B, C, h0 = (getattr(model, name) for name in ("A", "B", "C", "h0"))
    if single:
        A, B, C, h0 = A[None], B[None], C[None], h0[None]
    if single and noise is not None:
        noise = noise[None]
    states = FORWARDS[cfg.forward]
    if cfg.normalize_h:
        # normalising between noisy steps is not a linear scan; without noise it is, but a product
        # of a few hundred matrices overflows float32 before the final normalisation (mult PTOs)
        states = looped_states
    h = states(A, h0, reads, mask, noise, normalize=cfg.normalize_h)  # (R, b, T, d)
    out = population_readout(B, h, reads), population_readout(C, h, reads), h
    return tuple(t[0] for t in out) if single else out


def mse_loss(symbol_scores, move_scores, writes, moves, mask) -> torch.Tensor:
    """The published loss: 1/(2T) Σ_t |ŝ_t − onehot(s_t)|² + |m̂_t − onehot(m_t)|² over real steps."""
    err = ((symbol_scores - F.one_hot(writes, symbol_scores.shape[-1])) ** 2).sum(-1) \
        + ((move_scores - F.one_hot(moves, move_scores.shape[-1])) ** 2).sum(-1)  # (b, T)
    return torch.where(mask, err, 0.0).sum((-2, -1)) / (2 * mask.sum())


def ce_loss(symbol_scores, move_scores, writes, moves, mask) -> torch.Tensor:
    """Cross-entropy of the scores as logits, (CE_symbol + CE_move) / 2, averaged over real steps."""
    ce = _cross_entropy(symbol_scores, writes) + _cross_entropy(move_scores, moves)  # (…, b, T)
    return torch.where(mask, ce, 0.0).sum((-2, -1)) / (2 * mask.sum())


def _cross_entropy(scores: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per-step cross-entropy of scores (…, b, T, n) against targets (b, T), shaped (…, b, T)."""
    targets = targets.expand(scores.shape[:-1])
    return F.cross_entropy(scores.reshape(-1, scores.shape[-1]), targets.reshape(-1),
                           reduction="none").view(targets.shape)


LOSSES = {"mse": mse_loss, "ce": ce_loss}  # scalar for one model, (R,) for a population


def vertex_penalty(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean |h_t - onehot(argmax h_t)|² over real steps: pulls hidden states onto the d corners
    e_1..e_d, where a compiled automaton keeps them (pressure toward a finite set of states)."""
    corner = F.one_hot(h.argmax(-1), h.shape[-1]).to(h.dtype)  # (…, b, T, d)
    return torch.where(mask, ((h - corner) ** 2).sum(-1), 0.0).sum((-2, -1)) / mask.sum()


def discrete_at(step: int, cfg: TrainConfig) -> float:
    """The vertex penalty's weight: ramped linearly from 0 to `discrete` over the first half."""
    return cfg.discrete * min(1.0, 2 * step / max(cfg.iters, 1))


def evaluate_model(model: DFST, task: Task, cfg: TrainConfig, data: PtoDataset | None = None) -> dict:
    """Closed-loop exact match (h rescaled every step) at each evaluation length and target_digits;
    with cfg.extract, also of the automaton read off the model's states on the training `data`."""
    result = _closed_loop(DfstWeights.of(*model.numpy_weights()), task, cfg)
    if cfg.extract and data is not None:
        from dfst.compile import compile_agent

        found = extract_or_none(model, data, task)
        if found is None:
            result["extracted"] = None  # no conflict-free automaton yet
        else:
            weights = DfstWeights.of(*compile_agent(found.agent).numpy_weights())
            result["extracted"] = _closed_loop(weights, task, cfg) | {"states": found.agent.d,
                                                                     "rules": found.pairs}
    return result


def extract_or_none(model: DFST, data: PtoDataset, task: Task):
    """The automaton read off the model's states on `data` (clustered, then merged: dfst.merge),
    or None when the states show no conflict-free automaton."""
    from dfst.merge import extract_merged
    from dfst.tasks.base import BLANK

    try:
        return extract_merged(model.numpy_weights(), data, task.alphabet, BLANK)
    except DfstError:
        return None


def clean_losses(model: Population, seqs: Sequences, cfg: TrainConfig, chunk: int = 256) -> torch.Tensor:
    """Each restart's noise-free loss over every training PTO, `chunk` PTOs at a time (10,000 mult10
    PTOs at once would need gigabytes of scores)."""
    total, steps = torch.zeros(model.size), 0
    with torch.no_grad():
        for start in range(0, len(seqs), chunk):
            reads, writes, moves, mask = seqs.batch(torch.arange(start, min(start + chunk, len(seqs))))
            symbol_scores, move_scores, _ = teacher_forced(model, reads, mask, None, cfg)
            n = int(mask.sum())
            total += LOSSES[cfg.loss](symbol_scores, move_scores, writes, moves, mask) * n
            steps += n
    return total / steps


def select_restart(model: Population, seqs: Sequences, data: PtoDataset, task: Task,
                   cfg: TrainConfig) -> tuple[int, list[dict]]:
    """The restart to keep, judged on the training PTOs only: a finite noise-free loss first; with
    `extract`, then the fewest states of the automaton read off it (Occam: every candidate reproduces
    the PTOs), then the lowest loss. Returns its index and every restart's figures."""
    losses = clean_losses(model, seqs, cfg).tolist()
    table = []
    for r, loss in enumerate(losses):
        row = {"restart": r, "loss": loss if math.isfinite(loss) else None}
        if cfg.extract and model.size > 1 and math.isfinite(loss):
            found = extract_or_none(model.member(r), data, task)
            row |= {"states": found.agent.d, "rules": found.pairs} if found else {"states": None}
        table.append(row)

    def rank(row: dict) -> tuple:
        states = row.get("states")
        return (row["loss"] is None, states is None and "states" in row, states or 0, row["loss"] or 0.0)
    return min(table, key=rank)["restart"], table


def best_robust(evaluation: dict) -> int:
    """The robust length of the model or of its extracted automaton, whichever is longer."""
    extracted = evaluation.get("extracted") or {}
    return max(evaluation["robust_max_digits"], extracted.get("robust_max_digits", 0))


def _closed_loop(weights: DfstWeights, task: Task, cfg: TrainConfig) -> dict:
    digits = sorted(set(cfg.eval_digits) | ({cfg.target_digits} - {0}))
    eval_cfg = EvalConfig(tuple(digits), random=cfg.eval_random, rescale=True)
    report, _ = run_protocol(task, weights, eval_cfg)
    levels = [{key: lv[key] for key in ("digits", "robust", "exact", "instances", "random_exact", "random")}
              for lv in report["levels"]]
    return {"robust_max_digits": report["robust_max_digits"],
            "probabilistic_max_digits": report["probabilistic_max_digits"],
            "seconds": report["seconds"], "levels": levels}


@contextmanager
def deterministic(threads: int):
    """Fixed torch threads and deterministic algorithms for the duration; restored afterwards."""
    old = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(old[0])
        torch.use_deterministic_algorithms(old[1])


# ----------------------------------------------------------------------------- the loop


def train(cfg: TrainConfig, out_dir: str | Path, *, data: PtoDataset | None = None, resume: bool = True,
          progress: Callable[[dict], None] | None = None, command: str | None = None) -> dict:
    """Train, writing the run to `out_dir`; returns the summary (also in out_dir/summary.json).

    `data` replaces the sampled training set. With `resume`, a run already in `out_dir` (same
    config, same data) continues from its last checkpoint, or returns its summary if finished;
    without it, the old run's files are removed first. `progress(record)` is called after every
    iteration with the iteration's record (iteration, iters, loss, lr, seconds, eval if evaluated).
    """
    cpu_start = time.process_time()
    task = get_task(cfg.task)
    data = SAMPLERS[cfg.sampler](task, cfg.samples, cfg.max_digits, cfg.seed) if data is None else data
    if data.task != task.name or data.k != len(task.alphabet):
        raise DfstError(f"the training data is for task {data.task} (k={data.k}), not {task.name}")
    k, d = len(task.alphabet), cfg.d or task.agent.d
    run_info = {"format": RUN_FORMAT, "version": 1, "train": cfg.to_dict(),
                "command": command if command is not None else shlex.join(sys.argv),
                "data": {"sha256": dataset_sha256(data), "summary": summarize(data)},
                "model": {"k": k, "d": d, "params": DFSTConfig(k, d).params},
                "dfst_version": __version__, "torch_version": torch.__version__}
    with run_lock(out_dir, run_info["command"]):  # one writer per run directory
        out = prepare_run(out_dir, run_info, resume=resume)
        if resume and (finished := read_json(out / SUMMARY_FILE)) is not None:
            return finished
        return _train_loop(cfg, out, data, run_info, resume=resume, progress=progress, cpu_start=cpu_start)


def _train_loop(cfg: TrainConfig, out: Path, data: PtoDataset, run_info: dict, *, resume: bool,
                progress: Callable[[dict], None] | None, cpu_start: float) -> dict:
    """The loop of `train` in the prepared (and locked) run directory `out`."""
    task = get_task(cfg.task)
    k, d = run_info["model"]["k"], run_info["model"]["d"]
    if not (out / DATA_FILE).exists():
        from dfst.data import save_dataset

        save_dataset(data, out / DATA_FILE)
        record_paths(out, DATA_FILE)  # a kill before this: resume checks it against config.json
    with deterministic(cfg.threads):
        model = Population([INITS[cfg.init](DFSTConfig(k, d, task.name), restart_seed(cfg.seed, r))
                            for r in range(cfg.restarts)])
        optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, foreach=False)
        state = (load_train_state(out / STATE_FILE, model, optimizer) if resume else None) or {}
        start = done = state.get("iteration", 0)
        loss_value, last_eval, stopped_by = state.get("loss"), state.get("eval"), state.get("stopped_by")
        elapsed, clock = state.get("seconds", 0.0), time.perf_counter()
        cpu_before = state.get("cpu_seconds", 0.0)  # process time of the segments before a resume

        def cpu_seconds() -> float:
            return round(cpu_before + time.process_time() - cpu_start, 3)

        truncate_metrics(out / METRICS_FILE, start)
        seqs = Sequences.of(data)

        def checkpoint(iteration: int, seconds: float) -> None:
            save_run_state(out, model, optimizer,
                             {"iteration": iteration, "seconds": seconds, "cpu_seconds": cpu_seconds(),
                              "loss": loss_value, "eval": last_eval, "stopped_by": stopped_by})

        last = cfg.iters if stopped_by is None else start  # a run that stopped early stays stopped
        selected = None  # (iteration, restart kept, table): the final evaluation's, reused at the end
        for it in range(start + 1, last + 1):
            # batch: a function of (seed, iteration), so a resumed run sees the same batches
            rows = (bucket_rows(cfg.seed, it, cfg.batch, seqs.lengths) if cfg.bucket
                    else batch_rows(cfg.seed, it, cfg.batch, len(seqs)))
            reads, writes, moves, mask = seqs.batch(rows)
            lr, sigma = lr_at(it - 1, cfg), noise_at(it - 1, cfg)
            for group in optimizer.param_groups:
                group["lr"] = lr
            # forward: teacher-forced scores from the scanned hidden states, then the loss
            noise = step_noise(cfg.seed, it, sigma, (cfg.restarts, *reads.shape, d))
            symbol_scores, move_scores, h = teacher_forced(model, reads, mask, noise, cfg)
            losses = LOSSES[cfg.loss](symbol_scores, move_scores, writes, moves, mask)  # (R,)
            objective = losses.sum() + cfg.l1 * model.A.abs().sum() if cfg.l1 else losses.sum()
            if cfg.discrete:
                objective = objective + discrete_at(it - 1, cfg) * vertex_penalty(h, mask).sum()
            seconds = round(elapsed + time.perf_counter() - clock, 3)
            finite = losses[torch.isfinite(losses)]  # a diverged restart never disturbs the others
            if finite.numel() == 0:  # stop with the weights of the last finite iteration
                stopped_by = "diverged"
                append_metrics(out / METRICS_FILE, {"iteration": done, "diverged_at": it, "loss": math.nan})
                checkpoint(done, seconds)
                break
            loss_value = finite.min().item()
            # backward and Adam step
            optimizer.zero_grad(set_to_none=True)
            objective.backward()
            optimizer.step()
            done = it
            # periodic closed-loop evaluation, metrics and checkpoint
            record = {"iteration": it, "iters": cfg.iters, "loss": loss_value, "lr": lr, "seconds": seconds}
            if sigma:
                record["noise"] = sigma
            if cfg.restarts > 1:
                record["losses"] = losses.tolist()
            if (cfg.eval_every and it % cfg.eval_every == 0) or it == cfg.iters:
                with torch.no_grad():
                    chosen, table = select_restart(model, seqs, data, task, cfg)
                    selected = (it, chosen, table)
                    last_eval = record["eval"] = evaluate_model(model.member(chosen), task, cfg, data)
                    last_eval["restart"] = chosen
                if cfg.target_digits and best_robust(last_eval) >= cfg.target_digits:
                    stopped_by = "target"
            if it % cfg.log_every == 0 or "eval" in record or stopped_by:
                append_metrics(out / METRICS_FILE, record)
            if (cfg.checkpoint_every and it % cfg.checkpoint_every == 0) or it == cfg.iters or stopped_by:
                checkpoint(it, seconds)
            if progress is not None:
                progress(record)
            if stopped_by:
                break
        seconds = round(elapsed + time.perf_counter() - clock, 3)
        if selected is None or selected[0] != done:  # selecting reads an automaton off every restart
            selected = (done, *select_restart(model, seqs, data, task, cfg))
        _, chosen, restarts = selected
    return _finish(out, model.member(chosen), cfg, run_info, done, loss_value, last_eval,
                   stopped_by or "iters", seconds, resumed_from=start or None,
                   restarts={"chosen": chosen, "table": restarts}, data=data, cpu_seconds=cpu_seconds)


def restart_seed(seed: int, restart: int) -> int:
    """The initialisation seed of a restart; restart 0 uses the run's seed itself."""
    if restart == 0:
        return seed
    return int(np.random.SeedSequence([seed, restart]).generate_state(1, np.uint32)[0])


def _finish(out: Path, model: DFST, cfg: TrainConfig, run_info: dict, done: int, loss: float | None,
            last_eval: dict | None, stopped_by: str, seconds: float, resumed_from: int | None,
            restarts: dict, data: PtoDataset, cpu_seconds: Callable[[], float]) -> dict:
    """Save the kept model (and, with `extract`, its automaton), then summary.json (last: it marks
    the run finished). `cpu_seconds()`: process time of the whole run so far, sampling and
    extraction included, summed over resumed segments."""
    provenance = {"source": "train", "train_config": run_info["train"], "iterations": done,
                  "final_loss": loss, "stopped_by": stopped_by, "data": run_info["data"],
                  "command": run_info["command"], "restart": restarts["chosen"]}
    remove_final_outputs(out)
    save_checkpoint(model, out / MODEL_DIR, provenance, overwrite=True)
    extracted = _save_extraction(out, model, cfg, data) if cfg.extract else None
    record_paths(out, MODEL_DIR, EXTRACTED_DIR)  # checked once summary.json says the run is finished
    summary = {"task": cfg.task, "out": str(out), "model": str(out / MODEL_DIR), **run_info["model"],
               "samples": run_info["data"]["summary"]["samples"], "iterations": done, "iters": cfg.iters,
               "stopped_by": stopped_by, "final_loss": loss, "seconds": seconds, "cpu_seconds": cpu_seconds(),
               "resumed_from": resumed_from, "eval": last_eval, "metrics": str(out / METRICS_FILE),
               "extracted": extracted, "restarts": restarts}
    write_run_json(out, SUMMARY_FILE, summary)
    return summary


def _save_extraction(out: Path, model: DFST, cfg: TrainConfig, data: PtoDataset) -> dict | None:
    """The automaton read off the kept model, compiled to exact weights in out/extracted/."""
    from dfst.automata import save_transducer
    from dfst.compile import compile_agent

    found = extract_or_none(model, data, get_task(cfg.task))
    if found is None:
        return None
    provenance = {"source": "extract", "run": str(out), "radius": found.radius, "rules": found.pairs}
    compiled = compile_agent(found.agent, task=cfg.task)
    save_checkpoint(compiled, out / EXTRACTED_DIR, provenance, overwrite=True)
    save_transducer(found.agent, out / EXTRACTED_DIR / "agent.json")
    return {"model": str(out / EXTRACTED_DIR), "states": found.agent.d, "rules": found.pairs}
