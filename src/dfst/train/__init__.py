"""Training a DFST on PTOs: a package, each module one job.

    config      TrainConfig: the grouped, validated schema of a run (no torch: `dfst --help` reads it)
    batches     the training PTOs as padded tensors, minibatches and noise per iteration (the
                samplers that choose them: dfst.data.samplers)
    objectives  the loss and the penalties, each a named unit in a registry
    restarts    restarts side by side: their seeds, and the one kept
    evaluation  closed-loop evaluation during training, and the automaton read off a model
    loop        `train`: the loop, read top to bottom
    job         `plan_training` and `run_training`: a `dfst train` command as one library call
    rundir      the run directory: layout, resume, manifest, metrics log
    state       the resumable training state (weights and Adam moments)
    cegis       counterexample-guided training: train, certify, add the counterexample, repeat
    finetune    `dfst finetune`: a trained run's raw weights fine-tuned until they run exact closed loop
    anchors     its blocks, centres and phases (Adam with annealed noise, then L-BFGS in float64)

`from dfst.train import TrainConfig, train` is the entry point. Importing the package (or its
config) does not import torch; the names that need it load their module when first used.
"""

from __future__ import annotations

import importlib

from dfst.train.config import (
    DataConfig,
    EvaluationConfig,
    LoggingConfig,
    ModelConfig,
    OptimConfig,
    PopulationConfig,
    RegularConfig,
    TrainConfig,
)

_LAZY = {"train": "loop", "deterministic": "determinism", "lr_at": "loop", "SCHEDULES": "loop",
         "train_until_certified": "cegis", "plan_training": "job", "run_training": "job"}
# The lazy names are documented in their modules; __all__ lists what importing the package defines.
__all__ = ["DataConfig", "EvaluationConfig", "LoggingConfig", "ModelConfig", "OptimConfig",
           "PopulationConfig", "RegularConfig", "TrainConfig"]


def __getattr__(name: str):
    """The torch-side names, imported on first use."""
    if name in _LAZY:
        return getattr(importlib.import_module(f"dfst.train.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'dfst.train' has no attribute {name!r}")
