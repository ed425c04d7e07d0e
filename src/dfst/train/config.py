"""The training configuration: one schema, grouped, validated, written once (and free of torch).

A `TrainConfig` is eight small frozen groups; each field is declared once, with its default, its
bounds or choices and its `dfst train` help text (`setting`). Everything else reads that declaration:
validation, the flat dictionary that run directories and stored results keep (`to_dict`), the
options of `dfst train` (`dfst.cli.training`) and the command line that reproduces a run
(`command_line`).

    data        task, samples, max_digits, seed, sampler, agent, grow_rounds   what is trained on
    model       d, d_rule, init, normalize_h, forward               the model and its teacher-forced pass
    optim       iters, lr, schedule, batch, bucket, loss, threads, engine
    regular     noise, noise_final, l1, discrete                    noise on h and penalties
    population  restarts, extract                                   restarts side by side, the one kept
    evaluation  eval_every, eval_digits, eval_random, target_digits
    logging     checkpoint_every, log_every
    tuning      finetune, finetune_adam, finetune_plain, finetune_lbfgs, finetune_damping,
                finetune_centres, finetune_margin, finetune_frozen   the fine-tuning phase

Flat names stay the public vocabulary: `TrainConfig(task="add2", iters=100)`, `cfg.iters`,
`dataclasses.replace(cfg, noise=0.0)` and `TrainConfig.from_dict(cfg.to_dict())` all take them.
"""

from __future__ import annotations

import json
import math
import shlex
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

from dfst.errors import DfstError
from dfst.tasks import get_task

MAX_SEED = 2**63 - 1  # torch's seeds are 64-bit

# The registries' names (dfst.data.SAMPLERS, loop.SCHEDULES, dfst.model.INITS and FORWARDS,
# objectives.LOSSES), here so that validating a config and `dfst --help` never import torch;
# tests/test_train_config.py checks that each registry has exactly these keys.
CHOICES = {
    "sampler": ("contexts", "cover", "pairs", "uniform"),
    "schedule": ("cosine", "constant", "linear"),
    "init": ("identity", "jitter", "random"),
    "loss": ("mse", "ce"),
    "forward": ("scan", "hillis", "loop"),
    "engine": ("autograd", "fused"),
    "d_rule": ("data", "expert"),
}


def setting(default: Any, help: str, *, low: int | None = None, positive: bool = False,
            flag: bool = True) -> Any:
    """A config field: its default, the `dfst train` help text, and its bound: `low` for an
    integer (>= low), `positive` for a number > 0; other numbers must be >= 0. `flag=False`: not a
    `--option` of `dfst train` (the task is its argument)."""
    return field(default=default, metadata={"help": help, "low": low, "positive": positive, "flag": flag})


@dataclass(frozen=True)
class DataConfig:
    """What is trained on: PTOs of the task's expert, sampled (or given to `train`)."""

    task: str = setting("add2", "The task.", flag=False)
    samples: int = setting(20, "Training PTOs to sample.", low=1)
    max_digits: int = setting(3, "Longest training operand, in digits.", low=1)
    seed: int = setting(0, "Seed of the data, the initialisation, the batches and the noise.", low=0)
    sampler: str = setting("contexts", "contexts (the PTOs that show the most new pairs of consecutive "
                           "observations first: sees only PTOs), cover (every expert rule first) or pairs "
                           "(every rule and pair of rules first): both read the expert's states; or uniform.")
    agent: str | None = setting(None, "Agent JSON to learn instead of the task's expert (on the task's "
                                "layout); the model is scored against the agent's own answers.")
    grow_rounds: int = setting(0, "Rounds of data growth: when no d gives an automaton that reproduces the "
                               "expert on longer held-out PTOs, add the ones where it departs to the "
                               "training PTOs and train again (0: off; 5 for a task without a recipe "
                               "of its own).", low=0)

    def __post_init__(self) -> None:
        _validate(self)
        get_task(self.task)
        if self.seed > MAX_SEED:
            raise DfstError(f"seed must be at most {MAX_SEED:,} (torch's seeds are 64-bit), got {self.seed}")


@dataclass(frozen=True)
class ModelConfig:
    """The DFST trained and its teacher-forced pass (`dfst.model.teacher_forced`)."""

    d: int | None = setting(None, "Hidden size (default: chosen by --d-rule).", low=1)
    d_rule: str = setting("data", "How d is chosen when --d is not given: data (from the PTOs' lower "
                          "bound on the states, grown until an automaton read off explains them) or "
                          "expert (the expert's state count: reads its hidden states).")
    init: str = setting("jitter", "identity (published), jitter or random.")
    normalize_h: bool = setting(True, "Divide h by its norm every step (the noise is then relative).")
    forward: str = setting("scan", "scan, hillis or loop (same values; with --normalize-h the loop runs).")

    def __post_init__(self) -> None:
        _validate(self)


