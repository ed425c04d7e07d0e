"""Training a DFST from PTOs: one visible loop, read top to bottom.

Per iteration: pick the batch (all samples, or a minibatch drawn from (seed, iteration):
`dfst.train.batches`); run the restarts teacher-forced (`dfst.model.teacher_forced`); compute the
objective (`dfst.train.objectives`); backward; Adam step at the learning rate `lr_at(iteration)`.
Every `eval_every` iterations the restart to keep is chosen (`dfst.train.restarts`) and run
closed-loop on the grid (`dfst.train.evaluation`), and training may stop once it is robust at
`target_digits`. Metrics go to metrics.jsonl; the run directory is described in `dfst.train.rundir`.

Around the loop, `train` runs it at growing d until an automaton read off reproduces held-out PTOs
(`_Sizes`, `dfst.train.dsize`), and, with `grow_rounds`, again on PTOs grown by the held-out
instances where it departs (`dfst.train.growth`); then the fine-tuning phase (`dfst.train.tuning`).

Determinism: every random draw after the initialisation comes from a generator seeded by
(seed, iteration), not from a running stream, so a resumed run draws exactly what an uninterrupted
one draws and no RNG state needs saving. Torch runs with `threads` threads and deterministic
algorithms inside `train`. On the CPU the same config gives the same weights bit for bit, and a run
killed at any point and resumed ends with the weights of an uninterrupted run.
"""

from __future__ import annotations

import math
import re
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import torch

from dfst import __version__
from dfst.data import SAMPLERS, PtoDataset
from dfst.data.reads import part, traces_read
from dfst.errors import DfstError
from dfst.io.limits import default_max_memory
from dfst.io.recorded import manifest_marker
from dfst.io.run_guard import record_paths, run_lock
from dfst.model import DFST, INITS, DFSTConfig, Population
from dfst.model.checkpoint import save_checkpoint
from dfst.tasks.base import Task
from dfst.tasks.own_agent import reference_json, resolve_task
from dfst.train import fused
from dfst.train.agreement import agreement
from dfst.train.batches import Sequences, batch_rows, bucket_rows, step_noise
from dfst.train.budget import check_training, validates
from dfst.train.config import TrainConfig
from dfst.train.determinism import deterministic
from dfst.train.dsize import d_sizes, model_info, next_size, resumed_model, tried_sizes
from dfst.train.evaluation import best_robust, evaluate_model, extract_or_none
from dfst.train.growth import Growth, added_at_most, next_round, resumed_growth
from dfst.train.objectives import LOSSES, discrete_at, noise_at, objective, scores
from dfst.train.progress import LOGGER, log_progress, model_verdict
from dfst.train.restarts import lowest_loss_restart, restart_seed, select_restart
from dfst.train.rundir import (
    DATA_FILE,
    EXTRACTED_DIR,
    METRICS_FILE,
    MODEL_DIR,
    RUN_FORMAT,
    STATE_FILE,
    SUMMARY_FILE,
    VALIDATION_FILE,
    append_metrics,
    prepare_run,
    read_json,
    remove_final_outputs,
    save_run_state,
    truncate_metrics,
    write_run_json,
)
from dfst.train.state import load_train_state
from dfst.train.validation import disagreements

# Learning-rate schedules: pure functions of (step, cfg), step = 0 … iters-1, no warmup.
SCHEDULES: dict[str, Callable[[int, TrainConfig], float]] = {
    "cosine": lambda step, cfg: cfg.lr * 0.5 * (1 + math.cos(math.pi * step / cfg.iters)),
    "constant": lambda step, cfg: cfg.lr,
    "linear": lambda step, cfg: cfg.lr * (1 - step / cfg.iters),
}


def lr_at(step: int, cfg: TrainConfig) -> float:
    """The learning rate of 0-based iteration `step`."""
    return SCHEDULES[cfg.schedule](step, cfg)


def training_device(name: str) -> torch.device:
    """The torch device called `name` (cpu, cuda, cuda:N), checked to exist: a one-line DfstError
    otherwise, before any file is written."""
    if name != "cpu" and not re.fullmatch(r"cuda(:\d+)?", name):
        raise DfstError(f"unknown device {name!r}: give cpu, cuda or cuda:N")
    if name != "cpu" and not torch.cuda.is_available():
        raise DfstError(f"device {name}: torch {torch.__version__} sees no CUDA device here (use cpu)")
    device = torch.device(name)
    if device.type == "cuda" and (device.index or 0) >= torch.cuda.device_count():
        raise DfstError(f"device {name}: torch sees {torch.cuda.device_count()} CUDA device(s)")
    return device


