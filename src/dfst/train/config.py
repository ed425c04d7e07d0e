"""The training configuration: one schema, grouped, validated, written once (and free of torch).

A `TrainConfig` is seven small frozen groups; each field is declared once, with its default, its
bounds or choices and its `dfst train` help text (`setting`). Everything else reads that declaration:
validation, the flat dictionary that run directories and stored results keep (`to_dict`), the
options of `dfst train` (`dfst.cli.training`) and the command line that reproduces a run
(`command_line`).

    data        task, samples, max_digits, seed, sampler        what is trained on
    model       d, init, normalize_h, forward                   the model and its teacher-forced pass
    optim       iters, lr, schedule, batch, bucket, loss, threads
    regular     noise, noise_final, l1, discrete                noise on h and penalties
    population  restarts, extract                               restarts side by side, the one kept
    evaluation  eval_every, eval_digits, eval_random, target_digits
    logging     checkpoint_every, log_every

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
    "sampler": ("cover", "pairs", "uniform"),
    "schedule": ("cosine", "constant", "linear"),
    "init": ("identity", "jitter", "random"),
    "loss": ("mse", "ce"),
    "forward": ("scan", "hillis", "loop"),
    "engine": ("autograd", "fused"),
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
    sampler: str = setting("cover", "cover (every expert rule first), pairs (every rule and pair of "
                           "consecutive rules first) or uniform.")
    agent: str | None = setting(None, "Agent JSON to learn instead of the task's expert (on the task's "
                                "layout); the model is scored against the agent's own answers.")

    def __post_init__(self) -> None:
        _validate(self)
        get_task(self.task)
        if self.seed > MAX_SEED:
            raise DfstError(f"seed must be at most {MAX_SEED:,} (torch's seeds are 64-bit), got {self.seed}")


@dataclass(frozen=True)
class ModelConfig:
    """The DFST trained and its teacher-forced pass (`dfst.model.teacher_forced`)."""

    d: int | None = setting(None, "Hidden size (default: the expert's number of states).", low=1)
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
    engine: str = setting("autograd", "The objective's forward and backward pass: autograd (torch's "
                          "graph) or fused (one compiled pass, the same gradient; docs/performance.md).")

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
    """Fine-tuning, a phase after training (dfst.train.finetune, docs/finetune.md): the kept model's own
    weights made exact closed loop far beyond the training length. model/ gets the fine-tuned
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
              "finetune_centres", "finetune_margin", "finetune_frozen", "agent", "engine")
# Fields added after version 1: left out of `to_dict` while at their default, so that the config.json of
# an old run, and every key reproduce hashes, stay byte for byte what they were.
LATER_FIELDS = FLAT_ORDER[FLAT_ORDER.index("finetune"):]