@dataclass(frozen=True)
class OptimConfig:
    """Adam on the objective: iterations, learning rate and its schedule, batches, the loss."""

    iters: int = setting(4000, "Training iterations.", low=1)
    lr: float = setting(2e-2, "Peak Adam learning rate.", positive=True)
    schedule: str = setting("cosine", "cosine, constant or linear.")
    batch: int = setting(0, "Minibatch size (0 = full batch).", low=0)
    bucket: bool = setting(False, "Minibatches of samples of similar length.")
    loss: str = setting("mse", "mse (published) or ce.")
    threads: int = setting(1, "Torch threads (bit-identity needs the same number).", low=1)
    engine: str = setting("fused", "The objective's forward and backward pass: fused (one compiled "
                          "pass on the CPU; docs/research/performance.md) or autograd (torch's graph, "
                          "the same gradient; used wherever fused does not apply).")

    def __post_init__(self) -> None:
        _validate(self)


@dataclass(frozen=True)
class RegularConfig:
    """Noise on the teacher-forced states and the penalties added to the loss (dfst.train.objectives)."""

    noise: float = setting(0.03, "σ of Gaussian noise on h at every step.")
    noise_final: float | None = setting(None, "Anneal σ linearly to this.")
    l1: float = setting(0.0, "Weight of the L1 penalty on A.")
    discrete: float = setting(0.0, "Weight of the vertex penalty on h (ramped).")

    def __post_init__(self) -> None:
        _validate(self)


@dataclass(frozen=True)
class PopulationConfig:
    """Restarts trained side by side, and the automaton read off the one kept (dfst.train.restarts)."""

    restarts: int = setting(16, "Models trained side by side; the kept one is chosen on the training "
                            "PTOs (fewest extracted states with --extract).", low=1)
    extract: bool = setting(True, "Read the automaton off the states (extracted/), evaluate it too.")

    def __post_init__(self) -> None:
        _validate(self)


@dataclass(frozen=True)
class EvaluationConfig:
    """Closed-loop evaluation during training; target_digits (0 = never) stops a run once robust."""

    eval_every: int = setting(1000, "Closed-loop evaluation period (0 = at end).", low=0)
    eval_digits: tuple[int, ...] = setting((10, 100), "Comma-separated evaluation lengths.")
    eval_random: int = setting(10, "Random pairs per evaluation length.", low=0)
    target_digits: int = setting(0, "Stop once robust at this length.", low=0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "eval_digits", tuple(self.eval_digits))
        _validate(self)
        if not self.eval_digits or min(self.eval_digits) < 1:
            raise DfstError(f"eval_digits must be lengths >= 1, got {list(self.eval_digits)}")


@dataclass(frozen=True)
class LoggingConfig:
    """How often the run writes its resumable state and its metrics."""

    checkpoint_every: int = setting(1000, "Training-state period.", low=0)
    log_every: int = setting(100, "Metrics period, in iterations.", low=1)

    def __post_init__(self) -> None:
        _validate(self)


@dataclass(frozen=True)
class TuningConfig:
    """Fine-tuning, a phase after training (dfst.train.finetune, docs/research/finetune.md): the kept
    model's own weights made exact closed loop far beyond the training length. model/ gets the fine-tuned
    weights, trained/ keeps the trained ones."""

    finetune: bool = setting(False, "Fine-tune the kept model after training (on in every task's recipe): "
                             "model/ exact far beyond the training length, trained/ the weights before.")
    finetune_adam: int = setting(0, "Fine-tuning: Adam iterations on the teacher-forced states, noise "
                                 "annealed to 0.", low=0)
    finetune_plain: int = setting(0, "Fine-tuning: Adam iterations without noise.", low=0)
    finetune_lbfgs: int = setting(0, "Fine-tuning: L-BFGS iterations on the teacher-forced states.", low=0)
    finetune_damping: float = setting(1.0, "Fine-tuning: weight of the penalty on A's unused directions.")
    finetune_centres: int = setting(3000, "Fine-tuning: L-BFGS iterations (float64) on the objective at "
                                    "the centres.", low=0)
    finetune_margin: float = setting(0.5, "Fine-tuning: lead of the right readout score at each centre.",
                                     positive=True)
    finetune_frozen: int = setting(0, "Fine-tuning: L-BFGS iterations with the centres frozen "
                                   "orthonormal, before the centres phase (0: off).", low=0)

    def __post_init__(self) -> None:
        _validate(self)