# ----------------------------------------------------------------------------- the loop


def task_of(cfg: TrainConfig, task: Task | None = None) -> Task:
    """The task `cfg` trains on: `task` when the caller resolved it already (it must be the one `cfg`
    names), else looked up by name, or read from `cfg.agent`'s file."""
    if task is None:
        return resolve_task(cfg.task, cfg.agent)
    if task.name != cfg.task:
        raise DfstError(f"the config trains task {cfg.task}, not {task.name}")
    return task


def training_data(cfg: TrainConfig, task: Task | None = None) -> PtoDataset:
    """The PTOs `cfg` trains on (its sampler, seeded): what `train` records when given no data."""
    task = task_of(cfg, task)
    return SAMPLERS[cfg.sampler](task, cfg.samples, cfg.max_digits, cfg.seed)


def train(cfg: TrainConfig, out_dir: str | Path, *, data: PtoDataset | None = None, resume: bool = True,
          progress: Callable[[dict], None] | None = None, command: str | None = None,
          device: str = "cpu", max_memory: int | None = None, task: Task | None = None) -> dict:
    """Train, writing the run to `out_dir`; returns the summary (also in out_dir/summary.json).

    `data` replaces the sampled training set. With `resume`, a run already in `out_dir` (same
    config, same data) continues from its last checkpoint, or returns its summary if finished;
    without it, the old run's files are removed first. `progress(record)` is called after every
    iteration with the iteration's record (iteration, iters, loss, lr, seconds, eval if evaluated),
    and the fine-tuning phase's (phase, iteration, iters, objective). The same progress, in the words
    of `dfst train`'s bar, and at the end a verdict on the model written (`dfst.train.progress`), go to
    the `dfst.train` logger at INFO: silent unless the caller turns logging on
    (`logging.basicConfig(level=logging.INFO)`).
    `device` ("cpu", "cuda", "cuda:N") runs the loop's forward and backward passes there; the noise
    and batches are drawn on the CPU, and extraction, evaluation and fine-tuning stay there. It is not
    part of the config: a run may resume on another device (bit-identity holds on the CPU only).
    The memory the run plans (`dfst.train.budget.estimate_training`) is refused beyond `max_memory` bytes
    (default: DFST_MAX_MEMORY, else half the RAM) before anything is recorded or written. A run whose
    every restart diverges stops with its last finite weights (stopped_by "diverged") and is not
    fine-tuned. `task`: the task `cfg` names, resolved already (`dfst.train.job.plan_training`).
    """
    torch_device = training_device(device)
    cpu_start = time.process_time()
    progress = _logged(progress, cfg.log_every)
    task = task_of(cfg, task)
    memory = default_max_memory() if max_memory is None else max_memory
    given = replace(cfg, sampler="uniform")  # a dataset file is not sampled
    check_training(task, cfg if data is None else given, memory, cfg.d)
    data = training_data(cfg, task) if data is None else data
    if data.task != task.name or data.k != len(task.alphabet):
        raise DfstError(f"the training data is for task {data.task} (k={data.k}), not {task.name}")
    growth = Growth(data, data)
    run_info = {"format": RUN_FORMAT, "version": 1, "train": cfg.to_dict(),
                "command": command if command is not None else shlex.join(sys.argv),
                "data": growth.record(),
                "model": model_info(len(task.alphabet), d_sizes(cfg, task, data)[0], []),
                "dfst_version": __version__, "torch_version": torch.__version__, **manifest_marker()}
    with run_lock(out_dir, run_info["command"]):  # one writer per run directory
        if resume:  # a later round of data growth of this run, stored: its data
            growth = resumed_growth(Path(out_dir), run_info, task, growth)
            run_info["data"] = growth.record()
        sizes = _Sizes(cfg, task, out_dir, run_info, memory, progress, cpu_start, torch_device)
        summary = sizes.train(growth, resume)
        while (grown := next_round(growth, cfg.grow_rounds, summary, task)) is not None:
            LOGGER.info("the automaton read off departs from the expert on %d held-out PTOs: added, "
                        "training again on %d", grown.data.samples - growth.data.samples, grown.data.samples)
            growth = grown
            summary = sizes.train(growth, resume=False)
        if cfg.finetune and "finetune" not in summary and summary["stopped_by"] != "diverged":
            from dfst.train.tuning import finetune_phase  # (else nothing to fine-tune, or done already)

            summary = finetune_phase(sizes.out, cfg, task, summary, growth.data, progress)
    LOGGER.info("verdict: %s", model_verdict(summary, cfg.to_dict())[1])
    return summary


