"""Input/output pairs for the baselines that learn from examples (Neural GPU, NTM).

Two encodings of an operand pair as a sequence of symbols, digits least significant first:
  - "concat" (the Neural GPU paper's): a, an operator symbol, b; symbols 0..base-1 are digits,
    `base` is the operator, `base + 1` is padding. Length len(a) + 1 + len(b).
  - "aligned": position i holds the pair (a_i, b_i), each digit or "none" (= base), as one symbol
    a_i + (base + 1) * b_i; the operands are aligned as on the DFST's grid. Length
    max(len a, len b) + 1 for addition (room for the carry), len a + len b for multiplication.
Targets are the answer's digits, least significant first, then zeros to the input length: every output
cell is one digit of the integer, so a model never has to decide where the number ends (leading zeros
are stripped when decoding, which also makes 0 + 0 a row of zeros like any other answer).
Sampling draws operand lengths from a curriculum and digits from a seeded numpy generator.

The Neural GPU and the NTM share the rest of their contract here too: the curriculum's batches, a
batched predictor, the evaluation ladder and their Result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import torch
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from dfst.baselines.common import Predictor, count_params, evaluate_predictor, power_growth
from dfst.errors import DfstError
from dfst.results import Result
from dfst.tasks.arith import DIGIT_CHARS, canonical, digits_to_text
from dfst.tasks.base import Instance, Task, random_operand

LAYOUTS = ("concat", "aligned")


def input_symbols(base: int, layout: str) -> int:
    """Size of the input alphabet (padding included)."""
    return base + 2 if layout == "concat" else (base + 1) ** 2 + 1


def output_symbols(base: int) -> int:
    """Digits only: targets are zero-padded."""
    return base


def check_layout(layout: str) -> str:
    if layout not in LAYOUTS:
        raise DfstError(f"unknown layout {layout!r} (known: {', '.join(LAYOUTS)})")
    return layout


def _lsb_digits(text: str) -> list[int]:
    return [DIGIT_CHARS.index(ch) for ch in reversed(text)]


def encoded_length(task: Task, inst: Instance, layout: str) -> int:
    """Sequence length one instance needs (input and output share it)."""
    la, lb = len(inst.a), len(inst.b)
    if layout == "concat":
        return la + 1 + lb
    return la + lb if task.operation == "mult" else max(la, lb) + 1


def encode_input(task: Task, inst: Instance, layout: str, length: int) -> list[int]:
    """The symbols of one instance, padded to `length`."""
    a, b, base = _lsb_digits(inst.a), _lsb_digits(inst.b), task.base
    if layout == "concat":
        seq, pad = a + [base] + b, base + 1
    else:
        none, span = base, max(len(a), len(b))
        a, b = a + [none] * (span - len(a)), b + [none] * (span - len(b))
        seq, pad = [x + (base + 1) * y for x, y in zip(a, b)], (base + 1) ** 2
    return seq + [pad] * (length - len(seq))


def encode_target(task: Task, inst: Instance, length: int) -> list[int]:
    """The answer's digits, least significant first, padded with zeros to `length`."""
    answer = _lsb_digits(task.expected(inst))
    return answer + [0] * (length - len(answer))


