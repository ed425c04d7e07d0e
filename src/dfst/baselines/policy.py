"""Sequence-model policies on PTOs: `lstm-policy`, `gru-policy`, `transformer-policy`.

The strongest reading of "train a standard sequence model on the same data": each model is trained on
the very PTOs the DFST of the task's recipe trains on (`training_data(recipe(task, seed))`, same
samples, same max digits), teacher-forced to predict each step's write and move from the reads so
far (`dfst.baselines.policy_train`), then run closed loop on the grid exactly as the DFST's engine
runs (`dfst.baselines.policy_runner`) and scored by the protocol of the other baselines
(`evaluate_predictor`: hard instances plus `random` random pairs per length, exact answers).

Lengths: the recipe's max digits, 2x, 5x, 10x, ... up to `eval_top` (`length_ladder`), stopping after
the first length with no exact answer, before a length predicted to end past `eval_seconds` (from
the last length's time, linear in the step bound for the recurrent models, quadratic for the
transformer), and, for the transformer, before a length whose step bound exceeds `max_context` (its
KV cache). `details.stopped_by` says which. Sizes: `dfst.baselines.policy_models`; the system is
"LSTM policy (small)" or "(large)", two rows of `dfst table`; `dfst baseline` stores the large one
under its own name (results/baselines/lstm-policy-large-add2-s0.json). Results: docs/research/baselines.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, replace

from dfst.baselines.common import count_params, evaluate_predictor, hardware, length_ladder, merge_config
from dfst.baselines.policy_models import TorchPolicy
from dfst.baselines.policy_runner import rollout_policy
from dfst.baselines.policy_train import train_policy
from dfst.data import SAMPLERS
from dfst.errors import DfstError
from dfst.protocol.config import EvalConfig
from dfst.protocol.instances import level_instances
from dfst.results import Result
from dfst.tasks.base import Task

NAMES = {"lstm": "LSTM", "gru": "GRU", "transformer": "Transformer"}
COST_POWER = {"lstm": 1, "gru": 1, "transformer": 2}  # evaluation time ~ (step bound) ** power
COMMON: dict = {
    "size": "small",        # small: about the DFST's parameters for the task; large: width 128
    # Adam steps, set once on add2 seed 0 (the only tuning; the same for every task, seed and size):
    # 1,000 left the small LSTM at 99.4% of the training PTOs' steps teacher-forced; with 2,000 the
    # LSTM and GRU (small and large) and the large transformer predict 100% of them. The small
    # transformer (width 6) stays at 97.7% with 2,000 or 4,000 (98.3% at lr 1e-2): its width, not steps.
    "steps": 2000,
    "batch": 32,            # PTOs per step (0, or more than the recipe has: all of them)
    "lr": 3e-3,
    "clip": 1.0,
    "eval_top": 2000,       # the ladder's last length
    "random": 10,           # random pairs per length, as dfst eval
    "eval_seconds": 120.0,  # no length starts that is predicted to end later than this
    "threads": 1,           # torch threads: with one, a seed reproduces a run bit for bit
    # the PTOs' sampler: the recipe's (stored by its name), or one of dfst.data.SAMPLERS with the
    # recipe's samples and max digits (cover and pairs read the expert's states)
    "sampler": "recipe",
}
# The transformer's max_context: the most steps its KV cache may hold (a longer length is not run).
KIND_DEFAULTS: dict[str, dict] = {"lstm": COMMON, "gru": COMMON,
                                  "transformer": COMMON | {"max_context": 4096}}
NON_NEGATIVE = ("batch", "random")


def checked_config(kind: str, config: dict) -> dict:
    """KIND_DEFAULTS[kind] overridden by `config`; an unknown key or a bad value is a one-line DfstError."""
    label = f"{kind}-policy"
    merged = merge_config(config, KIND_DEFAULTS[kind], label)
    for key, value in merged.items():
        problem = _value_problem(key, value, KIND_DEFAULTS[kind][key])
        if problem:
            raise DfstError(f"{label} config {key}={value!r}: {problem}")
    return merged


def _value_problem(key: str, value: object, default: object) -> str | None:
    number = isinstance(default, float) and isinstance(value, int)
    if isinstance(value, bool) or not (isinstance(value, type(default)) or number):
        return f"expected {type(default).__name__}"
    if key == "size" and value not in ("small", "large"):
        return "expected small or large"
    if key == "sampler" and value not in ("recipe", *SAMPLERS):
        return f"expected recipe or one of {', '.join(SAMPLERS)}"
    if isinstance(value, int | float) and (value < 0 or (value == 0 and key not in NON_NEGATIVE)):
        return ">= 0 expected" if key in NON_NEGATIVE else "> 0 expected"
    return None


def step_bound(task: Task, n: int, random: int) -> int:
    """The longest step bound among the protocol's instances at length n."""
    instances = level_instances(task, n, EvalConfig(digits=(n,), random=random))
    return max(task.max_steps(inst) for inst in instances)