class _Sizes:
    """One data set's training in `train`'s locked run directory: at each d size until one suffices
    (`dfst.train.dsize`), then the agreement check recorded (`dfst.train.agreement`)."""

    def __init__(self, cfg: TrainConfig, task: Task, out_dir: str | Path, run_info: dict, memory: int,
                 progress: Callable[[dict], None], cpu_start: float, device: torch.device) -> None:
        self.cfg, self.task, self.out_dir, self.run_info, self.memory = cfg, task, out_dir, run_info, memory
        self.progress, self.cpu_start, self.device = progress, cpu_start, device
        self.out, self.validation = Path(out_dir), None

    def train(self, growth: Growth, resume: bool) -> dict:
        """Train `growth.data` at growing d (resuming the stored run where it is this one); the summary."""
        cfg, task, run_info, data = self.cfg, self.task, self.run_info, growth.data
        sizes = d_sizes(cfg, task, data, growth.states_read_off)
        self.validation = growth.validation(task, cfg.seed) if validates(cfg) else None
        run_info["data"] = growth.record()
        run_info["model"] = model_info(len(task.alphabet), sizes[0], [])
        if resume:
            run_info["model"] = resumed_model(self.out, run_info, sizes)
        # a grown data set is estimated as it is, not as the config would sample it
        budgeted = cfg if not growth.round else replace(
            cfg, samples=data.samples, sampler="uniform",
            max_digits=max(cfg.max_digits, run_info["data"]["summary"]["digits_max"]))
        check_training(task, budgeted, self.memory, run_info["model"]["d"])
        self.out = prepare_run(self.out_dir, run_info, resume=resume)
        finished = read_json(self.out / SUMMARY_FILE) if resume else None
        summary = finished or self._loop(growth, resume)
        ran = finished is None
        data_next = growth.round < cfg.grow_rounds  # an automaton that departs: the data grow first
        while (grown := next_size(cfg, sizes, summary, data_next)) is not None:  # d too small: again
            LOGGER.info("d=%d did not suffice for the PTOs; training again with d=%d", summary["d"], grown)
            run_info["model"] = model_info(len(task.alphabet), grown, tried_sizes(summary))
            check_training(task, budgeted, self.memory, grown)
            self.out = prepare_run(self.out_dir, run_info, resume=False)  # the smaller size's files go
            summary = self._loop(growth, resume=False)
            ran = True
        if ran:  # the sizes' outcome: did an automaton read off reproduce the longer PTOs?
            found = agreement(summary.get("extracted"), self.validation, run_info["model"], sizes, growth,
                              cfg.grow_rounds)
            summary |= {"agreement": found}
            write_run_json(self.out, SUMMARY_FILE, summary)
        return summary

    def _loop(self, growth: Growth, resume: bool) -> dict:
        stage = {"d": self.run_info["model"]["d"], "samples": growth.data.samples, "round": growth.round,
                 "rounds": self.cfg.grow_rounds}  # where the run stands, on every progress record
        return _train_loop(self.cfg, self.task, self.out, growth.data, self.run_info, resume=resume,
                           progress=lambda record: self.progress(record | stage), cpu_start=self.cpu_start,
                           device=self.device, validation=self.validation)


def _logged(progress: Callable[[dict], None] | None, log_every: int) -> Callable[[dict], None]:
    """`progress`, with each record also on the `dfst.train` logger (when INFO is on)."""
    def report(record: dict) -> None:
        log_progress(record, log_every)
        if progress is not None:
            progress(record)
    return report


