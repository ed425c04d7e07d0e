"""What `dfst train` will hold in memory, estimated before anything is recorded or allocated, and
refused beyond --max-memory (dfst.tasks.budget's recording and replay estimates, plus the model, one
iteration's teacher-forced pass and the fine-tuning phase)."""

from __future__ import annotations

from dataclasses import replace

from dfst.tasks.base import Task
from dfst.tasks.budget import RECORD_BYTES, Estimate, check_estimate, estimate_recording, hard_digits
from dfst.train.config import TrainConfig
from dfst.train.validation import VALIDATION_LENGTHS, VALIDATION_PAIRS

# ----------------------------------------------------------------------------- training
# Peak RSS of one training iteration (forward, backward, Adam step) above the process after recording,
# measured on add2 with d = 2 to 80, 1 to 8 restarts, batches of 2 to 64 PTOs of 88 to 7,657 steps:
#   the loop (h normalised: the default)  32 to 49 KiB per step of the batch (autograd's graph, a node
#       set per step, whatever the batch), plus 4·(k+12)·d + 300 bytes per step, restart and PTO
#       (h, its norm, the noise, the k candidate next states, the gather's int64 index, the readouts)
#   the scan (--no-normalize-h)           8 to 13 d×d floats per step, restart and PTO, plus 128 MiB
# Weights: 24 bytes per parameter and restart (the weights, their gradients, Adam's two moments,
# the initialisation's temporaries). Fine-tuning holds L-BFGS's history in float64 (100 pairs: 1,600
# bytes per parameter of the kept model); extraction reads every state in float64.
STEP_GRAPH_BYTES = 48 << 10
SCAN_BYTES = 128 << 20
PARAM_BYTES = 24
LBFGS_BYTES = 1700
MIN_D = 2  # the smallest hidden size a run can have (a start and a stop state)


def model_params(k: int, d: int) -> int:
    """Parameters of a DFST with k symbols and d states: A (k,d,d), B (k,k,d), C (k,5,d), h0 (d)."""
    return k * d * d + k * k * d + 5 * k * d + d


def estimate_training(task: Task, cfg: TrainConfig, d: int | None = None) -> Estimate:
    """`dfst train` of `cfg` on PTOs of `task` at hidden size `d` (default cfg.d; when neither is
    known, before the PTOs that choose it are recorded, the smallest, MIN_D: the recording's share):
    the recording, the model's weights and optimiser, one iteration's teacher-forced pass over a
    padded batch of PTOs on the step bound at cfg.max_digits, and the fine-tuning phase's history."""
    record = estimate_recording(task, cfg.samples, cfg.max_digits, cfg.sampler)
    k, d = len(task.alphabet), d or cfg.d or MIN_D
    steps = task.step_bound(cfg.max_digits, cfg.max_digits, task.base)
    rows = cfg.restarts * (cfg.samples if cfg.batch == 0 else min(cfg.batch, cfg.samples))
    if cfg.normalize_h or cfg.forward == "loop":
        activations = steps * STEP_GRAPH_BYTES + rows * steps * (4 * (k + 12) * d + 300)
    else:
        activations = SCAN_BYTES + rows * steps * (52 * d * d + 4 * (k + 12) * d)
    params = model_params(k, d)
    parts = record.parts | {
        "batches": 6 * 8 * cfg.samples * steps,  # the padded int64 sequences and their index
        "weights": PARAM_BYTES * params * cfg.restarts, "activations": activations,
        "extraction": 2 * 8 * d * cfg.samples * steps,
        "fine-tuning": LBFGS_BYTES * params if cfg.finetune else 0,
        "validation": validation_bytes(task, cfg.max_digits) if validates(cfg) else 0}
    return replace(record, parts=parts)


def validates(cfg: TrainConfig) -> bool:
    """Whether a run of `cfg` records validation PTOs (`dfst.train.validation`): when its d comes from
    the data (`dsize.d_sizes` gives it more than one size to try) and it reads an automaton off. The
    one rule: training records them when this says so, and its estimate counts them."""
    return cfg.d is None and cfg.d_rule == "data" and cfg.extract


def validation_bytes(task: Task, max_digits: int) -> int:
    """The validation PTOs of training data of at most `max_digits` digits, on the step bound of the
    longest: the structured instances and VALIDATION_PAIRS random pairs at each of the lengths past it
    (a user's --data of long operands makes these long too)."""
    longest = max_digits + VALIDATION_LENGTHS
    count = VALIDATION_LENGTHS * (hard_digits(task, longest)[0] + VALIDATION_PAIRS)
    return RECORD_BYTES * task.step_bound(longest, longest, task.base) * count


def check_training(task: Task, cfg: TrainConfig, max_memory: int, d: int | None = None) -> Estimate:
    """`estimate_training`, refused beyond `max_memory` (or the replay_steps cap of its sampler)
    before anything is recorded or allocated (a run whose d comes from its PTOs is checked again at
    each size it trains at, before the model is made)."""
    d = d or cfg.d or MIN_D
    return check_estimate(estimate_training(task, cfg, d), max_memory,
                          f"training on {cfg.samples:,} PTOs of up to {cfg.max_digits:,} digits "
                          f"(d={d:,}, {cfg.restarts:,} restarts)")
