"""The fine-tuning phase of a training run (`finetune` in the config; docs/research/finetune.md).

After training has written RUN/model and summary.json, the kept model is fine-tuned
(`dfst.train.finetune.tune`) so that its own weights stay exact closed loop far beyond the training
length. The run then holds

    trained/   the weights training left (the kept restart), as they were
    model/     the fine-tuned weights: gradient descent's, float32, what dfst eval RUN reads

and summary.json gains a "finetune" entry (residuals, phases, CPU seconds, plain-h closed loop at the
evaluation lengths). Each step can be killed and resumed: trained/ is written before model/ is
replaced, and a resumed phase always starts again from trained/, so it gives the same weights.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path

from dfst.data import PtoDataset
from dfst.errors import DfstError
from dfst.tasks.base import Task
from dfst.tasks.own_agent import reference_json
from dfst.train.config import TrainConfig
from dfst.train.rundir import MODEL_DIR, SUMMARY_FILE, TRAINED_DIR, check_checkpoint_dir, write_run_json


def finetune_config(cfg: TrainConfig):
    """The fine-tuning schedule of a run: its phases' iterations and damping, and its threads. The
    noise keeps `dfst finetune`'s default seed, so that `dfst train` and `dfst train --no-finetune`
    then `dfst finetune` give the same weights (docs/research/finetune.md's table holds for both)."""
    from dfst.train.finetune import FinetuneConfig

    return FinetuneConfig(adam_iters=cfg.finetune_adam, plain_iters=cfg.finetune_plain,
                          lbfgs_iters=cfg.finetune_lbfgs, damping=cfg.finetune_damping, threads=cfg.threads,
                          centre_iters=cfg.finetune_centres, margin=cfg.finetune_margin,
                          frozen_iters=cfg.finetune_frozen)


def finetune_phase(out: Path, cfg: TrainConfig, task: Task, summary: dict, data: PtoDataset,
                   progress=None) -> dict:
    """Fine-tune the finished run in `out` (summary: its summary.json; `task`: `cfg`'s, with its
    --agent); returns the new summary."""
    from dfst.io.outputs import remove_own_tree
    from dfst.io.run_guard import record_paths
    from dfst.model.checkpoint import save_checkpoint
    from dfst.train.evaluation import plain_closed_loop
    from dfst.train.finetune import tune

    cpu_start, clock = time.process_time(), time.perf_counter()
    reference = reference_json(task)
    model, provenance = _trained_model(out)
    if model is None:  # first time: keep the trained weights before model/ is replaced
        model, provenance = _load(out / MODEL_DIR)
        save_checkpoint(model, out / TRAINED_DIR, provenance, overwrite=True, reference=reference)
        record_paths(out, TRAINED_DIR)
    schedule = finetune_config(cfg)
    try:
        model, info = tune(model, data, task, schedule, progress)
    except DfstError as exc:  # e.g. no automaton to anchor to: model/ gets training's weights, and says why
        info = {"error": str(exc)}
        model, provenance = _load(out / TRAINED_DIR)  # tune changed `model` in place
    else:
        provenance |= {"finetune": asdict(schedule), "residual_max": info["after"]["residual_max"]}
    check_checkpoint_dir(out / MODEL_DIR)  # only a checkpoint's own files, no links: then replace it
    remove_own_tree(out / MODEL_DIR)  # (a phase cut short may have left fine-tuned weights there)
    save_checkpoint(model, out / MODEL_DIR, provenance, reference=reference)
    record_paths(out, MODEL_DIR)
    if "error" not in info:
        info["eval_plain"] = plain_closed_loop(model, task, cfg, data)
    info |= {"trained": str(out / TRAINED_DIR), "seconds": round(time.perf_counter() - clock, 3),
             "cpu_seconds": round(time.process_time() - cpu_start, 3)}
    total = round(summary["cpu_seconds"] + info["cpu_seconds"], 3)  # training and fine-tuning
    summary = summary | {"finetune": info, "cpu_seconds": total}
    write_run_json(out, SUMMARY_FILE, summary)
    return summary


def _trained_model(out: Path):
    """trained/ when a complete checkpoint is there (an earlier phase was cut short), else (None, None);
    a partial trained/ (killed while written) is removed."""
    from dfst.io.outputs import file_kind, remove_own_tree

    path = out / TRAINED_DIR
    kind = file_kind(path)
    if kind == "missing":
        return None, None
    if kind != "directory":  # a link or a user's file is neither read nor replaced
        raise DfstError(f"{path} is a {kind}, not the checkpoint dfst writes there (move it away)")
    try:
        return _load(path)
    except DfstError:
        check_checkpoint_dir(path)
        remove_own_tree(path)
        return None, None


def _load(path: Path):
    from dfst.model.checkpoint import load_checkpoint

    model, config = load_checkpoint(path)
    return model, dict(config.get("provenance") or {})