def _train_loop(cfg: TrainConfig, task: Task, out: Path, data: PtoDataset, run_info: dict, *,
                resume: bool, progress: Callable[[dict], None] | None, cpu_start: float,
                device: torch.device, validation: PtoDataset | None) -> dict:
    """The loop of `train` in the prepared (and locked) run directory `out`; `task` is `cfg`'s (with
    its --agent); `validation`: the PTOs the automaton read off is tested on (`dfst.train.validation`)."""
    k, d = run_info["model"]["k"], run_info["model"]["d"]
    for dataset, name in ((data, DATA_FILE), (validation, VALIDATION_FILE)):
        if dataset is not None and not (out / name).exists():
            from dfst.data import save_dataset

            save_dataset(dataset, out / name)
            record_paths(out, name)  # a kill before this: resume checks the data against config.json
    with deterministic(cfg.threads):
        model = Population([INITS[cfg.init](DFSTConfig(k, d, task.name), restart_seed(cfg.seed, r))
                            for r in range(cfg.restarts)]).to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, foreach=False)
        state = (load_train_state(out / STATE_FILE, model, optimizer) if resume else None) or {}
        start = done = state.get("iteration", 0)
        loss_value, last_eval, stopped_by = state.get("loss"), state.get("eval"), state.get("stopped_by")
        elapsed, clock = state.get("seconds", 0.0), time.perf_counter()
        cpu_before = state.get("cpu_seconds", 0.0)  # process time of the segments before a resume

        def cpu_seconds() -> float:
            return round(cpu_before + time.process_time() - cpu_start, 3)

        truncate_metrics(out / METRICS_FILE, start)
        seqs = Sequences.of(data).to(device)

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
            noise = None if noise is None else noise.to(device)
            losses, total = forward_pass(model, (reads, writes, moves, mask), noise, it - 1, cfg, device)
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
            total.backward()
            optimizer.step()
            done = it
            # periodic closed-loop evaluation, metrics and checkpoint
            record = {"iteration": it, "iters": cfg.iters, "loss": loss_value, "lr": lr, "seconds": seconds}
            if sigma:
                record["noise"] = sigma
            if cfg.restarts > 1:
                record["losses"] = losses.tolist()
            if (cfg.eval_every and it % cfg.eval_every == 0) or it == cfg.iters:
                with torch.no_grad():  # the kept restart is selected at the end; until then the lowest loss
                    if it == cfg.iters:
                        chosen, table = select_restart(model, seqs, data, task, cfg)
                        selected = (it, chosen, table)
                    else:
                        chosen = lowest_loss_restart(model, seqs, cfg)
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
        if last_eval is not None and last_eval.get("restart") != chosen:  # stopped early: the kept one's
            with torch.no_grad():
                last_eval = evaluate_model(model.member(chosen), task, cfg, data) | {"restart": chosen}
    return _finish(out, model.member(chosen), cfg, task, run_info, done, loss_value, last_eval,
                   stopped_by or "iters", seconds, resumed_from=start or None,
                   restarts={"chosen": chosen, "table": restarts}, data=data, cpu_seconds=cpu_seconds,
                   validation=validation)