GROUPS = {"data": DataConfig, "model": ModelConfig, "optim": OptimConfig, "regular": RegularConfig,
          "population": PopulationConfig, "evaluation": EvaluationConfig, "logging": LoggingConfig,
          "tuning": TuningConfig}
GROUP_OF = {f.name: group for group, cls in GROUPS.items() for f in fields(cls)}  # flat name -> group

# The order of the flat dictionary since config.json version 1 (stored results and reproduce's keys
# hold it): new fields go at the end, and the JSON of an old config never changes.
FLAT_ORDER = ("task", "samples", "max_digits", "seed", "sampler", "d", "iters", "lr", "schedule", "batch",
              "bucket", "init", "loss", "noise", "noise_final", "l1", "normalize_h", "discrete", "extract",
              "forward", "eval_every", "eval_digits", "eval_random", "target_digits", "checkpoint_every",
              "log_every", "threads", "restarts",
              "finetune", "finetune_adam", "finetune_plain", "finetune_lbfgs", "finetune_damping",
              "finetune_centres", "finetune_margin", "finetune_frozen", "agent", "engine", "d_rule",
              "grow_rounds")
# Fields added after version 1: left out of `to_dict` while at the value they had before they existed,
# so that the config.json of an old run, and every key reproduce hashes, stay byte for byte what they
# were; a stored config that lacks one had that value. For all but two that value is the default;
# `engine` was autograd until the fused engine became the default, so an old run reads as autograd.
LATER_FIELDS = FLAT_ORDER[FLAT_ORDER.index("finetune"):]
# `d_rule` was the expert's state count until d came from the data.
BEFORE_DEFAULTS = {"engine": "autograd", "d_rule": "expert"}  # later fields whose default has changed


@dataclass(frozen=True, init=False)
class TrainConfig:
    """One training run. The defaults are the recipe that works (docs/method.md): add2 on 20 PTOs of at
    most 3 digits chosen by the contexts sampler (it sees only PTOs), d from the PTOs (`d_rule`
    "data"), noise on the direction of h, 16 restarts, the automaton read off; fine-tuning is off
    here and on in each task's recipe (`dfst.train.recipes`). `PUBLISHED` lists the fields that give
    the published baseline.

    Built from groups, flat fields, or both (flat fields override the groups' values):
    `TrainConfig(iters=100)`, `TrainConfig(optim=OptimConfig(iters=100), seed=3)`.
    """

    data: DataConfig
    model: ModelConfig
    optim: OptimConfig
    regular: RegularConfig
    population: PopulationConfig
    evaluation: EvaluationConfig
    logging: LoggingConfig
    tuning: TuningConfig

    def __init__(self, data: DataConfig | None = None, model: ModelConfig | None = None,
                 optim: OptimConfig | None = None, regular: RegularConfig | None = None,
                 population: PopulationConfig | None = None, evaluation: EvaluationConfig | None = None,
                 logging: LoggingConfig | None = None, tuning: TuningConfig | None = None,
                 **flat: Any) -> None:
        given = {"data": data, "model": model, "optim": optim, "regular": regular, "population": population,
                 "evaluation": evaluation, "logging": logging, "tuning": tuning}
        unknown = sorted(set(flat) - set(GROUP_OF))
        if unknown:
            raise TypeError(f"TrainConfig has no field {unknown[0]!r} (fields: {', '.join(FLAT_ORDER)})")
        for name, cls in GROUPS.items():
            group = given[name] if given[name] is not None else cls()
            if not isinstance(group, cls):
                raise TypeError(f"TrainConfig's {name} must be a {cls.__name__}, got {type(group).__name__}")
            own = {key: value for key, value in flat.items() if GROUP_OF[key] == name}
            object.__setattr__(self, name, replace(group, **own) if own else group)

    def __getattr__(self, name: str) -> Any:
        """A flat field read through its group: `cfg.iters` is `cfg.optim.iters`."""
        group = GROUP_OF.get(name)
        if group is None:
            raise AttributeError(f"TrainConfig has no field {name!r}")
        return getattr(object.__getattribute__(self, group), name)

    def to_dict(self) -> dict:
        """The config as flat JSON-ready fields: what config.json stores and reproduce's keys hash."""
        before = before_they_existed()
        return json.loads(json.dumps({name: getattr(self, name) for name in FLAT_ORDER
                                      if name not in before or getattr(self, name) != before[name]}))

    @classmethod
    def from_dict(cls, flat: dict) -> TrainConfig:
        """The config of a flat dictionary (`to_dict`'s); a missing field takes its default, except
        one added since version 1, which takes the value it had before it existed (an old run's
        config.json lacks `engine`: it ran autograd). An unknown field is a DfstError."""
        if not isinstance(flat, dict):
            raise DfstError(f"a training config is a JSON object, got {type(flat).__name__}")
        unknown = sorted(set(flat) - set(GROUP_OF))
        if unknown:
            raise DfstError(f"unknown training config field {unknown[0]!r} (known: {', '.join(FLAT_ORDER)})")
        return cls(**(before_they_existed() | flat))