def evaluate_policy(kind: str, task: Task, model, config: dict, max_train_digits: int,
                    trained_on: Iterable[tuple[str, str]] = ()) -> dict:
    """The protocol's scores ({"robust_lg", "probabilistic_lg", "levels", "stopped_by"}), closed loop:
    the ladder loop's, with the policy's own cost (its step bound to COST_POWER[kind]) and its
    context ("context": a length whose step bound is over `max_context`)."""
    policy = TorchPolicy(model)
    lengths = length_ladder(max_train_digits, config["eval_top"])
    bounds = {n: step_bound(task, n, config["random"]) for n in lengths}

    def predict(instances):
        return [run.answer for run in rollout_policy(task, policy, instances)]

    def over_context(n: int) -> str | None:
        return "context" if bounds[n] > config.get("max_context", bounds[n]) else None

    def growth(n: int, last: int) -> float:
        return (bounds[n] / bounds[last]) ** COST_POWER[kind]

    scores = evaluate_predictor(task, predict, lengths, random=config["random"], stop_when_none_exact=True,
                                time_budget=config["eval_seconds"], trained_on=trained_on, growth=growth,
                                before=over_context)
    stopped_by = {"after_level": "none_exact"}.get(scores["stopped_by"], scores["stopped_by"])
    kept = ("robust_lg", "probabilistic_lg", "levels")
    return {key: scores[key] for key in kept} | {"stopped_by": stopped_by}


def run_kind(kind: str, task: Task, *, seed: int, config: dict, progress: bool = True) -> Result:
    """Train the `kind` policy on the DFST recipe's PTOs for `task` and score it closed loop."""
    from dfst.baselines.io_pairs import progress_bar
    from dfst.train import deterministic
    from dfst.train.loop import training_data
    from dfst.train.recipes import recipe

    config = checked_config(kind, config)
    train_cfg = recipe(task.name, seed)
    if config["sampler"] != "recipe":
        train_cfg = replace(train_cfg, sampler=config["sampler"])
    config["sampler"] = train_cfg.sampler
    data = training_data(train_cfg, task)
    with deterministic(config["threads"]), progress_bar(progress) as bar:
        label = f"{kind}-policy {task.name}"
        job = bar.add_task(label, total=config["steps"])
        def advance(loss: float) -> None:
            bar.update(job, advance=1, description=f"{label} loss {loss:.4f}")

        model, info = train_policy(kind, task, data, config, seed, advance)
        where = hardware()  # inside: the threads it reports are the ones training used
        scores = evaluate_policy(kind, task, model, config, train_cfg.max_digits, data.operands)
    return Result(
        system=f"{NAMES[kind]} policy ({config['size']})", task=task.name, seed=seed, samples=data.samples,
        params=count_params(model), max_train_digits=train_cfg.max_digits, robust_lg=scores["robust_lg"],
        probabilistic_lg=scores["probabilistic_lg"], train_seconds=info["train_seconds"], hardware=where,
        levels=scores["levels"], config={**config, **asdict(model.cfg)},
        notes=f"{NAMES[kind]} teacher-forced on the DFST recipe's PTOs ({train_cfg.sampler} sampler), "
              "run closed loop on the grid; samples = PTOs",
        details={"final_loss": info["final_loss"], "train_step_accuracy": info["train_step_accuracy"],
                 "stopped_by": scores["stopped_by"],
                 "exact_by_length": {lv["digits"]: lv["exact"] / lv["instances"] for lv in scores["levels"]}})