def forward_pass(model: Population, batch: tuple, noise: torch.Tensor | None, step: int, cfg: TrainConfig,
                 device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """(the restarts' losses (R,), the objective to minimise) of a batch at 0-based iteration `step`,
    by the engine `cfg.engine` names; the fused one where it supports the config, else autograd's,
    which computes the same."""
    engine = cfg.engine if fused.supports(cfg, device) else "autograd"
    return ENGINES[engine](model, batch, noise, step, cfg)


def autograd_pass(model: Population, batch: tuple, noise: torch.Tensor | None, step: int,
                  cfg: TrainConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """The objective as torch ops, differentiated by autograd: the reference."""
    reads, writes, moves, mask = batch
    symbol_scores, move_scores, h = scores(model, reads, mask, noise, cfg)
    losses = LOSSES[cfg.loss](symbol_scores, move_scores, writes, moves, mask)  # (R,)
    return losses, objective(losses, model, h, mask, step, cfg)


def fused_pass(model: Population, batch: tuple, noise: torch.Tensor | None, step: int,
               cfg: TrainConfig) -> tuple[torch.Tensor, torch.Tensor]:
    """The loss and vertex penalty in one compiled pass (`dfst.train.fused`); the other penalties of
    the registry (those that read only the weights: `fused.supports`) as torch ops, as `objective`
    adds them."""
    per_restart, losses = fused.fused_objective(model, *batch, noise, cfg,
                                                discrete_at(step, cfg) if cfg.discrete else 0.0)
    return losses, per_restart.sum() + fused.weight_penalties(cfg, model, step)


# Training's forward and backward pass, by `cfg.engine` (config.CHOICES["engine"])
ENGINES = {"autograd": autograd_pass, "fused": fused_pass}


def _finish(out: Path, model: DFST, cfg: TrainConfig, task: Task, run_info: dict, done: int,
            loss: float | None, last_eval: dict | None, stopped_by: str, seconds: float,
            resumed_from: int | None, restarts: dict, data: PtoDataset,
            cpu_seconds: Callable[[], float], validation: PtoDataset | None = None) -> dict:
    """Save the kept model (and, with `extract`, its automaton), then summary.json (last: it marks
    the run finished). `cpu_seconds()`: process time of the whole run so far, sampling and
    extraction included, summed over resumed segments."""
    provenance = {"source": "train", "train_config": run_info["train"], "iterations": done,
                  "final_loss": loss, "stopped_by": stopped_by, "data": run_info["data"],
                  "command": run_info["command"], "restart": restarts["chosen"]}
    remove_final_outputs(out)
    save_checkpoint(model, out / MODEL_DIR, provenance, overwrite=True,
                    reference=reference_json(task))
    extracted = _save_extraction(out, model, task, data, validation) if cfg.extract else None
    record_paths(out, MODEL_DIR, EXTRACTED_DIR)  # checked once summary.json says the run is finished
    summary = {"task": cfg.task, "out": str(out), "model": str(out / MODEL_DIR), **run_info["model"],
               "samples": run_info["data"]["summary"]["samples"],  # the PTOs kept; traces: every
               # expert run read, by what for (dfst.data.reads); queries: their total
               **_reads(run_info["data"]["summary"], validation),
               "iterations": done,
               "iters": cfg.iters,
               "stopped_by": stopped_by, "final_loss": loss, "seconds": seconds, "cpu_seconds": cpu_seconds(),
               "resumed_from": resumed_from, "eval": last_eval, "metrics": str(out / METRICS_FILE),
               "extracted": extracted, "restarts": restarts}
    write_run_json(out, SUMMARY_FILE, summary)
    return summary


def _reads(data: dict, validation: PtoDataset | None) -> dict:
    """{"traces": every expert run the run read, by part, "queries": their total} (`dfst.data.reads`)."""
    checked = None if validation is None else part(validation.samples, (validation.sampling["min_digits"],
                                                                         validation.sampling["max_digits"]))
    traces = traces_read(data["sampling"], data["samples"], checked, (data["digits_min"], data["digits_max"]))
    return {"traces": traces, "queries": traces["total"]}


def _save_extraction(out: Path, model: DFST, task: Task, data: PtoDataset,
                     validation: PtoDataset | None) -> dict | None:
    """The automaton read off the kept model, compiled to exact weights in out/extracted/, and with
    `validation`, the first of its PTOs the automaton does not reproduce (None: it reproduces all)."""
    from dfst.extract.saved import save_extraction

    found = extract_or_none(model, data, task)
    if found is None:
        return None
    provenance = {"source": "extract", "run": str(out), "radius": found.radius, "rules": found.pairs}
    save_extraction(found, out / EXTRACTED_DIR, task=task, provenance=provenance, overwrite=True)
    tested = {} if validation is None else {"validation": {
        "samples": validation.samples, **departures(found.agent, task, validation, data.samples)}}
    return {"model": str(out / EXTRACTED_DIR), "states": found.agent.d, "rules": found.pairs, **tested}


def departures(agent, task: Task, validation: PtoDataset, samples: int) -> dict:
    """{"disagreement": the first validation instance the automaton read off does not reproduce (None:
    it reproduces all)}, and where it departs, "departures": the first such, as many as a round of
    data growth adds to `samples` PTOs (`dfst.train.growth`)."""
    found = disagreements(agent, task, validation, limit=added_at_most(samples))
    return {"disagreement": found[0] if found else None, **({"departures": found} if found else {})}