def flat_fields() -> list:
    """Every field of the schema (dataclasses.Field), group by group."""
    return [f for cls in GROUPS.values() for f in fields(cls)]


def before_they_existed() -> dict[str, Any]:
    """Each field added since version 1, with the value a config that lacks it means."""
    defaults = {f.name: default_of(f) for f in flat_fields()}
    return {name: BEFORE_DEFAULTS.get(name, defaults[name]) for name in LATER_FIELDS}


def default_of(f) -> Any:
    return f.default if f.default is not MISSING else f.default_factory()


def config_types() -> dict[str, type]:
    """Each flat field's type as an option parser takes it: int, float, str, bool or tuple (None
    allowed where the default is None)."""
    hints = {name: hint for cls in GROUPS.values() for name, hint in get_type_hints(cls).items()}
    return {name: next(t for t in (bool, int, float, str, tuple) if t is hint or t is get_origin(hint)
                       or t in get_args(hint)) for name, hint in hints.items()}


def _validate(group: object) -> None:
    """The bounds and choices that the fields of a group declare, each a one-line DfstError."""
    for f in fields(group):
        value, meta = getattr(group, f.name), f.metadata
        if f.name in CHOICES:
            if value not in CHOICES[f.name]:
                raise DfstError(f"unknown {f.name} {value!r} (known: {', '.join(CHOICES[f.name])})")
        elif meta["low"] is not None and (value is not None or f.default is not None):
            _check_int(f.name, value, meta["low"])
        elif meta["positive"]:
            if not (_is_number(value) and math.isfinite(value) and value > 0):
                raise DfstError(f"{f.name} must be a positive number, got {value}")
        elif f.type in ("float", "float | None") and value is not None and \
                not (_is_number(value) and math.isfinite(value) and value >= 0):
            raise DfstError(f"{f.name} must be a number >= 0, got {value}")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_int(name: str, value: object, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise DfstError(f"{name} must be an integer >= {low}, got {value!r}")


# ----------------------------------------------------------------------------- the command line


def option_name(name: str) -> str:
    """The `dfst train` option of a field: max_digits -> --max-digits."""
    return "--" + name.replace("_", "-")


def format_value(value: Any) -> str:
    """A field's value as `dfst train` takes it (tuples comma-separated)."""
    return ",".join(map(str, value)) if isinstance(value, tuple) else str(value)


def command_line(cfg: TrainConfig, out: str | Path, data: str | Path | None = None) -> str:
    """The complete `dfst train` command of the run, defaults included, to reproduce it. With `data`
    (the dataset file), --data replaces the sampling options it decides (samples, max_digits);
    --forward is left out while h is normalised (it has no effect then, and `configure` refuses it);
    a task registered from a tasks file keeps its --tasks-file."""
    from dfst.tasks.user import dfst_command

    args = [*shlex.split(dfst_command(cfg.task)), "train", cfg.task, "--out", str(out)]
    if data is not None:
        args += ["--data", str(data)]
    for f in flat_fields():
        value = getattr(cfg, f.name)
        if not f.metadata["flag"] or value is None or (data is not None and f.name in DATA_DECIDES):
            continue
        if f.name == "forward" and cfg.normalize_h:  # ignored then (the loop runs), and refused if given
            continue
        if isinstance(value, bool):
            args.append(option_name(f.name) if value else "--no-" + f.name.replace("_", "-"))
        else:
            args += [option_name(f.name), format_value(value)]
    return shlex.join(args)


DATA_DECIDES = ("samples", "max_digits", "sampler")  # what a dataset file fixes: no option may set them