@dataclass(frozen=True, init=False)
class TrainConfig:
    """One training run. The defaults are the recipe that works (docs/training.md): add2 on 20 covering
    samples of at most 3 digits, noise on the direction of h, 16 restarts, the automaton read off;
    `PUBLISHED` lists the fields that give the published baseline.

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
        defaults = {f.name: default_of(f) for f in flat_fields()}
        return json.loads(json.dumps({name: getattr(self, name) for name in FLAT_ORDER
                                      if name not in LATER_FIELDS or getattr(self, name) != defaults[name]}))

    @classmethod
    def from_dict(cls, flat: dict) -> TrainConfig:
        """The config of a flat dictionary (`to_dict`'s); a missing field takes its default, an unknown
        one is a DfstError."""
        if not isinstance(flat, dict):
            raise DfstError(f"a training config is a JSON object, got {type(flat).__name__}")
        unknown = sorted(set(flat) - set(GROUP_OF))
        if unknown:
            raise DfstError(f"unknown training config field {unknown[0]!r} (known: {', '.join(FLAT_ORDER)})")
        return cls(**flat)


def flat_fields() -> list:
    """Every field of the schema (dataclasses.Field), group by group."""
    return [f for cls in GROUPS.values() for f in fields(cls)]


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


# ----------------------------------------------------------------------------- recipes and data files


# The published recipe as far as it is known (REFERENCE.md §3): identity init, lr and iterations not
# published, no noise, one run, the trained model used as it is: `replace(cfg, **PUBLISHED)`, or
# `dfst train --published`.
PUBLISHED = {"init": "identity", "normalize_h": False, "noise": 0.0, "restarts": 1, "extract": False,
             "finetune": False}


# The recipe per task (docs/training.md): TrainConfig's defaults are add2's, the other tasks override
# the sample budget and the effort. `dfst train TASK` starts from RECIPES[TASK] (see `configure`);
# dfst.recipes re-exports these names (they live here so that the train layer reads them).
DEFAULT = TrainConfig(eval_every=0)  # dfst reproduce evaluates each run itself, after training

# The multiplications: long PTOs, so weaker noise (at σ = 0.03 even the expert's loss is 0.115 on
# mult2) and a cover of rule pairs (a rule cover never shows the operand 0); docs/training.md section 9
MULT = replace(DEFAULT, restarts=4, batch=64, bucket=True, sampler="pairs", noise=0.01, iters=8000)

RECIPES: dict[str, TrainConfig] = {
    "add2": replace(DEFAULT, task="add2", samples=20, max_digits=3, finetune=True),
    "add10": replace(DEFAULT, task="add10", samples=225, max_digits=3, restarts=8, finetune=True),
    # 4,000 iterations, not MULT's 8,000: the automaton read off is exact by iteration 2,000-3,000 and the
    # fine-tuning phase needs nothing more (docs/finetune.md); half the CPU
    "mult2": replace(MULT, task="mult2", samples=750, max_digits=5, iters=4000, finetune=True),
    # samples of at most 3 digits: mult10's PTOs reach 1,038 steps at 5 digits (522 at 3), and 3 digits
    # already show every rule and pair of rules (docs/training.md section 10)
    # 4,000 iterations as mult2; its 34 blocks in d = 35 need the centres started orthonormal and held
    # there while A, B, C and h0 fit them (a least-squares problem), or the joint phase stalls
    # (docs/finetune.md)
    "mult10": replace(MULT, task="mult10", samples=400, max_digits=3, iters=4000, finetune=True,
                      finetune_frozen=1000),
    # Issue 17's tasks (README "More tasks: trained"): add2's recipe where it trains them; more samples,
    # or pairs of rules, where the automaton read off was not yet the expert's (sub2: 20 samples gave a
    # 9-state automaton that fails at 10 digits; compare2: 40 covered samples one that fails at 300)
    **{task: replace(DEFAULT, task=task, samples=20, max_digits=3, finetune=True)
       for task in ("parity2", "sort2")},
    "dyck": replace(DEFAULT, task="dyck", samples=20, max_digits=6, finetune=True),  # nesting needs length
    "reverse2": replace(DEFAULT, task="reverse2", samples=30, max_digits=5, finetune=True),  # 4 rules need 4+
    "sub2": replace(DEFAULT, task="sub2", samples=40, sampler="pairs", finetune=True),
    "compare2": replace(DEFAULT, task="compare2", samples=80, sampler="pairs", finetune=True),
    "sub10": replace(DEFAULT, task="sub10", samples=225, restarts=8, sampler="pairs", finetune=True),
    # the L-BFGS phase with the centres frozen (mult10's) took the fine-tuned residual from 0.35 to 1e-7
    "compare10": replace(DEFAULT, task="compare10", samples=400, restarts=8, sampler="pairs", finetune=True,
                         finetune_frozen=1000),
    "mult10x1": replace(MULT, task="mult10x1", samples=400, max_digits=3, iters=4000, finetune=True,
                        finetune_frozen=1000),  # mult10's
    # the expert that divides on the grid (tasks/division.py): long PTOs as in multiplication, so
    # MULT's noise and pair cover; 2-digit samples already show every rule; one restart was measured
    "div10x1": replace(MULT, task="div10x1", samples=200, max_digits=2, restarts=1, iters=4000, finetune=True,
                       finetune_frozen=1000),
}

# What `dfst train` takes from a recipe: what is trained, not how the run is watched (the evaluation
# and logging groups keep TrainConfig's defaults: a recipe's eval_every=0 is dfst reproduce's choice).
WATCHING = ("evaluation", "logging")


def recipe_fields(task: str) -> dict[str, Any] | None:
    """The fields `dfst train TASK` takes from TASK's recipe, where it differs from TrainConfig's
    defaults ({"finetune": True} for add2); None for a task without a recipe."""
    if task not in RECIPES:
        return None
    base, cfg = TrainConfig(), RECIPES[task]
    return {name: getattr(cfg, name) for name in FLAT_ORDER if name != "task"
            and GROUP_OF[name] not in WATCHING and getattr(cfg, name) != getattr(base, name)}


def configure(task: str, values: dict, given: set[str] | None = None, *, published: bool = False,
              operands: list | None = None, sampling_rule: str | None = None
              ) -> tuple[TrainConfig, dict[str, dict]]:
    """The config of a `dfst train` command: `task`'s recipe where it has one (`recipe_fields`; add2's,
    the general one, otherwise), the published recipe (`published`) and a dataset file's training set
    (`operands`, drawn by `sampling_rule`) on top, then the options the user gave. `values` are the flat
    values of the options, `given` names the fields the user set (None: all of `values`); the others are
    the options' defaults and are ignored. --published and --data override the task's recipe silently, but
    a flag the user gave never: a value of theirs that differs is a DfstError naming the option, and so is
    --forward scan/hillis while h is normalised (the loop runs then).

    Returns the config and what each source set, in the order applied, a later one winning:
    {"recipe": {task: fields}, "--published": {...}, "--data": {...}, "flags": {...}} (the keys that
    apply; "flags" are the options the user gave)."""
    given = set(values) if given is None else set(given)
    flags = {name: values[name] for name in values if name in given}
    # a task without a recipe of its own (your own task: docs/tasks.md) starts from add2's, the
    # general one (its fine-tuning phase on)
    owner = task if task in RECIPES else "add2"
    from_recipe = recipe_fields(owner)
    set_by: dict[str, dict] = {} if from_recipe is None else {"recipe": {owner: from_recipe}}
    cfg = TrainConfig(task=task, **(from_recipe or {}) | flags)
    if published:
        cfg, set_by["--published"] = with_fields(cfg, PUBLISHED, given, "--published"), PUBLISHED
    if operands is not None:
        cfg = with_dataset(cfg, operands, given, "--data", sampling_rule)
        set_by["--data"] = {name: getattr(cfg, name) for name in DATA_DECIDES}
    if flags:
        set_by["flags"] = {name: getattr(cfg, name) for name in flags}
    if "forward" in given and cfg.normalize_h and cfg.forward != "loop":
        raise DfstError(f"--forward {cfg.forward} has no effect while h is normalised (the loop runs); "
                        "add --no-normalize-h, or drop --forward")
    return cfg, set_by


DATA_DECIDES = ("samples", "max_digits", "sampler")  # what a dataset file fixes: no option may set them


def with_fields(cfg: TrainConfig, values: dict, given: set[str], source: str) -> TrainConfig:
    """`cfg` with `values` (flat fields that `source`, e.g. --published, sets), refusing to override
    a field the user gave (`given`: flat names) with another value: a DfstError naming its option."""
    clash = [name for name in values if name in given and getattr(cfg, name) != values[name]]
    if clash:
        name = clash[0]
        raise DfstError(f"{option_name(name)} conflicts with {source}, which sets "
                        f"{name}={format_value(values[name])} (drop one of them)")
    return replace(cfg, **values)


def with_dataset(cfg: TrainConfig, operands: list, given: set[str], source: str,
                 sampling_rule: str | None = None) -> TrainConfig:
    """`cfg` training on a dataset file's `operands`: samples, max_digits and the sampler are the
    file's (the sampler its `sampling_rule` names, so that config.json says how the PTOs were
    chosen); an option that would choose the training set (--samples or --max-digits otherwise than
    the file, --sampler at all: the file is not sampled) is a DfstError naming it."""
    if "sampler" in given:
        raise DfstError(f"--sampler conflicts with {source}: the file is the training set, "
                        "nothing is sampled")
    values = {"samples": len(operands), "max_digits": max(len(x) for pair in operands for x in pair)}
    cfg = replace(cfg, sampler=SAMPLER_OF_RULE.get(sampling_rule, cfg.sampler))
    return with_fields(cfg, values, given, source)


# A dataset file's sampling rule (its meta.json) -> the sampler that draws by it (dfst.data.SAMPLERS)
SAMPLER_OF_RULE = {"uniform-lengths": "uniform", "cover": "cover", "pairs": "pairs"}