def encode_batch(task: Task, instances: list[Instance], layout: str,
                 length: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets as (B, n) int64 tensors; n = the longest encoding unless given."""
    n = max(encoded_length(task, inst, layout) for inst in instances)
    n = max(n, length or 0)
    x = torch.tensor([encode_input(task, inst, layout, n) for inst in instances], dtype=torch.long)
    y = torch.tensor([encode_target(task, inst, n) for inst in instances], dtype=torch.long)
    return x, y  # (B, n), (B, n)


def decode_answer(symbols: list[int] | np.ndarray, base: int) -> str | None:
    """Digits (least significant first) up to the first non-digit, as a canonical string."""
    digits = []
    for s in symbols:
        if s >= base:
            break
        digits.append(int(s))
    if not digits:
        return None
    return canonical(digits_to_text(np.array(digits[::-1])))


def decode_batch(predicted: torch.Tensor, base: int) -> list[str | None]:
    """(B, n) predicted symbols -> one answer per row."""
    return [decode_answer(row, base) for row in predicted.cpu().numpy()]


@dataclass
class PairSampler:
    """Seeded operand pairs under a length curriculum; counts the distinct pairs it has drawn.

    Each operand has a length drawn from 1..max_digits (half the time exactly max_digits, so the
    longest lengths are well represented), a non-zero leading digit (as `random_operand`), except with
    probability `zero_pad` where its digits are uniform (leading zeros, as some hard instances have).
    """

    task: Task
    seed: int
    zero_pad: float = 0.1

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)
        self.seen: set[tuple[str, str]] = set()

    @property
    def distinct(self) -> int:
        return len(self.seen)

    def operand(self, max_digits: int) -> str:
        n = max_digits if self.rng.random() < 0.5 else int(self.rng.integers(1, max_digits + 1))
        if self.rng.random() < self.zero_pad:
            return digits_to_text(self.rng.integers(0, self.task.base, size=n))
        return random_operand(self.rng, n, self.task.base)

    def draw(self, count: int, max_digits: int) -> list[Instance]:
        pairs = [Instance(self.operand(max_digits), self.operand(max_digits)) for _ in range(count)]
        self.seen.update((p.a, p.b) for p in pairs)
        return pairs


def curriculum_digits(step: int, steps: int, start: int, end: int, warm: float = 0.6) -> int:
    """Largest operand length at `step`: grows linearly from `start` to `end` over the first `warm`
    fraction of training, then stays at `end` (a pure function of the step, so runs resume exactly)."""
    if steps <= 0 or warm <= 0:
        return end
    frac = min(1.0, step / (warm * steps))
    return int(round(start + frac * (end - start)))


def curriculum_batch(sampler: PairSampler, config: dict, step: int) -> tuple[list[Instance], int]:
    """The training pairs of `step` under `config`'s curriculum (keys steps, start_digits, max_digits,
    curriculum, batch), and the longest operand length they may have."""
    digits = curriculum_digits(step, config["steps"], config["start_digits"], config["max_digits"],
                               config["curriculum"])
    return sampler.draw(config["batch"], digits), digits


def batched_predictor(model: torch.nn.Module, base: int, batch: int,
                      answer_logits: Callable[[list[Instance]], torch.Tensor]) -> Predictor:
    """A `Predictor` for a sequence model: eval mode, no_grad, `batch` instances at a time to bound
    memory; `answer_logits(instances)` gives the (B, n, base) logits of the answers' digits."""
    def predict(instances: list[Instance]) -> list[str | None]:
        model.eval()
        answers: list[str | None] = []
        with torch.no_grad():
            for i in range(0, len(instances), batch):
                answers += decode_batch(answer_logits(instances[i:i + batch]).argmax(-1), base)
        return answers
    return predict


def score_ladder(task: Task, predict: Predictor, config: dict, trained_on: set[tuple[str, str]],
                 cost_power: int, on_level=None) -> dict:
    """`evaluate_predictor` on `config`'s ladder (eval_digits) with eval_random random pairs per length,
    seed 0, none of them a pair `trained_on` (`PairSampler.seen`), stopping before a length predicted (its
    cost ~ n ** `cost_power`) to overrun eval_seconds; `on_level(scores so far)` after each length,
    so a long ladder saves what it has."""
    digits = parse_digits(config["eval_digits"])
    return evaluate_predictor(task, predict, digits, random=config["eval_random"], on_level=on_level,
                              trained_on=trained_on, time_budget=config["eval_seconds"],
                              growth=power_growth(cost_power))


def io_result(system: str, task: Task, seed: int, model: torch.nn.Module, config: dict, info: dict,
              scores: dict, notes: str) -> Result:
    """The Result of an I/O-pair baseline: `info` from its training (samples, train_seconds, hardware:
    `common.hardware()` read while training's thread count held), `scores`
    from `score_ladder` (the instance set's hash in details once every length is scored); its config
    is the merged configuration plus the model's (`model.cfg`)."""
    return Result(system=system, task=task.name, seed=seed, samples=info["samples"],
                  params=count_params(model), max_train_digits=config["max_digits"],
                  robust_lg=scores["robust_lg"], probabilistic_lg=scores["probabilistic_lg"],
                  train_seconds=info["train_seconds"], hardware=info["hardware"], levels=scores["levels"],
                  config={**config, **asdict(model.cfg)}, notes=notes, details=protocol_details(scores))


def protocol_details(scores: dict) -> dict:
    """A Result's details naming the instance set scored (`evaluate_predictor`'s "protocol") and why
    the ladder stopped, once known (a partial result saved after a length has neither)."""
    return {key: scores[key] for key in ("protocol", "stopped_by") if key in scores}


def parse_digits(text: str) -> tuple[int, ...]:
    """The evaluation ladder, given as comma-separated lengths ("20,40,100")."""
    try:
        values = tuple(int(v.replace("_", "")) for v in str(text).split(",") if v.strip())
    except ValueError:
        raise DfstError(f"eval_digits {text!r} is not a comma-separated list of lengths") from None
    if not values or min(values) < 1:
        raise DfstError(f"eval_digits {text!r} needs one or more lengths >= 1")
    return values


def progress_bar(enabled: bool) -> Progress:
    """A rich bar on stderr (stdout stays clean for --json), off when `enabled` is False."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    console=Console(stderr=True), transient=True, disable=not enabled)


def add_gradient_noise(model: torch.nn.Module, scale: float, step: int) -> None:
    """Gaussian noise on the gradients, variance scale / (1 + step)^0.55 (Neelakantan et al. 2015, as the
    Neural GPU paper uses); drawn from torch's seeded generator, so runs stay reproducible."""
    if scale <= 0:
        return
    sigma = (scale / (1 + step) ** 0.55) ** 0.5
    for p in model.parameters():
        if p.grad is not None:
            p.grad.add_(torch.randn_like(p.grad) * sigma)
