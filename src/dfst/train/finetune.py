"""Fine-tuning a trained run so that its raw weights, not only the automaton read off them, are exact
far beyond the training length (issue 16; docs/research/finetune.md).

    finetune(run_dir, out_dir, FinetuneConfig()) -> summary

reads RUN/model and RUN/data.pto.zip, labels the teacher-forced states by the automaton that
`dfst.extract` reads off the model, fine-tunes weights and block centres against the consistency
penalty (`dfst.train.anchors`: by default L-BFGS in float64 on the centres' objective; optionally
first Adam with annealed noise and L-BFGS on the teacher-forced states), and writes

    OUT/model         the fine-tuned weights: a dfst checkpoint, float32, as gradient descent left them
    OUT/summary.json  the residuals and training-step exactness before and after, the phases, CPU time

Nothing is copied from the extracted automaton but the block of each step (and so which block reads
which symbol; the actions demanded at a block are the PTOs' own). Deterministic: a fixed
seed gives the same weights bit for bit on the CPU (seeded noise, deterministic torch, fixed threads).
Importing this module does not import torch: `dfst finetune --help` reads FinetuneConfig.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from dfst import __version__
from dfst.errors import DfstError

FORMAT = "dfst-finetune"
MODEL_DIR, SUMMARY_FILE = "model", "summary.json"
OWN_FILES = (MODEL_DIR, SUMMARY_FILE)


@dataclass(frozen=True)
class FinetuneConfig:
    """The schedule. On the teacher-forced objective (off by default: the centres phase alone does
    better, in seconds): `adam_iters` Adam iterations with the noise annealed from `noise` to 0, then
    `plain_iters` without noise (one cosine lr from `lr` over both), then `lbfgs_iters` of L-BFGS in
    float64; `weight` multiplies its consistency and pull penalties, `seed` draws its noise. Then
    `frozen_iters` of L-BFGS on the objective at the centres with the centres held at the
    orthonormal set closest to their start (A, B, C and h0 alone move: least squares plus a hinge),
    and `centre_iters` with the centres free; the readouts must lead by `margin`. `damping` weighs
    the penalty on the directions the automaton never uses (0: off)."""

    adam_iters: int = 0
    plain_iters: int = 0
    lbfgs_iters: int = 0
    lr: float = 2e-4
    noise: float = 0.03
    weight: float = 10.0
    damping: float = 1.0
    seed: int = 0
    threads: int = 1
    centre_iters: int = 3000
    margin: float = 0.5
    frozen_iters: int = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
                raise DfstError(f"fine-tuning {f.name} must be a finite number >= 0, got {value!r}")
            if f.type == "int" and not isinstance(value, int):
                raise DfstError(f"fine-tuning {f.name} must be an integer, got {value!r}")
        if self.lr <= 0 or self.threads < 1 or self.margin <= 0:
            raise DfstError(f"fine-tuning needs lr > 0, threads >= 1 and margin > 0, got {self.lr}, "
                            f"{self.threads}, {self.margin}")


def finetune(run_dir: str | Path, out_dir: str | Path, cfg: FinetuneConfig | None = None, *,
             force: bool = False, progress=None) -> dict:
    """Fine-tune the finished training run `run_dir` into `out_dir`; returns the summary (also written
    to out_dir/summary.json). `force` replaces an earlier fine-tune's files there, and only those.
    `progress(record)` gets {"phase", "iteration", "iters"} as the phases go."""
    from dfst.io.outputs import make_directory, remove_own_file, write_json
    from dfst.model.checkpoint import save_checkpoint
    from dfst.tasks.own_agent import reference_json

    cpu_start, clock = time.process_time(), time.perf_counter()
    cfg = cfg or FinetuneConfig()
    run, out = Path(run_dir), Path(out_dir)
    task, model, data = read_run(run)
    check_out_dir(out, force=force)
    model, info = tune(model, data, task, cfg, progress)
    provenance = {"source": "finetune", "run": str(run), "config": asdict(cfg), "blocks": info["blocks"],
                  "residual": info["after"]["residual"], "residual_max": info["after"]["residual_max"]}
    make_directory(out)
    remove_own_file(out / SUMMARY_FILE)  # no summary of old weights next to the new ones
    save_checkpoint(model, out / MODEL_DIR, provenance, overwrite=force, reference=reference_json(task))
    summary = {"format": FORMAT, "version": 1, "run": str(run), "task": task.name,
               "model": str(out / MODEL_DIR), "config": asdict(cfg), **info,
               "seconds": round(time.perf_counter() - clock, 3),
               "cpu_seconds": round(time.process_time() - cpu_start, 3), "dfst_version": __version__}
    write_json(out / SUMMARY_FILE, summary, allow_nan=False)
    return summary


def tune(model, data, task, cfg: FinetuneConfig, progress=None) -> tuple:
    """Fine-tune `model` (a DFST) on the PTOs `data` of `task`: (the fine-tuned model, info), info
    holding the blocks, d before and after, the residuals and training-step exactness before and
    after, and the phases' last values. The model is `model` itself, changed in place, unless the
    automaton read off has more blocks than `model` has dimensions: then a copy grown to one dimension
    per block (zero-padded, so it starts out computing what `model` does; docs/research/finetune.md)."""
    import torch

    from dfst.train import anchors
    from dfst.train.batches import Sequences
    from dfst.train.determinism import deterministic

    with deterministic(cfg.threads):
        seqs = Sequences.of(data)
        blocks = anchors.block_labels(model, data, task.agent)
        d = model.config.d
        if blocks.count > d and cfg.centre_iters:  # room for independent centres: one dimension each
            model = anchors.grown(model, blocks.count)
        centres = anchors.spread(anchors.initial_centres(model, seqs, blocks), d, cfg.seed)
        anchored = anchors.Anchored(model, centres, seqs, blocks, cfg.weight, cfg.damping, cfg.margin)
        before = anchors.measures(model, anchored)
        adam = anchors.adam_phase(anchored, noisy=cfg.adam_iters, plain=cfg.plain_iters, lr=cfg.lr,
                                  noise=cfg.noise, seed=cfg.seed, progress=progress)
        lbfgs = anchors.lbfgs_phase(anchored, cfg.lbfgs_iters, progress=progress)
        frozen = anchors.frozen_phase(anchored, cfg.frozen_iters, progress=progress)
        centres = anchors.lbfgs_phase(anchored, cfg.centre_iters, progress=progress, at_centres=True)
        after = anchors.measures(model, anchored)
    if not all(bool(torch.isfinite(p).all()) for p in model.parameters()):
        raise DfstError("fine-tuning diverged (non-finite weights); try a smaller lr")
    phases = {"adam": adam, "lbfgs": lbfgs, "frozen": frozen, "centres": centres}
    return model, {"blocks": blocks.count, "transitions": len(blocks.transitions), "d": [d, model.config.d],
                   "before": before, "after": after, "phases": phases}


def read_run(run: Path):
    """(task, kept model as training left it, training PTOs) of a finished `dfst train` run, its files
    checked against the run's manifest; anything else is a one-line DfstError. The task has the
    agent the run learned (`--agent`) as its expert."""
    from dfst.data import load_dataset
    from dfst.io.outputs import file_kind
    from dfst.io.recorded import check_recorded_files
    from dfst.model.checkpoint import load_checkpoint
    from dfst.tasks.own_agent import checkpoint_task
    from dfst.train.rundir import CONFIG_FILE, DATA_FILE, RUN_FORMAT, TRAINED_DIR, check_run_files, read_json

    kind = file_kind(run)
    if kind != "directory":
        raise DfstError(f"run directory {run} {'does not exist' if kind == 'missing' else 'is a ' + kind}")
    config = read_json(run / CONFIG_FILE)
    if config is None or config.get("format") != RUN_FORMAT:
        raise DfstError(f"{run} is not a dfst training run (no run config.json)")
    if file_kind(run / SUMMARY_FILE) != "file":
        raise DfstError(f"{run} is an unfinished training run (finish it with dfst train first)")
    check_recorded_files(run)  # every file as dfst wrote it, named as every reader names it
    check_run_files(run, config)  # (and the data of a run from before manifests)
    # a run trained with the phase already holds fine-tuned weights in model/: start from training's
    trained = run / TRAINED_DIR
    model, saved = load_checkpoint(trained if file_kind(trained) == "directory" else run / MODEL_DIR)
    data = load_dataset(run / DATA_FILE)
    if model.config.task is None or model.config.task != data.task:
        raise DfstError(f"{run}: the model's task {model.config.task} is not its data's {data.task}")
    return checkpoint_task(saved), model, data


def check_out_dir(out: Path, *, force: bool) -> None:
    """Refuse, before any work, an output that is not a new or empty directory or an earlier
    fine-tune's (which needs `force`); a link or a user's file in it is never replaced."""
    from dfst.io.outputs import claim_directory, file_kind
    from dfst.model.checkpoint import is_checkpoint
    from dfst.train.rundir import check_checkpoint_dir

    claim_directory(out, what="fine-tune", own=OWN_FILES, is_ours=_holds_finetune, force=force)
    model = out / MODEL_DIR
    if file_kind(model) not in ("missing", "directory") or (model.exists() and not is_checkpoint(model)):
        raise DfstError(f"{model} is not a dfst checkpoint; dfst leaves it alone (move it away)")
    if model.exists():
        check_checkpoint_dir(model)


def _holds_finetune(out: Path) -> bool:
    """A fine-tune's summary.json, or its model alone (a fine-tune killed between the two)."""
    from dfst.io.inputs import read_json_file
    from dfst.io.outputs import file_kind
    from dfst.model.checkpoint import is_checkpoint

    summary, model = out / SUMMARY_FILE, out / MODEL_DIR
    if file_kind(summary) == "file":
        return _is_finetune(read_json_file(summary, f"cannot read {summary}"))
    return file_kind(summary) == "missing" and file_kind(model) == "directory" and is_checkpoint(model)


def _is_finetune(data: object) -> bool:
    return isinstance(data, dict) and data.get("format") == FORMAT
